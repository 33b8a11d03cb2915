// The backends the contract suites run against. A backend is a name and factories; each backend's
// file (memory_backend_test.cc, sqlite_backend_test.cc, ...) instantiates every suite with its own
// factories, so the suites run unchanged over every backend (after RocksDB's env_basic_test).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "wow/event_log.h"
#include "wow/read_model.h"
#include "wow/reservation_store.h"
#include "wow/timer_store.h"

namespace wow {

// Prints a reservation in a failed expectation (found by gtest through ADL).
inline void PrintTo(const Reservation& r, std::ostream* out) {
  *out << "{key: \"" << r.key << "\", owner: " << r.owner
       << ", state: " << (r.state == ReservationState::kPending ? "pending" : "confirmed")
       << ", holds: {";
  const char* separator = "";
  for (const std::string& hold : r.holds) {
    *out << separator << hold;
    separator = ", ";
  }
  *out << "}, expires_at: " << r.expires_at << ", version: " << r.version << "}";
}

}  // namespace wow

namespace wow::contract {

// What a factory may use: a clock the test controls and a directory that lives as long as the
// test (removed after it).
struct BackendEnv {
  std::shared_ptr<ManualClock> clock;
  const testing_support::TempDir* dir;
};

struct Backend {
  std::string name;
  std::function<std::unique_ptr<ReservationStore>(const BackendEnv&)> reservations;
  // The log of `context`, not yet created.
  std::function<std::unique_ptr<EventLog>(const BackendEnv&, const std::string& context)> log;
  // The timers of `context`, whose log has `partitions` partitions.
  std::function<std::unique_ptr<TimerStore>(const BackendEnv&, const std::string& context,
                                            int partitions)>
      timers;
  // The read models of `context` and its log (not yet created), on one database, so a
  // transactional store's checkpoints are the log's. Unset: the backend keeps no read models.
  struct ReadModels {
    std::unique_ptr<EventLog> log;
    std::unique_ptr<ReadModelStore> rows;
  };
  std::function<ReadModels(const BackendEnv&, const std::string& context)> read_models;
  // The share, in percent, of the suites' heaviest loads (the concurrent appends) this backend
  // runs: the MongoDB test server, a test double in one Node.js process, runs a tenth.
  int load_percent = 100;
  // A log of `context` (not yet created) and a reservation store whose appends confirm and
  // release their streams' keys in it within the append (StoreSet::appends_confirm_keys). Unset:
  // the backend has no such pair.
  struct KeyConfirmingLog {
    std::shared_ptr<EventLog> log;
    std::shared_ptr<ReservationStore> reservations;
  };
  std::function<KeyConfirmingLog(const BackendEnv&, const std::string& context)>
      key_confirming_log;
};

inline std::ostream& operator<<(std::ostream& out, const Backend& backend) {
  return out << backend.name;
}

// For INSTANTIATE_TEST_SUITE_P's name generator.
struct BackendName {
  std::string operator()(const ::testing::TestParamInfo<Backend>& info) const {
    return info.param.name;
  }
};

// The fixtures of the suites: a fresh store per test, on a ManualClock and a TempDir.
// A backend whose factory returns nullptr (a server that is not configured) skips the test.
template <typename Store>
class ContractTest : public ::testing::TestWithParam<Backend> {
 protected:
  BackendEnv env() const { return {clock_, &dir_}; }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  testing_support::TempDir dir_;
};

class ReservationStoreContract : public ContractTest<ReservationStore> {
 protected:
  void SetUp() override {
    store_ = GetParam().reservations(env());
    if (!store_) GTEST_SKIP() << GetParam().name << " is not configured";
  }
  std::unique_ptr<ReservationStore> store_;
};

// The model-based test of reservation stores (reservation_model_test.cc): it opens a fresh store
// per seed, so the fixture opens none.
class ReservationStoreModel : public ContractTest<ReservationStore> {};

class EventLogContract : public ContractTest<EventLog> {
 protected:
  static constexpr const char* kContext = "contract";
  static constexpr int kPartitions = 4;
  void SetUp() override {
    log_ = GetParam().log(env(), kContext);
    if (!log_) GTEST_SKIP() << GetParam().name << " is not configured";
  }
  std::unique_ptr<EventLog> log_;
};

class TimerStoreContract : public ContractTest<TimerStore> {
 protected:
  static constexpr const char* kContext = "contract";
  static constexpr int kPartitions = 4;
  void SetUp() override {
    timers_ = GetParam().timers(env(), kContext, kPartitions);
    if (!timers_) GTEST_SKIP() << GetParam().name << " is not configured";
  }
  std::unique_ptr<TimerStore> timers_;
};

class ReadModelStoreContract : public ContractTest<ReadModelStore> {
 protected:
  static constexpr const char* kContext = "contract";
  static constexpr int kPartitions = 2;
  void SetUp() override {
    Backend::ReadModels stores = GetParam().read_models(env(), kContext);
    if (!stores.rows) GTEST_SKIP() << GetParam().name << " is not configured";
    log_ = std::move(stores.log);
    rows_ = std::move(stores.rows);
    log_->Create(kPartitions);
  }
  std::unique_ptr<EventLog> log_;
  std::unique_ptr<ReadModelStore> rows_;
};

// The suite of a log whose appends confirm their keys (key_confirming_log_contract.cc).
class KeyConfirmingLogContract : public ContractTest<EventLog> {
 protected:
  static constexpr const char* kContext = "shop";
  static constexpr int kPartitions = 4;
  void SetUp() override {
    Backend::KeyConfirmingLog stores = GetParam().key_confirming_log(env(), kContext);
    if (!stores.log) GTEST_SKIP() << GetParam().name << " is not configured";
    log_ = std::move(stores.log);
    reservations_ = std::move(stores.reservations);
    log_->Create(kPartitions);
  }
  std::shared_ptr<EventLog> log_;
  std::shared_ptr<ReservationStore> reservations_;
};

}  // namespace wow::contract
