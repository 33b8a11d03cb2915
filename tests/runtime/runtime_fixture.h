// The runtime suites' fixture: the catalog's stores on every backend, a processor over them
// (or over wrappers of them), and the reservation subscription caught up on demand.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catalog.h"
#include "support/temp_dir.h"
#include "wow/command_processor.h"
#include "wow/subscription.h"
#include "wow/timer_store.h"
#ifdef WOW_HAVE_SQLITE
#include "wow/sqlite.h"
#endif

namespace wow::runtime_test {

using std::chrono::milliseconds;

struct Stores {
  std::shared_ptr<EventLog> log;
  std::shared_ptr<ReservationStore> reservations;
  std::shared_ptr<TimerStore> timers;
};

struct RuntimeBackend {
  std::string name;
  std::function<Stores(const testing_support::TempDir&, std::shared_ptr<const Clock>)> make;
  // Whether the log's append itself confirms the stream's keys, in its own transaction (SQLite).
  bool append_confirms_keys = false;
};

inline void PrintTo(const RuntimeBackend& backend, std::ostream* out) { *out << backend.name; }

inline std::vector<RuntimeBackend> Backends() {
  std::vector<RuntimeBackend> backends;
  backends.push_back(
      {"Memory", [](const testing_support::TempDir&, std::shared_ptr<const Clock> clock) {
         return Stores{NewMemoryEventLog(std::string(eshop::kContext), clock),
                       NewMemoryReservationStore(clock),
                       NewMemoryTimerStore(std::string(eshop::kContext), 4)};
       }});
#ifdef WOW_HAVE_SQLITE
  backends.push_back({"Sqlite",
                      [](const testing_support::TempDir& dir, std::shared_ptr<const Clock> clock) {
                        auto db = OpenSqliteDatabase(dir.File("runtime.db"));
                        return Stores{NewSqliteEventLog(db, std::string(eshop::kContext), clock),
                                      NewSqliteReservationStore(db, clock),
                                      NewSqliteTimerStore(db, std::string(eshop::kContext), 4)};
                      },
                      /*append_confirms_keys=*/true});
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
    stores_ = GetParam().make(dir_, clock_);
    stores_.log->Create(4);
  }

  // A processor over `log` and `reservations` (the test's stores unless a wrapper is given).
  std::unique_ptr<CommandProcessor> Processor(
      std::shared_ptr<EventLog> log = nullptr,
      std::shared_ptr<ReservationStore> reservations = nullptr) {
    auto processor = std::make_unique<CommandProcessor>(
        log ? log : stores_.log, reservations ? reservations : stores_.reservations, clock_,
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
    SubscriptionRunner runner(stores_.log,
                              {NewReservationSubscription(stores_.reservations, stores_.log)},
                              SubscriptionRunnerOptions{.node = "test-node"});
    return runner.CatchUp();
  }

  testing_support::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  Stores stores_;
};

}  // namespace wow::runtime_test
