// The ReservationStore contract (seed 001, DESIGN §5.1): every rule has a test named after it.
//
// Written against the interface only, so every backend instantiates it unchanged. Time moves only
// through the fixture's ManualClock `clock_`; the store must judge expiry by it.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cctype>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "contract/backends.h"
#include "wow/error.h"

namespace wow::contract {
namespace {

using std::chrono::milliseconds;

const ReservationScope kScope{"shop", "user", "t1", "shop.user-name"};
const AggregateRef kAlice{"shop", "user", "t1", "alice"};
const AggregateRef kBob{"shop", "user", "t1", "bob"};
constexpr milliseconds kTtl{10'000};

AggregateRef User(const std::string& id, const std::string& tenant = "t1") {
  return {"shop", "user", tenant, id};
}

Reservation Pending(const std::string& key, const AggregateRef& owner, std::set<std::string> holds,
                    EpochMillis expires_at) {
  return {key, owner, ReservationState::kPending, std::move(holds), expires_at, kUnversioned};
}

Reservation Confirmed(const std::string& key, const AggregateRef& owner, Version version) {
  return {key, owner, ReservationState::kConfirmed, {}, 0, version};
}

std::vector<std::string> KeysOf(const std::vector<Reservation>& page) {
  std::vector<std::string> keys;
  for (const Reservation& r : page) keys.push_back(r.key);
  return keys;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Succeeds when `call` throws Error(kInvalidArgument) whose message names `what` (any case).
template <typename Call>
::testing::AssertionResult RefusedNaming(const std::string& what, Call call) {
  try {
    call();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument) {
      return ::testing::AssertionFailure()
             << "threw " << ErrorCodeName(e.code()) << ", not INVALID_ARGUMENT: " << e.what();
    }
    if (Lower(e.what()).find(Lower(what)) == std::string::npos) {
      return ::testing::AssertionFailure() << "message does not name " << what << ": " << e.what();
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception than wow::Error: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw; expected a refusal naming " << what;
}

// --- Reserve ------------------------------------------------------------------------------------

TEST_P(ReservationStoreContract, ReserveOfAFreeKeyTakesItPendingWithItsHold) {
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  auto r = store_->Find(kScope, "ann");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->key, "ann");
  EXPECT_EQ(r->owner, kAlice);
  EXPECT_EQ(r->state, ReservationState::kPending);
  EXPECT_EQ(r->holds, std::set<std::string>{"h1"});
  EXPECT_EQ(r->expires_at, clock_->NowMillis() + kTtl.count());
  EXPECT_EQ(r->version, kUnversioned);
}

TEST_P(ReservationStoreContract, ReserveOfAKeyHeldByAnotherOwnersExpiredPendingTakesIt) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  clock_->Advance(kTtl);
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kBob, "h2", milliseconds(3'000)));
  EXPECT_EQ(store_->Find(kScope, "ann"), Pending("ann", kBob, {"h2"}, clock_->NowMillis() + 3'000));
}

TEST_P(ReservationStoreContract, ReserveOfTheOwnersExpiredPendingTakesItAfreshWithOnlyItsHold) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h2", kTtl));
  clock_->Advance(kTtl + milliseconds(1));
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h3", milliseconds(500)));
  EXPECT_EQ(store_->Find(kScope, "ann"), Pending("ann", kAlice, {"h3"}, clock_->NowMillis() + 500));
}

TEST_P(ReservationStoreContract, ReserveJoinsHoldAndKeepsTheLaterExpiry) {
  const EpochMillis t0 = clock_->NowMillis();
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  clock_->Advance(milliseconds(4'000));
  // A later expiry extends the reservation.
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h2", kTtl));
  EXPECT_EQ(store_->Find(kScope, "ann"),
            Pending("ann", kAlice, {"h1", "h2"}, t0 + 4'000 + kTtl.count()));
  // An earlier one does not shorten it.
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h3", milliseconds(1)));
  EXPECT_EQ(store_->Find(kScope, "ann"),
            Pending("ann", kAlice, {"h1", "h2", "h3"}, t0 + 4'000 + kTtl.count()));
}

TEST_P(ReservationStoreContract, SeveralAttemptsOfOneOwnerMayHoldOneKey) {
  for (const char* hold : {"h1", "h2", "h3"}) {
    EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, hold, kTtl)) << hold;
  }
  EXPECT_EQ(store_->Find(kScope, "ann"),
            Pending("ann", kAlice, {"h1", "h2", "h3"}, clock_->NowMillis() + kTtl.count()));
}

TEST_P(ReservationStoreContract, ReserveAgainWithTheSameHoldKeepsOneHold) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  clock_->Advance(milliseconds(1'000));
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  EXPECT_EQ(store_->Find(kScope, "ann"),
            Pending("ann", kAlice, {"h1"}, clock_->NowMillis() + kTtl.count()));
}

TEST_P(ReservationStoreContract, ReserveOfAKeyTheOwnerConfirmedLeavesItConfirmed) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 4));
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 4));
}

TEST_P(ReservationStoreContract, ReserveOfAKeyInAnotherOwnersLivePendingFails) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  const auto before = store_->Find(kScope, "ann");
  clock_->Advance(kTtl - milliseconds(1));
  EXPECT_FALSE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
  EXPECT_EQ(store_->Find(kScope, "ann"), before);
}

TEST_P(ReservationStoreContract, ReserveOfAKeyConfirmedByAnotherOwnerFails) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 1));
  EXPECT_FALSE(store_->Reserve(kScope, "ann", kBob, "h1", kTtl));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 1));
}

// --- Expiry -------------------------------------------------------------------------------------

TEST_P(ReservationStoreContract, APendingReservationIsLiveBeforeItsExpiryAndExpiredFromIt) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  const EpochMillis expires_at = clock_->NowMillis() + kTtl.count();
  clock_->Set(expires_at - 1);
  EXPECT_FALSE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
  clock_->Set(expires_at);
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
  EXPECT_EQ(store_->Find(kScope, "ann")->owner, kBob);
}

