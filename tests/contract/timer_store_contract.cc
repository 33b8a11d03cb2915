// The TimerStore contract (seed 003, DESIGN §5.3): every rule has a test named after it.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <latch>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "contract/backends.h"
#include "wow/error.h"

namespace wow::contract {
namespace {

// The fixture's context and partition count, for the helpers below.
struct Fixture : TimerStoreContract {
  using TimerStoreContract::kContext;
  using TimerStoreContract::kPartitions;
};

constexpr EpochMillis kNow = 1'700'000'000'000;
const AggregateRef kTarget{"contract", "shipment", "t1", "s1"};
const AggregateRef kOtherTarget{"contract", "shipment", "t1", "s2"};
const std::set<int> kAllPartitions{0, 1, 2, 3};

AggregateRef Owner(std::string id, std::string tenant = "t1") {
  return {Fixture::kContext, "order", std::move(tenant), std::move(id)};
}

// The n-th owner (from 0) in `partition`, found by trying ids in turn.
AggregateRef OwnerIn(int partition, int n = 0) {
  for (int i = 0;; ++i) {
    AggregateRef owner = Owner("order-" + std::to_string(i));
    if (PartitionOf(owner.tenant_id, owner.id, Fixture::kPartitions) == partition && n-- == 0) {
      return owner;
    }
  }
}

Timer MakeTimer(const AggregateRef& owner, std::string key, Version version, EpochMillis due_at,
                std::string timer_id = "") {
  Timer t;
  t.owner = owner;
  t.partition = PartitionOf(owner.tenant_id, owner.id, Fixture::kPartitions);
  t.timer_id = timer_id.empty() ? owner.id + "/" + key + "/v" + std::to_string(version) : timer_id;
  t.key = std::move(key);
  t.version = version;
  t.due_at = due_at;
  t.target = kTarget;
  t.command_type = "ship-order";
  t.body = R"({"order":")" + owner.id + R"("})";
  return t;
}

TimerChange Change(TimerChange::Kind kind, const Timer& loaded, EpochMillis new_due_at = 0) {
  return {kind, loaded, new_due_at};
}

std::vector<std::string> TimerIds(const std::vector<Timer>& timers) {
  std::vector<std::string> ids;
  for (const Timer& t : timers) ids.push_back(t.timer_id);
  return ids;
}

void ExpectInvalidArgument(const std::function<void()>& call) {
  try {
    call();
    ADD_FAILURE() << "expected Error(INVALID_ARGUMENT), nothing was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  }
}

// Each way a timer can be malformed, by name.
std::vector<std::pair<std::string, std::function<void(Timer&)>>> MalformedTimers() {
  return {
      {"empty key", [](Timer& t) { t.key.clear(); }},
      {"owner without id", [](Timer& t) { t.owner.id.clear(); }},
      {"owner of a malformed type", [](Timer& t) { t.owner.aggregate = "Order Type"; }},
      {"owner of another context", [](Timer& t) { t.owner.context = "elsewhere"; }},
      {"partition below 0", [](Timer& t) { t.partition = -1; }},
      {"partition past the last", [](Timer& t) { t.partition = Fixture::kPartitions; }},
      {"partition not the owner's",
       [](Timer& t) { t.partition = (t.partition + 1) % Fixture::kPartitions; }},
      {"version below UNVERSIONED", [](Timer& t) { t.version = kUnversioned - 1; }},
      {"empty timer id", [](Timer& t) { t.timer_id.clear(); }},
      {"target without id", [](Timer& t) { t.target.id.clear(); }},
      {"target of a malformed context", [](Timer& t) { t.target.context = "Bad Context"; }},
      {"empty command type", [](Timer& t) { t.command_type.clear(); }},
      {"body not JSON", [](Timer& t) { t.body = "{\"order\":"; }},
      {"empty body", [](Timer& t) { t.body.clear(); }},
      {"rule of no attempt", [](Timer& t) { t.rule.max_attempts = 0; }},
      {"negative attempt", [](Timer& t) { t.attempt = -1; }},
      {"parked version below UNVERSIONED",
       [](Timer& t) {
         t.state = TimerState::kParked;
         t.parked_version = kUnversioned - 1;
       }},
      {"parked version on a timer not PARKED", [](Timer& t) { t.parked_version = 3; }},
  };
}

// --- Put and Find ---------------------------------------------------------------------------

TEST_P(TimerStoreContract, PutThenFindReturnsEveryField) {
  Timer t = MakeTimer(Owner("o1", "tenant-a"), "reminder", 7, kNow + 5'000, "timer-1");
  t.target = {"billing", "invoice", "tenant-a", "inv-9"};  // a target may be of another context
  t.command_type = "remind-customer";
  t.body = R"({"text":"caf\u00e9 ☕","n":[1,2.5,null],"nested":{"ok":true}})";
  t.rule = {TimerRule::Kind::kRetry, 5, 250, 8'000};
  t.state = TimerState::kFiring;
  t.attempt = 2;

  EXPECT_TRUE(timers_->Put(t));
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), t);
}

TEST_P(TimerStoreContract, FindOfAMissingTimerIsEmpty) {
  ASSERT_TRUE(timers_->Put(MakeTimer(Owner("o1"), "reminder", 1, kNow)));
  EXPECT_EQ(timers_->Find(Owner("o1"), "other-key"), std::nullopt);
  EXPECT_EQ(timers_->Find(Owner("o2"), "reminder"), std::nullopt);
  EXPECT_EQ(timers_->Find(Owner("o1", "t2"), "reminder"), std::nullopt);
}

TEST_P(TimerStoreContract, TimersOfOneKeyAreSeparatePerOwner) {
  const Timer a = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  const Timer b = MakeTimer(Owner("o2"), "reminder", 3, kNow + 1);
  ASSERT_TRUE(timers_->Put(a));
  ASSERT_TRUE(timers_->Put(b));
  EXPECT_TRUE(timers_->Cancel(a.owner, "reminder", 1));
  EXPECT_EQ(timers_->Find(a.owner, "reminder"), std::nullopt);
  EXPECT_EQ(timers_->Find(b.owner, "reminder"), b);
}

TEST_P(TimerStoreContract, ReplayedPutOfTheSameFactLeavesTheTimerAsItIs) {
  const Timer fact = MakeTimer(Owner("o1"), "reminder", 3, kNow, "timer-3");
  ASSERT_TRUE(timers_->Put(fact));
  ASSERT_EQ(timers_->Settle({TimerChange{TimerChange::Kind::kPark, fact, 0}}), 1);
  const Timer parked = *timers_->Find(fact.owner, "reminder");
  ASSERT_EQ(parked.state, TimerState::kParked);

  EXPECT_TRUE(timers_->Put(fact)) << "the store holds this fact";
  EXPECT_EQ(timers_->Find(fact.owner, "reminder"), parked) << "not reset to PENDING, attempt 0";
}

TEST_P(TimerStoreContract, PutReplacesATimerOfTheSameOrAnOlderVersion) {
  const AggregateRef owner = Owner("o1");
  ASSERT_TRUE(timers_->Put(MakeTimer(owner, "reminder", 2, kNow, "first")));

  Timer same_version = MakeTimer(owner, "reminder", 2, kNow + 10, "second");
  same_version.state = TimerState::kParked;
  EXPECT_TRUE(timers_->Put(same_version));
  EXPECT_EQ(timers_->Find(owner, "reminder"), same_version);

  const Timer newer = MakeTimer(owner, "reminder", 5, kNow + 20, "third");
  EXPECT_TRUE(timers_->Put(newer));
  EXPECT_EQ(timers_->Find(owner, "reminder"), newer);
}

TEST_P(TimerStoreContract, ReplayedPutOfAnOlderVersionChangesNothing) {
  const AggregateRef owner = Owner("o1");
  const Timer v1 = MakeTimer(owner, "reminder", 1, kNow, "from-v1");
  const Timer v4 = MakeTimer(owner, "reminder", 4, kNow + 60'000, "from-v4");
  ASSERT_TRUE(timers_->Put(v1));
  ASSERT_TRUE(timers_->Put(v4));

  EXPECT_FALSE(timers_->Put(v1));
  EXPECT_FALSE(timers_->Put(MakeTimer(owner, "reminder", 3, kNow, "from-v3")));
  EXPECT_FALSE(timers_->Put(MakeTimer(owner, "reminder", kUnversioned, kNow, "unversioned")));
  EXPECT_EQ(timers_->Find(owner, "reminder"), v4);
  EXPECT_EQ(TimerIds(timers_->Due(kAllPartitions, kNow + 60'000, 10)),
            std::vector<std::string>{"from-v4"});
}

// --- Cancel and CancelAll -------------------------------------------------------------------

TEST_P(TimerStoreContract, CancelDeletesATimerOfTheSameOrAnOlderVersion) {
  const AggregateRef owner = Owner("o1");
  ASSERT_TRUE(timers_->Put(MakeTimer(owner, "a", 3, kNow)));
  ASSERT_TRUE(timers_->Put(MakeTimer(owner, "b", 3, kNow)));

  EXPECT_TRUE(timers_->Cancel(owner, "a", 3));
  EXPECT_TRUE(timers_->Cancel(owner, "b", 9));
  EXPECT_EQ(timers_->Find(owner, "a"), std::nullopt);
  EXPECT_EQ(timers_->Find(owner, "b"), std::nullopt);
}

TEST_P(TimerStoreContract, ReplayedCancelOfAnOlderVersionKeepsTheNewerTimer) {
  const Timer t = MakeTimer(Owner("o1"), "reminder", 5, kNow);
  ASSERT_TRUE(timers_->Put(t));
  EXPECT_FALSE(timers_->Cancel(t.owner, "reminder", 4));
  EXPECT_FALSE(timers_->Cancel(t.owner, "reminder", kUnversioned));
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), t);
}

TEST_P(TimerStoreContract, CancelOfAMissingTimerReturnsFalse) {
  ASSERT_TRUE(timers_->Put(MakeTimer(Owner("o1"), "reminder", 1, kNow)));
  EXPECT_FALSE(timers_->Cancel(Owner("o1"), "other-key", 5));
  EXPECT_FALSE(timers_->Cancel(Owner("o2"), "reminder", 5));
  EXPECT_TRUE(timers_->Find(Owner("o1"), "reminder").has_value());
}

TEST_P(TimerStoreContract, CancelAllDeletesOnlyThatOwnersTimersUpToItsVersionAndCountsThem) {
  const AggregateRef owner = Owner("o1");
  const AggregateRef other = Owner("o2");
  ASSERT_TRUE(timers_->Put(MakeTimer(owner, "a", 1, kNow)));
  ASSERT_TRUE(timers_->Put(MakeTimer(owner, "b", 2, kNow)));
  const Timer later = MakeTimer(owner, "c", 4, kNow);
  ASSERT_TRUE(timers_->Put(later));
  const Timer others = MakeTimer(other, "a", 1, kNow);
  ASSERT_TRUE(timers_->Put(others));
  const Timer other_tenant = MakeTimer(Owner("o1", "t2"), "a", 1, kNow);
  ASSERT_TRUE(timers_->Put(other_tenant));

  EXPECT_EQ(timers_->CancelAll(owner, 2), 2);
  EXPECT_EQ(timers_->Find(owner, "a"), std::nullopt);
  EXPECT_EQ(timers_->Find(owner, "b"), std::nullopt);
  EXPECT_EQ(timers_->Find(owner, "c"), later);
  EXPECT_EQ(timers_->Find(other, "a"), others);
  EXPECT_EQ(timers_->Find(other_tenant.owner, "a"), other_tenant);

  EXPECT_EQ(timers_->CancelAll(owner, 2), 0);
  EXPECT_EQ(timers_->CancelAll(owner, 4), 1);
  EXPECT_EQ(timers_->CancelAll(Owner("nobody"), 9), 0);
}

// --- Due --------------------------------------------------------------------------------------

// Five timers over the four partitions, due in the order t-z, t-a, t-b, t-d, t-c.
void PutFiveTimersOverFourPartitions(TimerStore& timers) {
  ASSERT_TRUE(timers.Put(MakeTimer(OwnerIn(0), "k1", 1, kNow + 300, "t-c")));
  ASSERT_TRUE(timers.Put(MakeTimer(OwnerIn(1), "k1", 1, kNow + 100, "t-b")));
  ASSERT_TRUE(timers.Put(MakeTimer(OwnerIn(2), "k1", 1, kNow + 100, "t-a")));
  ASSERT_TRUE(timers.Put(MakeTimer(OwnerIn(1), "k2", 1, kNow + 200, "t-d")));
  ASSERT_TRUE(timers.Put(MakeTimer(OwnerIn(3), "k1", 1, kNow + 50, "t-z")));
}

TEST_P(TimerStoreContract, DueIsOrderedByDueAtThenTimerIdAcrossPartitions) {
  PutFiveTimersOverFourPartitions(*timers_);
  const std::vector<Timer> due = timers_->Due(kAllPartitions, kNow + 1'000, 10);
  EXPECT_EQ(TimerIds(due), (std::vector<std::string>{"t-z", "t-a", "t-b", "t-d", "t-c"}));
  ASSERT_FALSE(due.empty());
  EXPECT_EQ(due.front(), timers_->Find(OwnerIn(3), "k1"));
}

TEST_P(TimerStoreContract, DueReadsOnlyTheRequestedPartitions) {
  PutFiveTimersOverFourPartitions(*timers_);
  EXPECT_EQ(TimerIds(timers_->Due({0, 1, 2}, kNow + 1'000, 10)),
            (std::vector<std::string>{"t-a", "t-b", "t-d", "t-c"}));
  EXPECT_EQ(TimerIds(timers_->Due({1}, kNow + 1'000, 10)),
            (std::vector<std::string>{"t-b", "t-d"}));
  EXPECT_TRUE(timers_->Due({}, kNow + 1'000, 10).empty());
}

TEST_P(TimerStoreContract, DueReturnsAtMostLimitTimersFirstDueFirst) {
  PutFiveTimersOverFourPartitions(*timers_);
  EXPECT_EQ(TimerIds(timers_->Due(kAllPartitions, kNow + 1'000, 2)),
            (std::vector<std::string>{"t-z", "t-a"}));
  EXPECT_EQ(TimerIds(timers_->Due(kAllPartitions, kNow + 1'000, 1)),
            std::vector<std::string>{"t-z"});
}

TEST_P(TimerStoreContract, DueExcludesParkedAndNotYetDueTimers) {
  ASSERT_TRUE(timers_->Put(MakeTimer(Owner("o1"), "at-until", 1, kNow, "at-until")));
  ASSERT_TRUE(timers_->Put(MakeTimer(Owner("o1"), "later", 1, kNow + 1, "later")));
  const Timer parked = MakeTimer(Owner("o2"), "parked", 1, kNow - 10, "parked");
  ASSERT_TRUE(timers_->Put(parked));
  ASSERT_EQ(timers_->Settle({Change(TimerChange::Kind::kPark, parked)}), 1);

  EXPECT_EQ(TimerIds(timers_->Due(kAllPartitions, kNow, 10)), std::vector<std::string>{"at-until"});
}

TEST_P(TimerStoreContract, AClaimedTimerIsDueAgainAtItsClaimExpiryAndNotBefore) {
  const Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(t));
  ASSERT_EQ(timers_->Settle({Change(TimerChange::Kind::kClaim, t, kNow + 30'000)}), 1);

  EXPECT_TRUE(timers_->Due(kAllPartitions, kNow, 10).empty());
  EXPECT_TRUE(timers_->Due(kAllPartitions, kNow + 29'999, 10).empty());
  const std::vector<Timer> due = timers_->Due(kAllPartitions, kNow + 30'000, 10);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].state, TimerState::kFiring);
  EXPECT_EQ(due[0].due_at, kNow + 30'000);
}

// --- Parked -----------------------------------------------------------------------------------

TEST_P(TimerStoreContract, ParkedListsTheParkedTimersOfATargetOrderedByDueAtThenTimerId) {
  std::vector<Timer> to_park = {
      MakeTimer(Owner("o1"), "k", 1, kNow + 20, "p-c"),
      MakeTimer(Owner("o2"), "k", 1, kNow + 10, "p-b"),
      MakeTimer(Owner("o3"), "k", 1, kNow + 10, "p-a"),
  };
  Timer elsewhere = MakeTimer(Owner("o4"), "k", 1, kNow, "p-elsewhere");
  elsewhere.target = kOtherTarget;
  to_park.push_back(elsewhere);
  std::vector<TimerChange> parks;
  for (const Timer& t : to_park) {
    ASSERT_TRUE(timers_->Put(t));
    parks.push_back(Change(TimerChange::Kind::kPark, t));
  }
  ASSERT_EQ(timers_->Settle(parks), 4);
  ASSERT_TRUE(timers_->Put(MakeTimer(Owner("o5"), "k", 1, kNow, "pending-on-target")));

  const std::vector<Timer> parked = timers_->Parked(kTarget);
  EXPECT_EQ(TimerIds(parked), (std::vector<std::string>{"p-a", "p-b", "p-c"}));
  for (const Timer& t : parked) EXPECT_EQ(t.state, TimerState::kParked);
  EXPECT_EQ(TimerIds(timers_->Parked(kOtherTarget)), std::vector<std::string>{"p-elsewhere"});
  EXPECT_TRUE(timers_->Parked({"contract", "shipment", "t1", "s3"}).empty());
}

// --- Settle -----------------------------------------------------------------------------------

TEST_P(TimerStoreContract, SettleClaimMakesTheTimerFiringUntilTheClaimExpiry) {
  const Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(t));
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kClaim, t, kNow + 30'000)}), 1);
  Timer expected = t;
  expected.state = TimerState::kFiring;
  expected.due_at = kNow + 30'000;
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), expected);
}

TEST_P(TimerStoreContract, SettleRetryMakesTheTimerPendingAtTheNewDueAtWithTheNextAttempt) {
  const Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(t));
  ASSERT_EQ(timers_->Settle({Change(TimerChange::Kind::kClaim, t, kNow + 30'000)}), 1);
  const Timer claimed = *timers_->Find(t.owner, "reminder");

  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kRetry, claimed, kNow + 2'000)}), 1);
  Timer expected = t;
  expected.due_at = kNow + 2'000;
  expected.attempt = 1;
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), expected);
}

TEST_P(TimerStoreContract, SettleParkMakesTheTimerParkedWithTheNextAttemptAndItsDueAtKept) {
  Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  t.state = TimerState::kFiring;
  t.attempt = 2;
  ASSERT_TRUE(timers_->Put(t));
  TimerChange park = Change(TimerChange::Kind::kPark, t, kNow + 99);
  park.target_version = 7;
  EXPECT_EQ(timers_->Settle({park}), 1);
  Timer expected = t;
  expected.state = TimerState::kParked;
  expected.attempt = 3;
  expected.parked_version = 7;
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), expected);
  EXPECT_EQ(timers_->Parked(kTarget), std::vector<Timer>{expected});
}

TEST_P(TimerStoreContract, APutParkedTimerKeepsItsParkedVersion) {
  Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  t.state = TimerState::kParked;
  t.parked_version = 11;
  ASSERT_TRUE(timers_->Put(t));
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), t);
  // A later fact replaces it whole: pending, no parked version.
  const Timer later = MakeTimer(Owner("o1"), "reminder", 2, kNow);
  ASSERT_TRUE(timers_->Put(later));
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), later);
}

TEST_P(TimerStoreContract, SettleParkOfANegativeTargetVersionIsRefused) {
  Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(t));
  TimerChange park = Change(TimerChange::Kind::kPark, t);
  park.target_version = kUnversioned - 1;
  ExpectInvalidArgument([&] { timers_->Settle({park}); });
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), t);
}

TEST_P(TimerStoreContract, SettleDoneDeletesTheTimer) {
  const Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(t));
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kDone, t)}), 1);
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), std::nullopt);
}

TEST_P(TimerStoreContract, SettleRearmMakesAParkedTimerPendingAtTheNewDueAtWithItsAttemptKept) {
  Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  t.state = TimerState::kParked;
  t.attempt = 3;
  t.parked_version = 4;
  ASSERT_TRUE(timers_->Put(t));
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kRearm, t, kNow + 500)}), 1);
  Timer expected = t;
  expected.state = TimerState::kPending;
  expected.due_at = kNow + 500;
  expected.parked_version = 0;
  EXPECT_EQ(timers_->Find(t.owner, "reminder"), expected);
  EXPECT_TRUE(timers_->Parked(kTarget).empty());
}

