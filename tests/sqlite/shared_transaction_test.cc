// What the SQLite stores of one file do together: an append applies its stream's key facts to the
// reservation tables in its own transaction (the contract suite, KeyConfirmingLogContract, says
// what it does to the keys); a confirmation or release found done already only reads; and only
// the writes nothing else could rebuild wait for the disk (WriteSync).
#include <gtest/gtest.h>

#include "sqlite_test_support.h"
#include "store/sqlite/database.h"
#include "support/temp_dir.h"
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

// What an append does to the keys, on both layouts, is the contract suite's
// (KeyConfirmingLogContract); here, the layout the append's confirmation finds.
TEST_P(SqliteSharedTransactionTest, EachReservationTableKeepsItsLayout) {
  ASSERT_TRUE(
      reservations_->Reserve(Names(), "acme", Ref("b1"), "attempt-1", milliseconds(30'000)));
  ASSERT_TRUE(log_->Append(Reserving(Ref("b1"), 1, "acme")).appended());
  ASSERT_EQ(reservations_->Find(Names(), "acme").value().state, ReservationState::kConfirmed);
  // New tables keep their rows in insertion order, found by a unique index on the key (a key's
  // confirmation then rewrites a recent page, not a random one); earlier tables stay as they are.
  const std::string schema = RawDb(dir_.File("wow.db"))
                                 .Text(
                                     "SELECT group_concat(sql, ';') FROM sqlite_master WHERE "
                                     "tbl_name = 'wow_reservation__shop__brand'");
  EXPECT_EQ(schema.find("WITHOUT ROWID") != std::string::npos, GetParam()) << schema;
  EXPECT_EQ(schema.find("CREATE UNIQUE INDEX") != std::string::npos, !GetParam()) << schema;
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
