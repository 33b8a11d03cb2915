// The model-based test of the ReservationStore: random sequences of operations run against each
// backend and against the rules (core::ApplyReservationRule) side by side, compared after every
// step. The rules are the oracle: a map from key to reservation, changed only by the outcomes the
// rules give. A backend that applies them wrongly (a fast path, a row layout, a transaction) shows
// up here as the first step where the two differ.
//
// Each seed opens a fresh store and runs kOpsPerSeed operations: Reserve, Confirm, Release,
// Abandon, Find and List over kKeys keys of one scope, three owners and four holds; versions from
// UNVERSIONED up, and ANY_VERSION for releases; ttls of a few milliseconds and a clock that moves
// past them. After every operation its answer and the touched key's reservation are compared;
// every kListEvery steps, the whole scope, paged. The first difference ends the seed; the failure
// names the seed, the step, the time and the operation.
//
// Replaying a seed: WOW_MODEL_SEED=N runs seed N alone (the default runs seeds 1 to kSeeds):
//   WOW_MODEL_SEED=17 build/tests/contract/wow_contract_tests
//   --gtest_filter='*ReservationStoreModel*'
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "contract/backends.h"
#include "core/reservation_rules.h"

namespace wow::contract {
namespace {

using std::chrono::milliseconds;

constexpr int kSeeds = 20;
constexpr int kOpsPerSeed = 500;
constexpr int kKeys = 4;
constexpr int kListEvery = 25;

const ReservationScope kScope{"shop", "user", "t1", "shop.user-name"};
const std::vector<AggregateRef> kOwners = {
    {"shop", "user", "t1", "ann"}, {"shop", "user", "t1", "bob"}, {"shop", "user", "t1", "cy"}};
const std::vector<std::string> kHolds = {"h0", "h1", "h2", "h3"};
const std::vector<milliseconds> kTtls = {milliseconds(1), milliseconds(3), milliseconds(5),
                                         milliseconds(10), milliseconds(20)};
const std::vector<milliseconds> kAdvances = {milliseconds(1), milliseconds(2), milliseconds(5),
                                             milliseconds(11)};
constexpr int kMaxVersion = 4;  // confirms and releases at UNVERSIONED (0) to 4

// The seeds to run: WOW_MODEL_SEED alone when it is set, else 1 to kSeeds.
std::vector<std::uint64_t> Seeds() {
  if (const char* seed = std::getenv("WOW_MODEL_SEED"); seed != nullptr && *seed != '\0') {
    return {std::stoull(seed)};
  }
  std::vector<std::uint64_t> seeds;
  for (int s = 1; s <= kSeeds; ++s) seeds.push_back(static_cast<std::uint64_t>(s));
  return seeds;
}

// The oracle: every reservation of kScope, changed only by the rules' outcomes.
class Model {
 public:
  // Applies `op` to `key` by the rules at `now`; returns the operation's answer.
  bool Apply(const std::string& key, const core::ReservationOp& op, EpochMillis now) {
    core::ReservationOutcome outcome = core::ApplyReservationRule(Find(key), key, op, now);
    switch (outcome.write) {
      case core::ReservationOutcome::Write::kNone:
        break;
      case core::ReservationOutcome::Write::kStore:
        keys_.insert_or_assign(key, std::move(outcome.stored));
        break;
      case core::ReservationOutcome::Write::kDelete:
        keys_.erase(key);
        break;
    }
    return outcome.answer;
  }

  std::optional<Reservation> Find(const std::string& key) const {
    auto it = keys_.find(key);
    if (it == keys_.end()) return std::nullopt;
    return it->second;
  }

  // Up to `limit` reservations with keys after `after_key`, in key order.
  std::vector<Reservation> List(const std::string& after_key, int limit) const {
    std::vector<Reservation> page;
    for (auto it = keys_.upper_bound(after_key);
         it != keys_.end() && static_cast<int>(page.size()) < limit; ++it) {
      page.push_back(it->second);
    }
    return page;
  }

  std::vector<Reservation> All() const { return List("", kKeys + 1); }

 private:
  std::map<std::string, Reservation> keys_;
};

// One seed's run: a fresh store on its own clock and directory, the model, and the generator.
class SeedRun {
 public:
  SeedRun(std::uint64_t seed, std::unique_ptr<ReservationStore> store,
          std::shared_ptr<ManualClock> clock)
      : store_(std::move(store)),
        clock_(std::move(clock)),
        start_(clock_->NowMillis()),
        rng_(seed) {}