TEST_P(ReservationStoreContract, ExpiryIsJudgedByTheInjectedClock) {
  // Long before the real time: a store judging by the database's clock would see it expired.
  clock_->Set(1'000'000);
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  EXPECT_EQ(store_->Find(kScope, "ann"), Pending("ann", kAlice, {"h1"}, 1'000'000 + kTtl.count()));
  EXPECT_FALSE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
  // Long after the real time: a store judging by the database's clock would see it live.
  clock_->Set(4'000'000'000'000);
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
  EXPECT_EQ(store_->Find(kScope, "ann"),
            Pending("ann", kBob, {"h2"}, 4'000'000'000'000 + kTtl.count()));
}

TEST_P(ReservationStoreContract, ConfirmedReservationNeverExpires) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 1));
  clock_->Advance(kTtl * 1'000'000);
  EXPECT_FALSE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
  EXPECT_FALSE(store_->Confirm(kScope, "ann", kBob, 9));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 1));
}

TEST_P(ReservationStoreContract, ConfirmedReservationEndsOnlyWhenItsOwnerReleasesIt) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 1));
  clock_->Advance(kTtl * 1'000);
  EXPECT_FALSE(store_->Release(kScope, "ann", kBob, kAnyVersion));
  EXPECT_FALSE(store_->Abandon(kScope, "ann", kAlice, "h1"));
  EXPECT_TRUE(store_->Find(kScope, "ann").has_value());
  EXPECT_TRUE(store_->Release(kScope, "ann", kAlice, 1));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
}

TEST_P(ReservationStoreContract, FindReturnsAnExpiredPendingAsStored) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  const EpochMillis expires_at = clock_->NowMillis() + kTtl.count();
  clock_->Advance(kTtl * 10);
  EXPECT_EQ(store_->Find(kScope, "ann"), Pending("ann", kAlice, {"h1"}, expires_at));
}

TEST_P(ReservationStoreContract, FindOfAFreeKeyReturnsNothing) {
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
}

// --- Confirm ------------------------------------------------------------------------------------

TEST_P(ReservationStoreContract, ConfirmOfAFreeKeyTakesItConfirmed) {
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 3));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 3));
}

TEST_P(ReservationStoreContract, ConfirmOfTheOwnersLivePendingConfirmsItAndClearsItsHolds) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h2", kTtl));
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 2));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 2));
}

TEST_P(ReservationStoreContract, ConfirmOfTheOwnersExpiredPendingConfirmsIt) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  clock_->Advance(kTtl * 100);
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 2));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 2));
}

TEST_P(ReservationStoreContract, ConfirmOfAKeyHeldByAnotherOwnersExpiredPendingTakesIt) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kBob, "h1", kTtl));
  clock_->Advance(kTtl);
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 5));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 5));
}

TEST_P(ReservationStoreContract, ConfirmKeepsTheGreaterVersion) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 5));
  // Confirming again, or a replay of an older fact, changes nothing.
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 5));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 5));
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 3));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 5));
  // A later fact raises it.
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 8));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 8));
}

TEST_P(ReservationStoreContract, ConfirmOfAKeyInAnotherOwnersLivePendingFails) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kBob, "h1", kTtl));
  const auto before = store_->Find(kScope, "ann");
  EXPECT_FALSE(store_->Confirm(kScope, "ann", kAlice, 1));
  EXPECT_EQ(store_->Find(kScope, "ann"), before);
}

TEST_P(ReservationStoreContract, ConfirmOfAKeyConfirmedByAnotherOwnerFails) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kBob, 1));
  EXPECT_FALSE(store_->Confirm(kScope, "ann", kAlice, 7));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kBob, 1));
}

// --- Release ------------------------------------------------------------------------------------

TEST_P(ReservationStoreContract, ReleaseOfAFreeKeyDoesNothing) {
  EXPECT_FALSE(store_->Release(kScope, "ann", kAlice, kAnyVersion));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
}

TEST_P(ReservationStoreContract, ReleaseAtAnyVersionDeletesTheOwnersLivePendingWhateverItsHolds) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h2", kTtl));
  EXPECT_TRUE(store_->Release(kScope, "ann", kAlice, kAnyVersion));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
}

// A release at a version is a fact of the log, maybe applied late: the owner's live pending
// reservation belongs to a later attempt, and deleting it would let another aggregate take the key
// while that attempt's stream lands with it.
TEST_P(ReservationStoreContract, ReleaseAtAVersionLeavesTheOwnersLivePendingToItsAttempt) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  EXPECT_FALSE(store_->Release(kScope, "ann", kAlice, 2));
  EXPECT_FALSE(store_->Release(kScope, "ann", kAlice, kUnversioned));
  EXPECT_EQ(store_->Find(kScope, "ann"),
            Pending("ann", kAlice, {"h1"}, clock_->NowMillis() + kTtl.count()));
  EXPECT_FALSE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
}

TEST_P(ReservationStoreContract, ReleaseOfTheOwnersExpiredPendingDeletesIt) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  clock_->Advance(kTtl);
  EXPECT_TRUE(store_->Release(kScope, "ann", kAlice, kUnversioned));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
}

TEST_P(ReservationStoreContract, ReleaseOfAnotherOwnersExpiredPendingDoesNothing) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kBob, "h1", kTtl));
  clock_->Advance(kTtl);
  const auto before = store_->Find(kScope, "ann");
  EXPECT_FALSE(store_->Release(kScope, "ann", kAlice, kAnyVersion));
  EXPECT_EQ(store_->Find(kScope, "ann"), before);
}

