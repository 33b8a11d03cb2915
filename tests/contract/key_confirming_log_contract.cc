// The contract of a log whose appends confirm their keys (StoreSet::appends_confirm_keys): an
// append confirms each key its stream reserved and releases each key it released, at its version,
// in the same step as the append; an append that does not land changes no key; an attempt's stream
// is appended only while each key it reserved is still the attempt's own; and a confirmation that
// finds another owner (a stream no decision made) leaves the key and is a key incident.
#include "contract/backends.h"
#include "wow/incidents.h"

namespace wow::contract {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTtl{30'000};

ReservationScope Names() { return {"shop", "brand", "t1", "shop.brand-name"}; }

AggregateRef Ref(const std::string& id) { return {"shop", "brand", "t1", id}; }

// A valid stream of `ref` at `version` that reserves `key` (and releases `released`, if any).
Stream Reserving(const AggregateRef& ref, Version version, const std::string& key,
                 const std::string& released = "") {
  Stream stream;
  stream.ref = ref;
  stream.version = version;
  stream.request_id = "req-" + ref.id + "@" + std::to_string(version);
  stream.events = {{"created", R"({"name":"acme"})"}};
  stream.reserved = {{Names().ns, key, ReservationTenancy::kTenant}};
  if (!released.empty()) stream.released = {{Names().ns, released, ReservationTenancy::kTenant}};
  stream.time = 1'700'000'000'000 + version;
  return stream;
}

TEST_P(KeyConfirmingLogContract, AnAppendConfirmsTheKeysItsStreamReserved) {
  ASSERT_TRUE(reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", kTtl));
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  const auto key = reservations_->Find(Names(), "acme");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->state, ReservationState::kConfirmed);
  EXPECT_EQ(key->owner, Ref("b1"));
  EXPECT_EQ(key->version, 1);
  EXPECT_TRUE(key->holds.empty()) << "the confirmation ends the pending holds";
}

TEST_P(KeyConfirmingLogContract, AnAppendReleasesTheKeysItsStreamReleased) {
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 2, "globex", /*released=*/"acme")).appended());
  EXPECT_FALSE(reservations_->Find(Names(), "acme").has_value());
  ASSERT_TRUE(reservations_->Find(Names(), "globex").has_value());
  EXPECT_EQ(reservations_->Find(Names(), "globex")->version, 2);
}

TEST_P(KeyConfirmingLogContract, AnAppendThatDoesNotLandAppliesNoFact) {
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  // Version 3 after 1: a conflict, whose key stays free and whose release does nothing.
  ASSERT_EQ(log_->Append(Reserving(Ref("b1"), 3, "globex", "acme")).kind(),
            AppendResult::Kind::kConflict);
  EXPECT_FALSE(reservations_->Find(Names(), "globex").has_value());
  ASSERT_TRUE(reservations_->Find(Names(), "acme").has_value());
  EXPECT_EQ(reservations_->Find(Names(), "acme")->version, 1);
  // A duplicate request neither.
  Stream again = Reserving(Ref("b1"), 2, "initech", "acme");
  again.request_id = Reserving(Ref("b1"), 1, "acme").request_id;
  ASSERT_EQ(log_->Append(again).kind(), AppendResult::Kind::kDuplicate);
  EXPECT_FALSE(reservations_->Find(Names(), "initech").has_value());
  EXPECT_TRUE(reservations_->Find(Names(), "acme").has_value());
}

// A stream that no decision made (no attempt) is not checked: its confirmation that finds another
// owner leaves the key to it and is an incident, logged and counted, never silent.
TEST_P(KeyConfirmingLogContract, AKeyAnotherAggregateHoldsStaysItsOwnAndIsAnIncident) {
  ASSERT_TRUE(reservations_->Reserve(Names(), "acme", Ref("b2"), "attempt-2", kTtl));
  const std::uint64_t incidents = KeyIncidentCount();
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  const auto key = reservations_->Find(Names(), "acme");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->owner, Ref("b2"));
  EXPECT_EQ(key->state, ReservationState::kPending);
  EXPECT_EQ(KeyIncidentCount(), incidents + 1);
  ASSERT_TRUE(LastKeyIncident());
  EXPECT_EQ(LastKeyIncident()->claimant, Ref("b1"));
  EXPECT_EQ(LastKeyIncident()->holder, Ref("b2"));
  EXPECT_EQ(LastKeyIncident()->key, "acme");
}

// An attempt's stream is appended only while each key it reserved is still the attempt's own.
TEST_P(KeyConfirmingLogContract, AnAttemptsAppendChecksItStillHoldsItsKeys) {
  ASSERT_TRUE(reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", kTtl));
  Stream stream = Reserving(Ref("b1"), 1, "acme");
  stream.attempt = "attempt-9";  // not the hold of the pending reservation
  EXPECT_EQ(log_->Append(stream).kind(), AppendResult::Kind::kConflict);
  stream.attempt = "attempt-1";
  ASSERT_TRUE(reservations_->Release(Names(), "acme", Ref("b1"), kAnyVersion));
  EXPECT_EQ(log_->Append(stream).kind(), AppendResult::Kind::kConflict) << "the key is gone";
  ASSERT_TRUE(reservations_->Reserve(Names(), "acme", Ref("b2"), "attempt-2", kTtl));
  EXPECT_EQ(log_->Append(stream).kind(), AppendResult::Kind::kConflict) << "another's now";
  Sequence appended = 0;
  for (int p = 0; p < kPartitions; ++p) appended += log_->Head(p);
  EXPECT_EQ(appended, 0) << "a refused attempt takes no sequence";
  clock_->Advance(kTtl);  // b2's pending expires; b1's attempt reserves again
  ASSERT_TRUE(reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", kTtl));
  ASSERT_TRUE(log_->Append(stream).appended());
  EXPECT_EQ(reservations_->Find(Names(), "acme")->state, ReservationState::kConfirmed);
  // A key the owner confirmed is its own whatever the attempt: a rename to a new spelling.
  Stream respelled = Reserving(Ref("b1"), 2, "acme");
  respelled.attempt = "attempt-3";
  EXPECT_TRUE(log_->Append(respelled).appended());
}

// The streams of one AppendAll each see the keys the earlier ones left: a key the first released
// is not the second's to confirm unless it reserved it.
TEST_P(KeyConfirmingLogContract, AppendAllAppliesEachStreamsFactsInOrder) {
  ASSERT_TRUE(reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", kTtl));
  Stream first = Reserving(Ref("b1"), 1, "acme");
  first.attempt = "attempt-1";
  Stream second = Reserving(Ref("b1"), 2, "globex", /*released=*/"acme");
  const std::vector<AppendResult> results = log_->AppendAll({first, second});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].appended());
  EXPECT_TRUE(results[1].appended());
  EXPECT_FALSE(reservations_->Find(Names(), "acme").has_value());
  ASSERT_TRUE(reservations_->Find(Names(), "globex").has_value());
  EXPECT_EQ(reservations_->Find(Names(), "globex")->version, 2);
}

}  // namespace
}  // namespace wow::contract