  // Runs one random operation and compares the store with the model; failures are reported
  // through gtest under `step`'s trace.
  void Step(int step) {
    if (Below(3) == 0) clock_->Advance(Pick(kAdvances));
    const std::string key = "k" + std::to_string(Below(kKeys));
    const int kind = Below(20);
    if (kind < 6) {
      const AggregateRef& owner = Pick(kOwners);
      const std::string& hold = Pick(kHolds);
      const milliseconds ttl = Pick(kTtls);
      Mutate(step, key, core::ReservationOp::Reserve(owner, hold, ttl),
             "Reserve(" + key + ", " + owner.id + ", " + hold + ", ttl " +
                 std::to_string(ttl.count()) + " ms)",
             [&] { return store_->Reserve(kScope, key, owner, hold, ttl); });
    } else if (kind < 10) {
      const AggregateRef& owner = Pick(kOwners);
      const Version version = Below(kMaxVersion + 1);
      Mutate(step, key, core::ReservationOp::Confirm(owner, version),
             "Confirm(" + key + ", " + owner.id + ", v" + std::to_string(version) + ")",
             [&] { return store_->Confirm(kScope, key, owner, version); });
    } else if (kind < 13) {
      const AggregateRef& owner = Pick(kOwners);
      const Version version = Below(4) == 0 ? kAnyVersion : Below(kMaxVersion + 1);
      Mutate(step, key, core::ReservationOp::Release(owner, version),
             "Release(" + key + ", " + owner.id + ", " +
                 (version == kAnyVersion ? "any" : "v" + std::to_string(version)) + ")",
             [&] { return store_->Release(kScope, key, owner, version); });
    } else if (kind < 16) {
      const AggregateRef& owner = Pick(kOwners);
      const std::string& hold = Pick(kHolds);
      Mutate(step, key, core::ReservationOp::Abandon(owner, hold),
             "Abandon(" + key + ", " + owner.id + ", " + hold + ")",
             [&] { return store_->Abandon(kScope, key, owner, hold); });
    } else if (kind < 18) {
      Observe(step, "Find(" + key + ")",
              [&] { EXPECT_EQ(store_->Find(kScope, key), model_.Find(key)); });
    } else {
      const std::string after = Below(5) == 0 ? "" : (Below(2) == 0 ? key : key + "x");
      const int limit = 1 + Below(kKeys);
      Observe(step, "List(after \"" + after + "\", limit " + std::to_string(limit) + ")",
              [&] { EXPECT_EQ(store_->List(kScope, after, limit), model_.List(after, limit)); });
    }
    if (step % kListEvery == kListEvery - 1) {
      Observe(step, "List of the whole scope, 2 a page",
              [&] { EXPECT_EQ(ListAll(), model_.All()); });
    }
  }

 private:
  // Runs a mutation on the store and on the model; compares the answers, then the key's
  // reservation as stored.
  template <typename Call>
  void Mutate(int step, const std::string& key, const core::ReservationOp& op,
              const std::string& what, Call call) {
    Observe(step, what, [&] {
      const bool answer = call();
      const bool expected = model_.Apply(key, op, clock_->NowMillis());
      EXPECT_EQ(answer, expected) << "the answer differs";
      EXPECT_EQ(store_->Find(kScope, key), model_.Find(key)) << "the stored reservation differs";
    });
  }

  // Runs `check` under a trace naming the step, the time and the operation; an exception is a
  // failure too.
  template <typename Check>
  void Observe(int step, const std::string& what, Check check) {
    std::ostringstream trace;
    trace << "step " << step << " at start + " << clock_->NowMillis() - start_ << " ms: " << what;
    SCOPED_TRACE(trace.str());
    try {
      check();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }

  // The whole scope from the store, two reservations a page.
  std::vector<Reservation> ListAll() {
    std::vector<Reservation> all;
    std::string after;
    for (;;) {
      std::vector<Reservation> page = store_->List(kScope, after, 2);
      if (page.empty()) return all;
      after = page.back().key;
      all.insert(all.end(), page.begin(), page.end());
    }
  }

  int Below(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  template <typename T>
  const T& Pick(const std::vector<T>& values) {
    return values[static_cast<size_t>(Below(static_cast<int>(values.size())))];
  }

  std::unique_ptr<ReservationStore> store_;
  std::shared_ptr<ManualClock> clock_;
  const EpochMillis start_;
  std::mt19937_64 rng_;  // the same sequence for a seed on every platform
  Model model_;
};

TEST_P(ReservationStoreModel, EveryBackendAgreesWithTheRulesOnRandomOperations) {
  for (const std::uint64_t seed : Seeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed) +
                 " (replay with WOW_MODEL_SEED=" + std::to_string(seed) + ")");
    testing_support::TempDir dir;
    auto clock = std::make_shared<ManualClock>();
    std::unique_ptr<ReservationStore> store = GetParam().reservations(BackendEnv{clock, &dir});
    if (!store) GTEST_SKIP() << GetParam().name << " is not configured";
    SeedRun run(seed, std::move(store), clock);
    for (int step = 0; step < kOpsPerSeed && !HasFailure(); ++step) run.Step(step);
    if (HasFailure()) return;  // one seed's first difference is enough to read
  }
}

}  // namespace
}  // namespace wow::contract