TEST_P(ReservationStoreContract, ReleaseAtTheConfirmingVersionOrLaterDeletesAConfirmedKey) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 4));
  EXPECT_TRUE(store_->Release(kScope, "ann", kAlice, 4));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);

  ASSERT_TRUE(store_->Confirm(kScope, "bea", kAlice, 4));
  EXPECT_TRUE(store_->Release(kScope, "bea", kAlice, 5));
  EXPECT_EQ(store_->Find(kScope, "bea"), std::nullopt);
}

TEST_P(ReservationStoreContract, ReleaseOfAnOldFactKeepsAKeyALaterFactConfirmed) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 4));
  EXPECT_FALSE(store_->Release(kScope, "ann", kAlice, 3));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 4));
}

TEST_P(ReservationStoreContract, ReleaseOfAnOldFactReplayedKeepsAKeyALaterFactConfirmed) {
  // The facts of alice: v1 takes the name "a"; v2 renames it a -> b; v3 renames it back b -> a.
  auto apply_facts = [&] {
    EXPECT_TRUE(store_->Confirm(kScope, "a", kAlice, 1));
    EXPECT_TRUE(store_->Confirm(kScope, "b", kAlice, 2));
    store_->Release(kScope, "a", kAlice, 2);  // true the first time; false once v3 confirmed "a"
    EXPECT_TRUE(store_->Confirm(kScope, "a", kAlice, 3));
    EXPECT_TRUE(store_->Release(kScope, "b", kAlice, 3));
  };
  apply_facts();
  ASSERT_EQ(store_->Find(kScope, "a"), Confirmed("a", kAlice, 3));
  ASSERT_EQ(store_->Find(kScope, "b"), std::nullopt);

  // A subscription replays v2's release alone: "a" was confirmed again by v3, so it stays.
  EXPECT_FALSE(store_->Release(kScope, "a", kAlice, 2));
  EXPECT_EQ(store_->Find(kScope, "a"), Confirmed("a", kAlice, 3));

  // Replaying every fact again ends where the facts left the keys.
  apply_facts();
  EXPECT_EQ(store_->Find(kScope, "a"), Confirmed("a", kAlice, 3));
  EXPECT_EQ(store_->Find(kScope, "b"), std::nullopt);
  EXPECT_FALSE(store_->Reserve(kScope, "a", kBob, "h1", kTtl));
  EXPECT_TRUE(store_->Reserve(kScope, "b", kBob, "h1", kTtl));
}

TEST_P(ReservationStoreContract, ReleaseWithAnyVersionFreesWhateverConfirmedIt) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 1'000'000));
  EXPECT_TRUE(store_->Release(kScope, "ann", kAlice, kAnyVersion));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);

  ASSERT_TRUE(store_->Confirm(kScope, "bea", kAlice, kUnversioned));
  EXPECT_TRUE(store_->Release(kScope, "bea", kAlice, kAnyVersion));
  EXPECT_EQ(store_->Find(kScope, "bea"), std::nullopt);

  ASSERT_TRUE(store_->Reserve(kScope, "cid", kAlice, "h1", kTtl));
  EXPECT_TRUE(store_->Release(kScope, "cid", kAlice, kAnyVersion));
  EXPECT_EQ(store_->Find(kScope, "cid"), std::nullopt);
}

TEST_P(ReservationStoreContract, ReleaseOfAnotherOwnersKeyDoesNothing) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kBob, "h1", kTtl));
  ASSERT_TRUE(store_->Confirm(kScope, "bea", kBob, 1));
  const auto ann = store_->Find(kScope, "ann");
  EXPECT_FALSE(store_->Release(kScope, "ann", kAlice, kAnyVersion));
  EXPECT_FALSE(store_->Release(kScope, "bea", kAlice, kAnyVersion));
  EXPECT_EQ(store_->Find(kScope, "ann"), ann);
  EXPECT_EQ(store_->Find(kScope, "bea"), Confirmed("bea", kBob, 1));
}

// --- Abandon ------------------------------------------------------------------------------------

TEST_P(ReservationStoreContract, AbandonRemovesOnlyItsOwnHold) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h2", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h3", kTtl));
  EXPECT_TRUE(store_->Abandon(kScope, "ann", kAlice, "h2"));
  EXPECT_EQ(store_->Find(kScope, "ann"),
            Pending("ann", kAlice, {"h1", "h3"}, clock_->NowMillis() + kTtl.count()));
}

TEST_P(ReservationStoreContract, AbandonOfTheLastHoldDeletesTheReservation) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  EXPECT_TRUE(store_->Abandon(kScope, "ann", kAlice, "h1"));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kBob, "h2", kTtl));
}

TEST_P(ReservationStoreContract, AKeyStaysReservedWhileAnotherAttemptHoldsIt) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h2", kTtl));
  EXPECT_TRUE(store_->Abandon(kScope, "ann", kAlice, "h1"));
  EXPECT_FALSE(store_->Reserve(kScope, "ann", kBob, "h3", kTtl));
  EXPECT_FALSE(store_->Confirm(kScope, "ann", kBob, 1));
  EXPECT_EQ(store_->Find(kScope, "ann"),
            Pending("ann", kAlice, {"h2"}, clock_->NowMillis() + kTtl.count()));
  // The other attempt's events were appended after all.
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 1));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 1));
}

TEST_P(ReservationStoreContract, AbandonOfTheOwnersExpiredPendingRemovesItsHold) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h2", kTtl));
  const EpochMillis expires_at = clock_->NowMillis() + kTtl.count();
  clock_->Advance(kTtl * 2);
  EXPECT_TRUE(store_->Abandon(kScope, "ann", kAlice, "h1"));
  EXPECT_EQ(store_->Find(kScope, "ann"), Pending("ann", kAlice, {"h2"}, expires_at));
  EXPECT_TRUE(store_->Abandon(kScope, "ann", kAlice, "h2"));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
}

TEST_P(ReservationStoreContract, AbandonOfAHoldThatDoesNotHoldTheKeyDoesNothing) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  const auto before = store_->Find(kScope, "ann");
  EXPECT_FALSE(store_->Abandon(kScope, "ann", kAlice, "h9"));
  EXPECT_EQ(store_->Find(kScope, "ann"), before);
}