TEST_P(TimerStoreContract, SettleAgainstAStaleLoadAppliesToNothing) {
  const Timer stored = MakeTimer(Owner("o1"), "reminder", 2, kNow, "current");
  ASSERT_TRUE(timers_->Put(stored));
  const std::vector<std::pair<std::string, std::function<void(Timer&)>>> stale_loads = {
      {"another timer id", [](Timer& t) { t.timer_id = "replaced"; }},
      {"an older version", [](Timer& t) { t.version = 1; }},
      {"another state", [](Timer& t) { t.state = TimerState::kFiring; }},
      {"another attempt", [](Timer& t) { t.attempt = 1; }},
      {"another due_at", [](Timer& t) { t.due_at = kNow - 1; }},
  };
  for (const auto& [name, stale] : stale_loads) {
    SCOPED_TRACE(name);
    Timer loaded = stored;
    stale(loaded);
    for (auto kind : {TimerChange::Kind::kClaim, TimerChange::Kind::kRetry,
                      TimerChange::Kind::kPark, TimerChange::Kind::kDone}) {
      EXPECT_EQ(timers_->Settle({Change(kind, loaded, kNow + 1'000)}), 0);
    }
    EXPECT_EQ(timers_->Find(stored.owner, "reminder"), stored);
  }
  ASSERT_TRUE(timers_->Cancel(stored.owner, "reminder", 2));
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kClaim, stored, kNow + 1'000)}), 0);
  EXPECT_EQ(timers_->Find(stored.owner, "reminder"), std::nullopt);
}

TEST_P(TimerStoreContract, SettleAfterAReplacingPutAppliesToNothing) {
  const Timer loaded = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(loaded));
  const Timer replaced = MakeTimer(Owner("o1"), "reminder", 2, kNow);
  ASSERT_TRUE(timers_->Put(replaced));
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kDone, loaded)}), 0);
  EXPECT_EQ(timers_->Find(loaded.owner, "reminder"), replaced);
}

