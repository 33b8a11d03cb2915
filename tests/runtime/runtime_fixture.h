// The runtime suites' fixture: the catalog's stores on every backend, a processor over them
// (or over wrappers of them), and the reservation subscription caught up on demand.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog.h"
#include "support/temp_dir.h"
#ifdef WOW_HAVE_MONGO
#include "support/mongo_test_deployment.h"
#endif
#include "wow/command_processor.h"
#include "wow/read_model.h"
#include "wow/store_set.h"
#include "wow/subscription.h"
#include "wow/timer_store.h"

namespace wow::runtime_test {

using std::chrono::milliseconds;

struct Stores {
  std::shared_ptr<EventLog> log;
  std::shared_ptr<ReservationStore> reservations;
  std::shared_ptr<TimerStore> timers;
};

// A backend: its name and the store URI of a test's stores in `dir`.
struct RuntimeBackend {
  std::string name;
  std::function<std::string(const testing_support::TempDir& dir)> uri;
  // Whether the log's append itself confirms the stream's keys, in its own transaction (SQLite)
  // or under its locks (memory:).
  bool append_confirms_keys = false;
  // Whether `uri` is ignored for a memory log and memory reservation store made apart (the public
  // NewMemoryEventLog and NewMemoryReservationStore): a set whose processor confirms the keys
  // after the append and whose reservation subscription repairs them.
  bool separate_memory_stores = false;
  // Whether the set's reservations are replaced by MongoDB's, on the MongoDB test server (a test
  // double), in a database of the test's own: MongoDB reservations beside another backend's log.
  bool mongo_reservations = false;
  // Whether `uri` is ignored for the MongoDB test server's, in a database of the test's own: the
  // three stores on MongoDB (OpenStores of a mongodb:// URI).
  bool mongo_stores = false;
};

inline void PrintTo(const RuntimeBackend& backend, std::ostream* out) { *out << backend.name; }

inline std::vector<RuntimeBackend> Backends() {
  std::vector<RuntimeBackend> backends;
  backends.push_back({"Memory", [](const testing_support::TempDir&) { return "memory:"; },
                      /*append_confirms_keys=*/true});
  backends.push_back({"MemorySeparateStores",
                      [](const testing_support::TempDir&) { return "memory:"; },
                      /*append_confirms_keys=*/false, /*separate_memory_stores=*/true});
#ifdef WOW_HAVE_SQLITE
  backends.push_back(
      {"Sqlite",
       [](const testing_support::TempDir& dir) { return "sqlite:" + dir.File("runtime.db"); },
       /*append_confirms_keys=*/true});
#endif
#ifdef WOW_HAVE_MONGO
  backends.push_back({"MemoryLogMongoReservations",
                      [](const testing_support::TempDir&) { return "memory:"; },
                      /*append_confirms_keys=*/false, /*separate_memory_stores=*/true,
                      /*mongo_reservations=*/true});
  backends.push_back({"Mongo", [](const testing_support::TempDir&) { return ""; },
                      /*append_confirms_keys=*/false, /*separate_memory_stores=*/false,
                      /*mongo_reservations=*/false, /*mongo_stores=*/true});
#endif
  return backends;
}

inline AggregateRef Brand(const std::string& id, const std::string& tenant = "t1") {
  return {std::string(eshop::kContext), "brand", tenant, id};
}

inline ReservationScope BrandNames(const std::string& tenant = "t1") {
  return {std::string(eshop::kContext), "brand", tenant, std::string(eshop::kBrandNames)};
}

constexpr milliseconds kTtl{30'000};

class Runtime : public ::testing::TestWithParam<RuntimeBackend> {
 protected:
  void SetUp() override {
    StoreSetOptions options;
    options.clock = clock_;
    options.partitions = 4;
    std::string uri = GetParam().uri(dir_);
#ifdef WOW_HAVE_MONGO
    if (GetParam().mongo_reservations || GetParam().mongo_stores) {
      if (auto reason = testing_support::MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
    }
    if (GetParam().mongo_stores) {
      uri = testing_support::FreshMongoTestServerUri();
    }
#endif
    if (GetParam().separate_memory_stores) {
      const std::string context(eshop::kContext);
      std::shared_ptr<EventLog> log = NewMemoryEventLog(context, clock_);
      log->Create(options.partitions);
      set_.emplace(StoreSet::Parts{uri, context, clock_, log, NewMemoryReservationStore(clock_),
                                   NewMemoryTimerStore(context, options.partitions), false,
                                   nullptr, NewMemoryReadModelStore()});
    } else {
      set_.emplace(OpenStores(uri, std::string(eshop::kContext), options));
    }
#ifdef WOW_HAVE_MONGO
    if (GetParam().mongo_reservations) {
      auto deployment = testing_support::FreshMongoDeployment(
          testing_support::SharedMongoTestServer().uri());
      set_.emplace(set_->With(nullptr, NewMongoReservationStore(deployment, clock_)));
    }
#endif
    ASSERT_EQ(set_->appends_confirm_keys(), GetParam().append_confirms_keys);
    stores_ = Stores{set_->log(), set_->reservations(), set_->timers()};
  }

  // A processor over the test's store set, with `log` and `reservations` in place of its own
  // when given (wrappers of them).
  std::unique_ptr<CommandProcessor> Processor(
      std::shared_ptr<EventLog> log = nullptr,
      std::shared_ptr<ReservationStore> reservations = nullptr) {
    auto processor = std::make_unique<CommandProcessor>(
        set_->With(log, reservations),
        CommandProcessorOptions{.reservation_ttl = kTtl, .max_attempts = 8, .workers = 4});
    processor->Register(eshop::BrandType());
    processor->Register(eshop::CategoryType());
    return processor;
  }

  std::optional<Reservation> Key(const std::string& key) {
    return stores_.reservations->Find(BrandNames(), key);
  }

  // The reservation subscription, caught up with the log from its checkpoint, as one node: each
  // call delivers what the log gained since the last.
  int CatchUpReservations() {
    SubscriptionRunnerOptions options;
    options.node = "test-node";
    SubscriptionRunner runner(
        stores_.log, {NewReservationSubscription(stores_.reservations, stores_.log)}, options);
    return runner.CatchUp();
  }

  testing_support::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::optional<StoreSet> set_;
  Stores stores_;
};

}  // namespace wow::runtime_test