TEST_P(ReservationStoreContract, AbandonOfAFreeKeyDoesNothing) {
  EXPECT_FALSE(store_->Abandon(kScope, "ann", kAlice, "h1"));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
}

TEST_P(ReservationStoreContract, AConfirmedKeyIsNeverAbandoned) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 1));
  EXPECT_FALSE(store_->Abandon(kScope, "ann", kAlice, "h1"));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 1));
}

TEST_P(ReservationStoreContract, AbandonOfAnotherOwnersReservationDoesNothing) {
  // bob's live pending, bob's expired pending and bob's confirmed key, all under the hold "h1".
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kBob, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "bea", kBob, "h1", milliseconds(1)));
  ASSERT_TRUE(store_->Confirm(kScope, "cid", kBob, 1));
  clock_->Advance(milliseconds(1));
  for (const char* key : {"ann", "bea", "cid"}) {
    const auto before = store_->Find(kScope, key);
    EXPECT_FALSE(store_->Abandon(kScope, key, kAlice, "h1")) << key;
    EXPECT_EQ(store_->Find(kScope, key), before) << key;
  }
}

// --- Owners, versions and scopes ----------------------------------------------------------------

TEST_P(ReservationStoreContract, EveryOperationDoesNothingForAnotherOwner) {
  // alice's live pending, expired pending and confirmed keys; bob uses alice's hold name.
  ASSERT_TRUE(store_->Reserve(kScope, "live", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "expired", kAlice, "h1", milliseconds(1)));
  ASSERT_TRUE(store_->Confirm(kScope, "confirmed", kAlice, 2));
  clock_->Advance(milliseconds(1));
  // alice of another tenant is another owner too.
  for (const AggregateRef& other : {kBob, User("alice", "t2")}) {
    for (const char* key : {"live", "expired", "confirmed"}) {
      SCOPED_TRACE(ToString(other) + " on " + key);
      const auto before = store_->Find(kScope, key);
      ASSERT_TRUE(before.has_value());
      if (std::string(key) != "expired") {  // anyone takes an expired pending (other tests)
        EXPECT_FALSE(store_->Reserve(kScope, key, other, "h1", kTtl));
        EXPECT_FALSE(store_->Confirm(kScope, key, other, 3));
      }
      EXPECT_FALSE(store_->Release(kScope, key, other, kAnyVersion));
      EXPECT_FALSE(store_->Abandon(kScope, key, other, "h1"));
      EXPECT_EQ(store_->Find(kScope, key), before);
    }
  }
}

TEST_P(ReservationStoreContract, AnOwnerIsComparedFieldByField) {
  const ReservationScope system{"shop", "user", "", "shop.email"};
  ASSERT_TRUE(store_->Reserve(system, "a@x", User("alice", "t1"), "h1", kTtl));
  // The same id in another tenant is another aggregate.
  EXPECT_FALSE(store_->Reserve(system, "a@x", User("alice", "t2"), "h2", kTtl));
  EXPECT_FALSE(store_->Confirm(system, "a@x", User("alice", "t2"), 1));
  EXPECT_EQ(store_->Find(system, "a@x"),
            Pending("a@x", User("alice", "t1"), {"h1"}, clock_->NowMillis() + kTtl.count()));
  // An equal ref built apart is the same owner.
  EXPECT_TRUE(store_->Confirm(system, "a@x", AggregateRef{"shop", "user", "t1", "alice"}, 1));
}

TEST_P(ReservationStoreContract, UnversionedIsBelowEveryStreamVersion) {
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, kUnversioned));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, kUnversioned));
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 1));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 1));
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, kUnversioned));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 1));
  // An imported key's release cannot free a key a stream's fact confirmed...
  EXPECT_FALSE(store_->Release(kScope, "ann", kAlice, kUnversioned));
  EXPECT_EQ(store_->Find(kScope, "ann"), Confirmed("ann", kAlice, 1));
  // ...and any stream's release frees an imported key.
  ASSERT_TRUE(store_->Confirm(kScope, "bea", kAlice, kUnversioned));
  EXPECT_TRUE(store_->Release(kScope, "bea", kAlice, 1));
  EXPECT_EQ(store_->Find(kScope, "bea"), std::nullopt);
  ASSERT_TRUE(store_->Confirm(kScope, "cid", kAlice, kUnversioned));
  EXPECT_TRUE(store_->Release(kScope, "cid", kAlice, kUnversioned));
  EXPECT_EQ(store_->Find(kScope, "cid"), std::nullopt);
}

TEST_P(ReservationStoreContract, TwoAggregateTypesUsingOneNamespaceNeverConflict) {
  const ReservationScope users{"shop", "user", "t1", "shop.name"};
  const ReservationScope admins{"shop", "admin", "t1", "shop.name"};
  const AggregateRef admin{"shop", "admin", "t1", "alice"};
  EXPECT_TRUE(store_->Confirm(users, "ann", kAlice, 1));
  EXPECT_TRUE(store_->Reserve(admins, "ann", admin, "h1", kTtl));
  EXPECT_TRUE(store_->Confirm(admins, "ann", admin, 1));
  EXPECT_EQ(store_->Find(users, "ann"), Confirmed("ann", kAlice, 1));
  EXPECT_EQ(store_->Find(admins, "ann"), Confirmed("ann", admin, 1));
  EXPECT_TRUE(store_->Release(admins, "ann", admin, 1));
  EXPECT_EQ(store_->Find(users, "ann"), Confirmed("ann", kAlice, 1));
}

