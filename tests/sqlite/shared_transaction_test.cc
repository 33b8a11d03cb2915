// What the SQLite stores of one file do together: an append applies its stream's key facts to the
// reservation tables in its own transaction; a confirmation or release found done already only
// reads; and only the writes nothing else could rebuild wait for the disk (WriteSync).
#include <gtest/gtest.h>

#include "sqlite_test_support.h"
#include "store/sqlite/database.h"
#include "support/temp_dir.h"
#include "wow/incidents.h"
#include "wow/sqlite.h"
#include "wow/store_wrappers.h"

namespace wow::sqlite_test {
namespace {

using std::chrono::milliseconds;

// The parameter: whether the file's reservation table has the layout of earlier builds
// (CreateEarlierReservationTable).
class SqliteSharedTransactionTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    log_->Create(kPartitions);
    if (GetParam()) CreateEarlierReservationTable(dir_.File("wow.db"), kContext, "brand");
  }

  // The scope of MakeStream's reserved key.
  static ReservationScope Names() { return {kContext, "brand", "t1", "shop.brand-name"}; }

  // The stream of `ref` at `version` that reserves `key` (and releases `released`, if any).
  static Stream Reserving(const AggregateRef& ref, Version version, const std::string& key,
                          const std::string& released = "") {
    Stream stream = MakeStream(ref, version);
    stream.reserved = {{Names().ns, key, ReservationTenancy::kTenant}};
    if (!released.empty()) stream.released = {{Names().ns, released, ReservationTenancy::kTenant}};
    return stream;
  }

  SqliteDatabase::WriteStats Stats() const { return db_->write_stats(); }

  testing_support::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::shared_ptr<SqliteDatabase> db_ = OpenSqliteDatabase(dir_.File("wow.db"));
  std::shared_ptr<EventLog> log_ = NewSqliteEventLog(db_, kContext, clock_);
  std::unique_ptr<ReservationStore> reservations_ = NewSqliteReservationStore(db_, clock_);
};

TEST_P(SqliteSharedTransactionTest, AnAppendConfirmsTheKeysItsStreamReserved) {
  ASSERT_TRUE(
      reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", milliseconds(30'000)));
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  const auto key = reservations_->Find(Names(), "acme");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->state, ReservationState::kConfirmed);
  EXPECT_EQ(key->owner, Ref("b1"));
  EXPECT_EQ(key->version, 1);
  // New tables keep their rows in insertion order, found by a unique index on the key (a key's
  // confirmation then rewrites a recent page, not a random one); earlier tables stay as they are.
  const std::string schema = RawDb(dir_.File("wow.db"))
                                 .Text(
                                     "SELECT group_concat(sql, ';') FROM sqlite_master WHERE "
                                     "tbl_name = 'wow_reservation__shop__brand'");
  EXPECT_EQ(schema.find("WITHOUT ROWID") != std::string::npos, GetParam()) << schema;
  EXPECT_EQ(schema.find("CREATE UNIQUE INDEX") != std::string::npos, !GetParam()) << schema;
}

TEST_P(SqliteSharedTransactionTest, AnAppendReleasesTheKeysItsStreamReleased) {
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 2, "globex", /*released=*/"acme")).appended());
  EXPECT_FALSE(reservations_->Find(Names(), "acme").has_value());
  ASSERT_TRUE(reservations_->Find(Names(), "globex").has_value());
  EXPECT_EQ(reservations_->Find(Names(), "globex")->version, 2);
}

TEST_P(SqliteSharedTransactionTest, AnAppendThatDoesNotLandAppliesNoFact) {
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  // Version 3 after 1: a conflict, whose key stays free and whose release does nothing.
  ASSERT_EQ(log_->Append(Reserving(Ref("b1"), 3, "globex", "acme")).kind(),
            AppendResult::Kind::kConflict);
  EXPECT_FALSE(reservations_->Find(Names(), "globex").has_value());
  ASSERT_TRUE(reservations_->Find(Names(), "acme").has_value());
  EXPECT_EQ(reservations_->Find(Names(), "acme")->version, 1);
}