TEST_P(TimerStoreContract, TwoCompetingClaimsOfOneTimerApplyExactlyOnce) {
  const Timer t = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(t));
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kClaim, t, kNow + 10'000)}), 1);
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kClaim, t, kNow + 20'000)}), 0);
  EXPECT_EQ(timers_->Find(t.owner, "reminder")->due_at, kNow + 10'000);

  const Timer u = MakeTimer(Owner("o2"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(u));
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kClaim, u, kNow + 10'000),
                             Change(TimerChange::Kind::kClaim, u, kNow + 20'000)}),
            1);
  EXPECT_EQ(timers_->Find(u.owner, "reminder")->due_at, kNow + 10'000);
}

TEST_P(TimerStoreContract, SettleCountsOnlyTheChangesThatApplied) {
  const Timer a = MakeTimer(Owner("o1"), "a", 1, kNow);
  const Timer b = MakeTimer(Owner("o1"), "b", 1, kNow);
  const Timer c = MakeTimer(Owner("o2"), "a", 1, kNow);
  for (const Timer& t : {a, b, c}) ASSERT_TRUE(timers_->Put(t));
  Timer stale_b = b;
  stale_b.attempt = 4;
  EXPECT_EQ(timers_->Settle({Change(TimerChange::Kind::kClaim, a, kNow + 100),
                             Change(TimerChange::Kind::kClaim, stale_b, kNow + 100),
                             Change(TimerChange::Kind::kDone, c)}),
            2);
  EXPECT_EQ(timers_->Find(a.owner, "a")->state, TimerState::kFiring);
  EXPECT_EQ(timers_->Find(b.owner, "b"), b);
  EXPECT_EQ(timers_->Find(c.owner, "a"), std::nullopt);
  EXPECT_EQ(timers_->Settle({}), 0);
}

// --- Bad input --------------------------------------------------------------------------------

TEST_P(TimerStoreContract, PutOfAMalformedTimerIsRefusedAndChangesNothing) {
  const Timer kept = MakeTimer(Owner("o1"), "reminder", 5, kNow);
  ASSERT_TRUE(timers_->Put(kept));
  for (const auto& [name, malform] : MalformedTimers()) {
    SCOPED_TRACE(name);
    Timer bad = MakeTimer(Owner("o1"), "reminder", 6, kNow - 1, "bad");
    malform(bad);
    ExpectInvalidArgument([&] { timers_->Put(bad); });
    EXPECT_EQ(timers_->Find(kept.owner, "reminder"), kept);
    EXPECT_EQ(TimerIds(timers_->Due(kAllPartitions, kNow, 10)),
              std::vector<std::string>{kept.timer_id});
  }
}

TEST_P(TimerStoreContract, SettleWithAMalformedChangeIsRefusedAndAppliesNoChange) {
  const Timer kept = MakeTimer(Owner("o1"), "reminder", 5, kNow);
  ASSERT_TRUE(timers_->Put(kept));
  for (const auto& [name, malform] : MalformedTimers()) {
    SCOPED_TRACE(name);
    Timer bad = kept;
    malform(bad);
    ExpectInvalidArgument([&] {
      timers_->Settle({Change(TimerChange::Kind::kClaim, kept, kNow + 100),
                       Change(TimerChange::Kind::kClaim, bad, kNow + 100)});
    });
    EXPECT_EQ(timers_->Find(kept.owner, "reminder"), kept);
  }
  SCOPED_TRACE("re-arm of a timer that is not parked");
  ExpectInvalidArgument([&] {
    timers_->Settle({Change(TimerChange::Kind::kDone, kept),
                     Change(TimerChange::Kind::kRearm, kept, kNow + 100)});
  });
  EXPECT_EQ(timers_->Find(kept.owner, "reminder"), kept);
}

TEST_P(TimerStoreContract, CancelAndCancelAllOfBadInputAreRefusedAndChangeNothing) {
  const Timer kept = MakeTimer(Owner("o1"), "reminder", 1, kNow);
  ASSERT_TRUE(timers_->Put(kept));
  AggregateRef no_id = kept.owner;
  no_id.id.clear();
  AggregateRef other_context = kept.owner;
  other_context.context = "elsewhere";

  ExpectInvalidArgument([&] { timers_->Cancel(kept.owner, "", 9); });
  ExpectInvalidArgument([&] { timers_->Cancel(no_id, "reminder", 9); });
  ExpectInvalidArgument([&] { timers_->Cancel(other_context, "reminder", 9); });
  ExpectInvalidArgument([&] { timers_->Cancel(kept.owner, "reminder", kUnversioned - 1); });
  ExpectInvalidArgument([&] { timers_->CancelAll(no_id, 9); });
  ExpectInvalidArgument([&] { timers_->CancelAll(other_context, 9); });
  ExpectInvalidArgument([&] { timers_->CancelAll(kept.owner, kUnversioned - 1); });
  EXPECT_EQ(timers_->Find(kept.owner, "reminder"), kept);
}

TEST_P(TimerStoreContract, FindDueAndParkedOfBadInputAreRefused) {
  AggregateRef no_id = Owner("o1");
  no_id.id.clear();
  ExpectInvalidArgument([&] { timers_->Find(Owner("o1"), ""); });
  ExpectInvalidArgument([&] { timers_->Find(no_id, "reminder"); });
  ExpectInvalidArgument([&] { timers_->Find({"elsewhere", "order", "t1", "o1"}, "reminder"); });
  ExpectInvalidArgument([&] { timers_->Due(kAllPartitions, kNow, 0); });
  ExpectInvalidArgument([&] { timers_->Due(kAllPartitions, kNow, -1); });
  ExpectInvalidArgument([&] { timers_->Due({0, -1}, kNow, 10); });
  ExpectInvalidArgument([&] { timers_->Due({Fixture::kPartitions}, kNow, 10); });
  ExpectInvalidArgument([&] { timers_->Parked({"contract", "shipment", "t1", ""}); });
  ExpectInvalidArgument([&] { timers_->Parked({"Bad Context", "shipment", "t1", "s1"}); });
}

// --- Concurrency ------------------------------------------------------------------------------

TEST_P(TimerStoreContract, ConcurrentClaimsOfTheSameDueTimersClaimEachExactlyOnce) {
  constexpr int kTimers = 100;
  constexpr int kThreads = 8;
  for (int i = 0; i < kTimers; ++i) {
    ASSERT_TRUE(timers_->Put(MakeTimer(Owner("o" + std::to_string(i)), "fire", 1, kNow - i)));
  }

  std::vector<std::vector<std::string>> claimed(kThreads);
  std::vector<std::size_t> loaded(kThreads);
  std::latch start(kThreads);
  std::latch all_loaded(kThreads);
  std::vector<std::thread> threads;
  for (int n = 0; n < kThreads; ++n) {
    threads.emplace_back([&, n] {
      start.arrive_and_wait();
      std::vector<Timer> due = timers_->Due(kAllPartitions, kNow, kTimers);
      loaded[n] = due.size();
      all_loaded.arrive_and_wait();  // every thread races on the same loaded timers
      std::rotate(due.begin(), due.begin() + (due.size() * n / kThreads), due.end());
      for (const Timer& t : due) {
        if (timers_->Settle({Change(TimerChange::Kind::kClaim, t, kNow + 60'000)}) == 1) {
          claimed[n].push_back(t.timer_id);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();

  for (std::size_t n : loaded) EXPECT_EQ(n, static_cast<std::size_t>(kTimers));
  std::map<std::string, int> claims;
  for (const auto& ids : claimed) {
    for (const std::string& id : ids) ++claims[id];
  }
  EXPECT_EQ(claims.size(), static_cast<std::size_t>(kTimers));
  for (const auto& [id, count] : claims) EXPECT_EQ(count, 1) << id;
  EXPECT_TRUE(timers_->Due(kAllPartitions, kNow, kTimers).empty());
}

}  // namespace
}  // namespace wow::contract