TEST_P(ReservationStoreContract, TwoContextsUsingOneNamespaceNeverConflict) {
  const ReservationScope shop_users{"shop", "user", "t1", "users.name"};
  const ReservationScope crm_users{"crm", "user", "t1", "users.name"};
  const AggregateRef crm_alice{"crm", "user", "t1", "alice"};
  EXPECT_TRUE(store_->Confirm(shop_users, "ann", kAlice, 1));
  EXPECT_TRUE(store_->Confirm(crm_users, "ann", crm_alice, 1));
  EXPECT_EQ(store_->Find(shop_users, "ann"), Confirmed("ann", kAlice, 1));
  EXPECT_EQ(store_->Find(crm_users, "ann"), Confirmed("ann", crm_alice, 1));
}

TEST_P(ReservationStoreContract, NamespacesAreIsolated) {
  const ReservationScope names{"shop", "user", "t1", "shop.user-name"};
  const ReservationScope emails{"shop", "user", "t1", "shop.user-email"};
  EXPECT_TRUE(store_->Confirm(names, "ann", kAlice, 1));
  EXPECT_TRUE(store_->Reserve(emails, "ann", kBob, "h1", kTtl));
  EXPECT_EQ(store_->Find(names, "ann")->owner, kAlice);
  EXPECT_EQ(store_->Find(emails, "ann")->owner, kBob);
}

TEST_P(ReservationStoreContract, TenantsAreIsolated) {
  const ReservationScope t1{"shop", "user", "t1", "shop.user-name"};
  const ReservationScope t2{"shop", "user", "t2", "shop.user-name"};
  const AggregateRef carol = User("carol", "t2");
  EXPECT_TRUE(store_->Confirm(t1, "ann", kAlice, 1));
  EXPECT_TRUE(store_->Reserve(t2, "ann", carol, "h1", kTtl));
  EXPECT_TRUE(store_->Confirm(t2, "ann", carol, 1));
  EXPECT_EQ(store_->Find(t1, "ann"), Confirmed("ann", kAlice, 1));
  EXPECT_EQ(store_->Find(t2, "ann"), Confirmed("ann", carol, 1));
  EXPECT_TRUE(store_->Release(t2, "ann", carol, 1));
  EXPECT_EQ(store_->Find(t1, "ann"), Confirmed("ann", kAlice, 1));
}

TEST_P(ReservationStoreContract, SystemTenantScopeSpansTenants) {
  const ReservationScope system{"shop", "user", std::string(kSystemTenant), "shop.email"};
  const AggregateRef carol = User("carol", "t2");
  EXPECT_TRUE(store_->Reserve(system, "a@x", kAlice, "h1", kTtl));
  EXPECT_FALSE(store_->Reserve(system, "a@x", carol, "h2", kTtl));
  EXPECT_FALSE(store_->Confirm(system, "a@x", carol, 1));
  EXPECT_TRUE(store_->Confirm(system, "a@x", kAlice, 1));
  EXPECT_FALSE(store_->Reserve(system, "a@x", carol, "h2", kTtl));
  EXPECT_EQ(store_->Find(system, "a@x"), Confirmed("a@x", kAlice, 1));
  // Released by its owner, the key is free for any tenant's aggregate.
  EXPECT_TRUE(store_->Release(system, "a@x", kAlice, 1));
  EXPECT_TRUE(store_->Reserve(system, "a@x", carol, "h2", kTtl));
}

TEST_P(ReservationStoreContract, ASystemTenantKeyAndATenantKeyAreDistinct) {
  const ReservationScope system{"shop", "user", "", "shop.name"};
  const ReservationScope t1{"shop", "user", "t1", "shop.name"};
  EXPECT_TRUE(store_->Confirm(system, "ann", kAlice, 1));
  EXPECT_TRUE(store_->Confirm(t1, "ann", kBob, 1));
  EXPECT_EQ(store_->Find(system, "ann")->owner, kAlice);
  EXPECT_EQ(store_->Find(t1, "ann")->owner, kBob);
}

// --- List ---------------------------------------------------------------------------------------

TEST_P(ReservationStoreContract, ListPagesThroughAScopeInKeyOrder) {
  for (const char* key : {"dan", "bea", "eve", "ann", "cid"}) {
    ASSERT_TRUE(store_->Reserve(kScope, key, kAlice, "h1", kTtl));
  }
  using Keys = std::vector<std::string>;
  EXPECT_EQ(KeysOf(store_->List(kScope, "", 2)), (Keys{"ann", "bea"}));
  EXPECT_EQ(KeysOf(store_->List(kScope, "bea", 2)), (Keys{"cid", "dan"}));
  EXPECT_EQ(KeysOf(store_->List(kScope, "dan", 2)), (Keys{"eve"}));
  EXPECT_EQ(KeysOf(store_->List(kScope, "eve", 2)), Keys{});
  EXPECT_EQ(KeysOf(store_->List(kScope, "", 100)), (Keys{"ann", "bea", "cid", "dan", "eve"}));
  EXPECT_EQ(KeysOf(store_->List(kScope, "", 1)), (Keys{"ann"}));
}

TEST_P(ReservationStoreContract, ListStartsAfterAKeyThatIsNotReserved) {
  for (const char* key : {"ann", "cid", "eve"}) {
    ASSERT_TRUE(store_->Confirm(kScope, key, kAlice, 1));
  }
  using Keys = std::vector<std::string>;
  EXPECT_EQ(KeysOf(store_->List(kScope, "b", 10)), (Keys{"cid", "eve"}));
  EXPECT_EQ(KeysOf(store_->List(kScope, "an", 10)), (Keys{"ann", "cid", "eve"}));
  EXPECT_EQ(KeysOf(store_->List(kScope, "ann0", 10)), (Keys{"cid", "eve"}));
  EXPECT_EQ(KeysOf(store_->List(kScope, "zzz", 10)), Keys{});
}