// A stream that no decision made (no attempt) is not checked: its confirmation that finds another
// owner leaves the key to it and is an incident, logged and counted, never silent.
TEST_P(SqliteSharedTransactionTest, AKeyAnotherAggregateHoldsStaysItsOwnAndIsAnIncident) {
  ASSERT_TRUE(
      reservations_->Reserve(Names(), "acme", Ref("b2"), "attempt-2", milliseconds(30'000)));
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
TEST_P(SqliteSharedTransactionTest, AnAttemptsAppendChecksItStillHoldsItsKeys) {
  ASSERT_TRUE(
      reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", milliseconds(30'000)));
  Stream stream = Reserving(Ref("b1"), 1, "acme");
  stream.attempt = "attempt-9";  // not the hold of the pending reservation
  EXPECT_EQ(log_->Append(stream).kind(), AppendResult::Kind::kConflict);
  stream.attempt = "attempt-1";
  ASSERT_TRUE(reservations_->Release(Names(), "acme", Ref("b1"), kAnyVersion));
  EXPECT_EQ(log_->Append(stream).kind(), AppendResult::Kind::kConflict) << "the key is gone";
  ASSERT_TRUE(
      reservations_->Reserve(Names(), "acme", Ref("b2"), "attempt-2", milliseconds(30'000)));
  EXPECT_EQ(log_->Append(stream).kind(), AppendResult::Kind::kConflict) << "another's now";
  EXPECT_EQ(log_->Head(0) + log_->Head(1) + log_->Head(2) + log_->Head(3), 0)
      << "a refused attempt takes no sequence";
  clock_->Advance(milliseconds(30'000));  // b2's pending expires; b1's attempt reserves again
  ASSERT_TRUE(
      reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", milliseconds(30'000)));
  ASSERT_TRUE(log_->Append(stream).appended());
  EXPECT_EQ(reservations_->Find(Names(), "acme")->state, ReservationState::kConfirmed);
  // A key the owner confirmed is its own whatever the attempt: a rename to a new spelling.
  Stream respelled = Reserving(Ref("b1"), 2, "acme");
  respelled.attempt = "attempt-3";
  EXPECT_TRUE(log_->Append(respelled).appended());
}

TEST_P(SqliteSharedTransactionTest, AConfirmationOrReleaseFoundDoneOnlyReads) {
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  const auto before = Stats();
  EXPECT_TRUE(reservations_->Confirm(Names(), "acme", Ref("b1"), 1));     // the eager path
  EXPECT_TRUE(reservations_->Confirm(Names(), "acme", Ref("b1"), 1));     // a replay
  EXPECT_FALSE(reservations_->Confirm(Names(), "acme", Ref("b2"), 1));    // another's
  EXPECT_FALSE(reservations_->Release(Names(), "globex", Ref("b1"), 1));  // nothing held
  EXPECT_FALSE(reservations_->Release(Names(), "acme", Ref("b1"), 0));    // an older release
  EXPECT_EQ(Stats().transactions, before.transactions);

  EXPECT_TRUE(reservations_->Confirm(Names(), "acme", Ref("b1"), 2));  // a later version writes
  EXPECT_EQ(reservations_->Find(Names(), "acme")->version, 2);
  EXPECT_TRUE(reservations_->Release(Names(), "acme", Ref("b1"), 2));
  EXPECT_EQ(Stats().transactions, before.transactions + 2);
}

TEST_P(SqliteSharedTransactionTest, OnlyAppendsAndImportsWaitForTheDisk) {
  auto timers = NewSqliteTimerStore(db_, kContext, kPartitions);
  const auto start = Stats();
  ASSERT_TRUE(
      reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", milliseconds(30'000)));
  ASSERT_TRUE(reservations_->Abandon(Names(), "acme", Ref("b1"), "attempt-1"));
  log_->CommitCheckpoint(0, "projection", 1);
  ASSERT_TRUE(log_->AcquireLease(0, "node-1", milliseconds(10'000)));
  EXPECT_EQ(Stats().transactions, start.transactions + 4);
  EXPECT_EQ(Stats().synced, start.synced) << "lazy writes waited for the disk";

  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  EXPECT_EQ(Stats().synced, start.synced + 1) << "an append must be on disk when it returns";
  ASSERT_TRUE(reservations_->Confirm(Names(), "imported", Ref("b9"), kUnversioned));
  EXPECT_EQ(Stats().synced, start.synced + 2) << "an import has no stream to rebuild it from";
}

INSTANTIATE_TEST_SUITE_P(Layouts, SqliteSharedTransactionTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "EarlierReservationTable" : "ReservationTable";
                         });

TEST(SqliteWriteSync, UnderSynchronousNormalNothingWaitsForTheDisk) {
  testing_support::TempDir dir;
  SqliteOptions options;
  options.synchronous = SqliteOptions::Synchronous::kNormal;
  auto db = OpenSqliteDatabase(dir.File("wow.db"), options);
  auto log = NewSqliteEventLog(db, kContext, std::make_shared<ManualClock>());
  log->Create(kPartitions);
  ASSERT_TRUE(log->Append(MakeStream(Ref("b1"), 1)).appended());
  EXPECT_GE(db->write_stats().transactions, 2u);
  EXPECT_EQ(db->write_stats().synced, 0u);
}

}  // namespace
}  // namespace wow::sqlite_test