TEST_P(ReservationStoreContract, ListReturnsOnlyItsScopesReservations) {
  const std::vector<std::pair<ReservationScope, AggregateRef>> others = {
      {{"shop", "user", "t1", "shop.user-nam"}, kAlice},
      {{"shop", "user", "t1", "shop.user-name2"}, kAlice},
      {{"shop", "user", "t0", "shop.user-name"}, User("alice", "t0")},
      {{"shop", "user", "t2", "shop.user-name"}, User("alice", "t2")},
      {{"shop", "user", "", "shop.user-name"}, kAlice},
      {{"shop", "admin", "t1", "shop.user-name"}, {"shop", "admin", "t1", "alice"}},
      {{"shop", "vip", "t1", "shop.user-name"}, {"shop", "vip", "t1", "alice"}},
      {{"crm", "user", "t1", "shop.user-name"}, {"crm", "user", "t1", "alice"}},
      {{"try", "user", "t1", "shop.user-name"}, {"try", "user", "t1", "alice"}},
  };
  for (const auto& [scope, owner] : others) {
    ASSERT_TRUE(store_->Confirm(scope, "a", owner, 1));
    ASSERT_TRUE(store_->Confirm(scope, "bea", owner, 1));
    ASSERT_TRUE(store_->Confirm(scope, "z", owner, 1));
  }
  ASSERT_TRUE(store_->Confirm(kScope, "bea", kAlice, 1));
  EXPECT_EQ(store_->List(kScope, "", 100), std::vector<Reservation>{Confirmed("bea", kAlice, 1)});
}

TEST_P(ReservationStoreContract, ListShowsReservationsAsStored) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h2", kTtl));
  ASSERT_TRUE(store_->Confirm(kScope, "bea", kBob, 7));
  EXPECT_EQ(store_->List(kScope, "", 10),
            (std::vector<Reservation>{
                Pending("ann", kAlice, {"h1", "h2"}, clock_->NowMillis() + kTtl.count()),
                Confirmed("bea", kBob, 7)}));
}

// --- Bad input ----------------------------------------------------------------------------------

TEST_P(ReservationStoreContract, AnEmptyNamespaceIsRefused) {
  ReservationScope scope = kScope;
  scope.ns = "";
  EXPECT_TRUE(
      RefusedNaming("namespace", [&] { store_->Reserve(scope, "ann", kAlice, "h1", kTtl); }));
  EXPECT_TRUE(RefusedNaming("namespace", [&] { store_->Confirm(scope, "ann", kAlice, 1); }));
  EXPECT_TRUE(RefusedNaming("namespace", [&] { store_->Release(scope, "ann", kAlice, 1); }));
  EXPECT_TRUE(RefusedNaming("namespace", [&] { store_->Abandon(scope, "ann", kAlice, "h1"); }));
  EXPECT_TRUE(RefusedNaming("namespace", [&] { store_->Find(scope, "ann"); }));
  EXPECT_TRUE(RefusedNaming("namespace", [&] { store_->List(scope, "", 10); }));
}

TEST_P(ReservationStoreContract, AnEmptyKeyIsRefused) {
  EXPECT_TRUE(RefusedNaming("key", [&] { store_->Reserve(kScope, "", kAlice, "h1", kTtl); }));
  EXPECT_TRUE(RefusedNaming("key", [&] { store_->Confirm(kScope, "", kAlice, 1); }));
  EXPECT_TRUE(RefusedNaming("key", [&] { store_->Release(kScope, "", kAlice, 1); }));
  EXPECT_TRUE(RefusedNaming("key", [&] { store_->Abandon(kScope, "", kAlice, "h1"); }));
  EXPECT_TRUE(RefusedNaming("key", [&] { store_->Find(kScope, ""); }));
  EXPECT_EQ(store_->List(kScope, "", 10), std::vector<Reservation>{});
}

TEST_P(ReservationStoreContract, AKeyOrNamespaceOver512BytesIsRefused) {
  const std::string long_key(513, 'k');
  EXPECT_TRUE(RefusedNaming("key", [&] { store_->Reserve(kScope, long_key, kAlice, "h1", kTtl); }));
  EXPECT_TRUE(RefusedNaming("key", [&] { store_->Confirm(kScope, long_key, kAlice, 1); }));
  EXPECT_EQ(store_->List(kScope, "", 10), std::vector<Reservation>{});
  ReservationScope long_ns = kScope;
  long_ns.ns = std::string(513, 'n');
  EXPECT_TRUE(
      RefusedNaming("namespace", [&] { store_->Reserve(long_ns, "ann", kAlice, "h1", kTtl); }));
  EXPECT_TRUE(RefusedNaming("namespace", [&] { store_->Confirm(long_ns, "ann", kAlice, 1); }));

  // 512 bytes are allowed.
  ReservationScope ns512 = kScope;
  ns512.ns = std::string(512, 'n');
  const std::string key512(512, 'k');
  EXPECT_TRUE(store_->Reserve(ns512, key512, kAlice, "h1", kTtl));
  EXPECT_EQ(store_->Find(ns512, key512)->key, key512);
}

TEST_P(ReservationStoreContract, ATtlOfZeroOrLessIsRefused) {
  for (milliseconds ttl : {milliseconds(0), milliseconds(-1), milliseconds(-kTtl.count())}) {
    SCOPED_TRACE(ttl.count());
    EXPECT_TRUE(RefusedNaming("ttl", [&] { store_->Reserve(kScope, "ann", kAlice, "h1", ttl); }));
    EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
  }
  // Nor does it add a hold to a reservation the owner holds.
  ASSERT_TRUE(store_->Reserve(kScope, "bea", kAlice, "h1", kTtl));
  const auto before = store_->Find(kScope, "bea");
  EXPECT_TRUE(
      RefusedNaming("ttl", [&] { store_->Reserve(kScope, "bea", kAlice, "h2", milliseconds(0)); }));
  EXPECT_EQ(store_->Find(kScope, "bea"), before);
}

TEST_P(ReservationStoreContract, AVersionBelowUnversionedIsRefused) {
  for (Version version : {kUnversioned - 1, std::numeric_limits<Version>::min()}) {
    SCOPED_TRACE(version);
    EXPECT_TRUE(RefusedNaming("version", [&] { store_->Confirm(kScope, "ann", kAlice, version); }));
    EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
  }
  // Nor does it touch a reservation the owner holds.
  ASSERT_TRUE(store_->Reserve(kScope, "bea", kAlice, "h1", kTtl));
  ASSERT_TRUE(store_->Confirm(kScope, "cid", kAlice, kUnversioned));
  const auto bea = store_->Find(kScope, "bea");
  EXPECT_TRUE(RefusedNaming("version", [&] { store_->Confirm(kScope, "bea", kAlice, -1); }));
  EXPECT_TRUE(RefusedNaming("version", [&] { store_->Release(kScope, "bea", kAlice, -1); }));
  EXPECT_TRUE(RefusedNaming("version", [&] { store_->Release(kScope, "cid", kAlice, -1); }));
  EXPECT_EQ(store_->Find(kScope, "bea"), bea);
  EXPECT_EQ(store_->Find(kScope, "cid"), Confirmed("cid", kAlice, kUnversioned));
}

TEST_P(ReservationStoreContract, AnOwnerOfAnotherTypeThanTheScopesIsRefused) {
  const AggregateRef admin{"shop", "admin", "t1", "alice"};
  const AggregateRef crm_user{"crm", "user", "t1", "alice"};
  for (const AggregateRef& owner : {admin, crm_user}) {
    SCOPED_TRACE(ToString(owner));
    EXPECT_TRUE(RefusedNaming("owner", [&] { store_->Reserve(kScope, "ann", owner, "h1", kTtl); }));
    EXPECT_TRUE(RefusedNaming("owner", [&] { store_->Confirm(kScope, "ann", owner, 1); }));
    EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
  }
  // Nor does it touch the key of the scope's aggregate of the same id.
  ASSERT_TRUE(store_->Reserve(kScope, "bea", kAlice, "h1", kTtl));
  const auto before = store_->Find(kScope, "bea");
  EXPECT_TRUE(RefusedNaming("owner", [&] { store_->Release(kScope, "bea", admin, kAnyVersion); }));
  EXPECT_TRUE(RefusedNaming("owner", [&] { store_->Abandon(kScope, "bea", admin, "h1"); }));
  EXPECT_EQ(store_->Find(kScope, "bea"), before);
}

TEST_P(ReservationStoreContract, AnEmptyHoldIsRefused) {
  EXPECT_TRUE(RefusedNaming("hold", [&] { store_->Reserve(kScope, "ann", kAlice, "", kTtl); }));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
  ASSERT_TRUE(store_->Reserve(kScope, "bea", kAlice, "h1", kTtl));
  const auto before = store_->Find(kScope, "bea");
  EXPECT_TRUE(RefusedNaming("hold", [&] { store_->Reserve(kScope, "bea", kAlice, "", kTtl); }));
  EXPECT_TRUE(RefusedNaming("hold", [&] { store_->Abandon(kScope, "bea", kAlice, ""); }));
  EXPECT_EQ(store_->Find(kScope, "bea"), before);
}

TEST_P(ReservationStoreContract, AnInvalidScopeOrOwnerIsRefused) {
  ReservationScope bad_context = kScope;
  bad_context.context = "Shop";
  EXPECT_TRUE(
      RefusedNaming("context", [&] { store_->Reserve(bad_context, "ann", kAlice, "h1", kTtl); }));
  ReservationScope bad_type = kScope;
  bad_type.aggregate = "user_name";
  EXPECT_TRUE(
      RefusedNaming("aggregate type", [&] { store_->Confirm(bad_type, "ann", kAlice, 1); }));
  ReservationScope long_tenant = kScope;
  long_tenant.tenant_id = std::string(257, 't');
  EXPECT_TRUE(
      RefusedNaming("tenant", [&] { store_->Reserve(long_tenant, "ann", kAlice, "h1", kTtl); }));
  const AggregateRef no_id{"shop", "user", "t1", ""};
  EXPECT_TRUE(RefusedNaming("id", [&] { store_->Reserve(kScope, "ann", no_id, "h1", kTtl); }));
  EXPECT_TRUE(RefusedNaming("id", [&] { store_->Confirm(kScope, "ann", no_id, 1); }));
  EXPECT_EQ(store_->Find(kScope, "ann"), std::nullopt);
}

// --- Races --------------------------------------------------------------------------------------

// Runs `rounds` races between `racers` threads started together by a barrier. Before each round,
// `prepare(key)` runs alone on the round's fresh key; then every racer calls `race(racer, key)` at
// once; then `judge(key, wins)` runs alone with what each racer returned, and returns false to end
// the races early (after its failed expectations), so a broken store fails fast.
void RunRaces(int racers, int rounds, const std::function<void(const std::string&)>& prepare,
              const std::function<bool(int, const std::string&)>& race,
              const std::function<bool(const std::string&, const std::vector<char>&)>& judge) {
  std::barrier sync(racers + 1);
  std::string key;                          // written before a start, read after it
  bool stop = false;                        // likewise
  std::vector<char> wins(racers);           // written before a finish, read after it
  std::vector<std::string> errors(racers);  // likewise
  std::vector<std::jthread> threads;
  for (int racer = 0; racer < racers; ++racer) {
    threads.emplace_back([&, racer] {
      for (;;) {
        sync.arrive_and_wait();  // start
        if (stop) return;
        try {
          wins[racer] = race(racer, key);
        } catch (const std::exception& e) {
          wins[racer] = false;
          errors[racer] = e.what();
        }
        sync.arrive_and_wait();  // finish
      }
    });
  }
  for (int round = 0; round < rounds && !stop; ++round) {
    key = "race-" + std::to_string(round);
    try {
      prepare(key);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << round << ": preparing threw " << e.what();
      break;
    }
    if (::testing::Test::HasFatalFailure()) break;
    sync.arrive_and_wait();  // start
    sync.arrive_and_wait();  // finish
    for (int racer = 0; racer < racers; ++racer) {
      if (!errors[racer].empty()) {
        ADD_FAILURE() << "round " << round << ": racer " << racer << " threw " << errors[racer];
        stop = true;
      }
    }
    if (!stop && !judge(key, wins)) {
      ADD_FAILURE() << "round " << round << " of " << rounds << " went wrong";
      stop = true;
    }
  }
  stop = true;
  sync.arrive_and_wait();  // the racers start, see `stop` and return
}

int CountWins(const std::vector<char>& wins) {
  return static_cast<int>(std::count_if(wins.begin(), wins.end(), [](char won) { return won; }));
}

// The first racer that won.
int Winner(const std::vector<char>& wins) {
  return static_cast<int>(std::find_if(wins.begin(), wins.end(), [](char won) { return won; }) -
                          wins.begin());
}

TEST_P(ReservationStoreContract, ConcurrentReservesOfAFreeKeyHaveExactlyOneWinner) {
  constexpr int kRacers = 16;
  auto owner = [](int racer) { return User("racer-" + std::to_string(racer)); };
  auto hold = [](int racer) { return "h" + std::to_string(racer); };
  RunRaces(
      kRacers, 1'000, [](const std::string&) {},
      [&](int racer, const std::string& key) {
        return store_->Reserve(kScope, key, owner(racer), hold(racer), kTtl);
      },
      [&](const std::string& key, const std::vector<char>& wins) {
        EXPECT_EQ(CountWins(wins), 1);
        if (CountWins(wins) != 1) return false;
        const int winner = Winner(wins);
        const auto r = store_->Find(kScope, key);
        EXPECT_EQ(r,
                  Pending(key, owner(winner), {hold(winner)}, clock_->NowMillis() + kTtl.count()));
        return r.has_value() && r->owner == owner(winner);
      });
}

TEST_P(ReservationStoreContract, ConcurrentReservesOfOneOwnersAttemptsAllHoldTheKey) {
  constexpr int kRacers = 16;
  std::set<std::string> all_holds;
  for (int racer = 0; racer < kRacers; ++racer) all_holds.insert("h" + std::to_string(racer));
  RunRaces(
      kRacers, 200, [](const std::string&) {},
      [&](int racer, const std::string& key) {
        return store_->Reserve(kScope, key, kAlice, "h" + std::to_string(racer), kTtl);
      },
      [&](const std::string& key, const std::vector<char>& wins) {
        EXPECT_EQ(CountWins(wins), kRacers);
        const auto r = store_->Find(kScope, key);
        EXPECT_EQ(r, Pending(key, kAlice, all_holds, clock_->NowMillis() + kTtl.count()));
        return CountWins(wins) == kRacers && r.has_value() && r->holds == all_holds;
      });
}

TEST_P(ReservationStoreContract,
       ConcurrentConfirmAndAnotherOwnersReserveOfAnExpiredPendingHaveExactlyOneWinner) {
  // alice's attempt reserved the key and expired; its events were appended after all, while
  // bob reserves the key: whichever comes first holds it, never both.
  RunRaces(
      2, 1'000,
      [&](const std::string& key) {
        ASSERT_TRUE(store_->Reserve(kScope, key, kAlice, "ha", milliseconds(1)));
        clock_->Advance(milliseconds(1));
      },
      [&](int racer, const std::string& key) {
        return racer == 0 ? store_->Confirm(kScope, key, kAlice, 1)
                          : store_->Reserve(kScope, key, kBob, "hb", kTtl);
      },
      [&](const std::string& key, const std::vector<char>& wins) {
        EXPECT_EQ(CountWins(wins), 1);
        if (CountWins(wins) != 1) return false;
        const auto r = store_->Find(kScope, key);
        const Reservation expected =
            wins[0] ? Confirmed(key, kAlice, 1)
                    : Pending(key, kBob, {"hb"}, clock_->NowMillis() + kTtl.count());
        EXPECT_EQ(r, expected);
        return r == expected;
      });
}

TEST_P(ReservationStoreContract, ConcurrentAbandonAndReserveOfAnotherAttemptKeepTheKeyHeld) {
  // The hold added while another attempt abandons its own keeps the key, whichever comes first.
  RunRaces(
      2, 1'000,
      [&](const std::string& key) {
        ASSERT_TRUE(store_->Reserve(kScope, key, kAlice, "h1", kTtl));
      },
      [&](int racer, const std::string& key) {
        return racer == 0 ? store_->Abandon(kScope, key, kAlice, "h1")
                          : store_->Reserve(kScope, key, kAlice, "h2", kTtl);
      },
      [&](const std::string& key, const std::vector<char>& wins) {
        EXPECT_EQ(CountWins(wins), 2);
        const auto r = store_->Find(kScope, key);
        const Reservation expected =
            Pending(key, kAlice, {"h2"}, clock_->NowMillis() + kTtl.count());
        EXPECT_EQ(r, expected);
        return CountWins(wins) == 2 && r == expected;
      });
}

TEST_P(ReservationStoreContract,
       ConcurrentConfirmsOfAFreeKeyByDifferentOwnersHaveExactlyOneWinner) {
  constexpr int kRacers = 8;
  auto owner = [](int racer) { return User("racer-" + std::to_string(racer)); };
  RunRaces(
      kRacers, 200, [](const std::string&) {},
      [&](int racer, const std::string& key) {
        return store_->Confirm(kScope, key, owner(racer), racer + 1);
      },
      [&](const std::string& key, const std::vector<char>& wins) {
        EXPECT_EQ(CountWins(wins), 1);
        if (CountWins(wins) != 1) return false;
        const int winner = Winner(wins);
        const auto r = store_->Find(kScope, key);
        EXPECT_EQ(r, Confirmed(key, owner(winner), winner + 1));
        return r == Confirmed(key, owner(winner), winner + 1);
      });
}

}  // namespace
}  // namespace wow::contract
