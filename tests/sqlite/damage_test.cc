// Damaged files: every stream's checksum checked on every read (kDataLoss naming the stream, and
// counted as data loss), the quick check of a file when it is opened, the migration of formats 3
// and 4,
// and CheckSqliteDatabase's report on a sound file and on each kind of damage.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "sqlite_test_support.h"
#include "store/sqlite/schema.h"
#include "support/temp_dir.h"
#include "wow/incidents.h"
#include "wow/sqlite.h"

namespace wow::sqlite_test {
namespace {

constexpr const char* kLogTable = "wow_log__shop__brand";

class SqliteDamageTest : public ::testing::Test {
 protected:
  // A file with `count` brands b0, b1, ... of one stream each, closed.
  void Fill(int count) {
    auto db = OpenSqliteDatabase(path_);
    auto log = NewSqliteEventLog(db, kContext, clock_);
    log->Create(kPartitions);
    for (int i = 0; i < count; ++i) {
      ASSERT_TRUE(log->Append(MakeStream(Ref("b" + std::to_string(i)), 1)).appended());
    }
  }

  // Opening the file with `options` fails with `code`, its message holding `text`, and leaves the
  // file as it was.
  void ExpectRefusedUnchanged(const SqliteOptions& options, ErrorCode code,
                              const std::string& text) {
    const std::string before = FileBytes(path_);
    const auto failure = FailureOf([&] { OpenSqliteDatabase(path_, options); });
    ASSERT_TRUE(failure.has_value());
    EXPECT_EQ(failure->code, code) << failure->message;
    EXPECT_NE(failure->message.find(text), std::string::npos) << failure->message;
    EXPECT_EQ(FileBytes(path_), before);
  }

  // The file as format 3 wrote it: log tables without the checksum column.
  void MakeFormat3() {
    RawDb raw(path_);
    raw.Exec(std::string("ALTER TABLE ") + kLogTable + " DROP COLUMN checksum");
    raw.Exec("UPDATE wow_tables SET format = 3; UPDATE wow_format SET version = 3");
  }

  // The log of the file, opened.
  std::unique_ptr<EventLog> OpenLog(const std::shared_ptr<SqliteDatabase>& db) {
    auto log = NewSqliteEventLog(db, kContext, clock_);
    log->Open();
    return log;
  }

  // Whether some problem of `report` holds `text`.
  static bool Mentions(const SqliteCheckReport& report, const std::string& text) {
    return std::any_of(report.problems.begin(), report.problems.end(),
                       [&](const std::string& p) { return p.find(text) != std::string::npos; });
  }

  testing_support::TempDir dir_;
  std::string path_ = dir_.File("wow.db");
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
};

TEST_F(SqliteDamageTest, AStreamChangedBehindTheStoreIsDataLossNamingItOnEveryRead) {
  Fill(3);
  // An event body whose bytes changed but still decode: without a checksum, a wrong brand.
  RawDb(path_).Exec(std::string("UPDATE ") + kLogTable +
                    " SET events = replace(events, 'acme', 'acne') WHERE aggregate_id = 'b1'");
  auto db = OpenSqliteDatabase(path_);
  auto log = OpenLog(db);
  const std::uint64_t before = DataLossCount();
  const auto read = FailureOf([&] { log->Read(Ref("b1"), 1, 10); });
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->code, ErrorCode::kDataLoss) << read->message;
  EXPECT_NE(read->message.find("shop/brand/t1/b1 at version 1"), std::string::npos)
      << read->message;
  EXPECT_NE(read->message.find("does not match its checksum"), std::string::npos)
      << read->message;
  EXPECT_EQ(DataLossCount(), before + 1);
  ASSERT_TRUE(LastDataLoss().has_value());
  EXPECT_EQ(*LastDataLoss(), read->message.substr(read->message.find("SQLite database")));

  const int partition = PartitionOf("t1", "b1", kPartitions);
  EXPECT_EQ(FailureOf([&] { log->ReadAfter(partition, 0, 100); })->code, ErrorCode::kDataLoss);
  EXPECT_EQ(FailureOf([&] { log->ReadEntries(Ref("b1"), {1}); })->code, ErrorCode::kDataLoss);
  EXPECT_EQ(FailureOf([&] { log->FindByRequestId("brand", "t1", "req-brand/b1@1"); })->code,
            ErrorCode::kDataLoss);
  // The others read as they were written.
  EXPECT_EQ(log->Read(Ref("b0"), 1, 10).size(), 1u);
  EXPECT_EQ(log->Read(Ref("b2"), 1, 10).size(), 1u);
}

TEST_F(SqliteDamageTest, EveryColumnOfAStreamIsCoveredByItsChecksum) {
  const std::vector<std::string> changes = {
      "time = time + 1",          "request_id = 'req-other'",       "version = 7",
      "transport = x'00'",        "facts = NULL",                   "tenant_id = 't2'",
      "position = position + 64", "checksum = checksum + 1"};
  for (const std::string& change : changes) {
    SCOPED_TRACE(change);
    testing_support::TempDir dir;
    path_ = dir.File("wow.db");
    Fill(1);
    RawDb(path_).Exec(std::string("UPDATE ") + kLogTable + " SET " + change);
    auto db = OpenSqliteDatabase(path_);
    auto log = OpenLog(db);
    // By the aggregate (a changed tenant hides it there), then by the partitions (a moved
    // position hides it there).
    const auto failure = FailureOf([&] {
      log->Read(Ref("b0"), 1, 100);
      for (int p = 0; p < kPartitions; ++p) log->ReadAfter(p, 0, 100);
    });
    ASSERT_TRUE(failure.has_value());
    EXPECT_EQ(failure->code, ErrorCode::kDataLoss) << failure->message;
  }
}

TEST_F(SqliteDamageTest, AWowFileWhoseHeaderIsNotWowsIsRefusedAsDamagedAndLeftUnchanged) {
  Fill(1);
  RawDb(path_).Exec("PRAGMA application_id = 12345");
  ExpectRefusedUnchanged({}, ErrorCode::kDataLoss, "application_id is 12345");
}

TEST_F(SqliteDamageTest, ARegisteredTableTheFileLacksIsRefusedAsDamaged) {
  Fill(1);
  RawDb(path_).Exec(std::string("DROP TABLE ") + kLogTable);
  const auto failure = FailureOf([&] { OpenSqliteDatabase(path_); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kDataLoss) << failure->message;
  EXPECT_NE(failure->message.find(kLogTable), std::string::npos) << failure->message;
}

TEST_F(SqliteDamageTest, AFileOfFormat3IsMigratedItsStreamsGettingTheirChecksums) {
  Fill(5);
  MakeFormat3();
  auto db = OpenSqliteDatabase(path_);
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Text("SELECT version FROM wow_format WHERE name = 'wow'"),
              std::to_string(sqlite::kFormatVersion));
    EXPECT_EQ(raw.Text("SELECT count(*) FROM wow_tables WHERE format <> " +
                       std::to_string(sqlite::kFormatVersion)),
              "0");
    EXPECT_EQ(raw.Text(std::string("SELECT count(*) FROM ") + kLogTable +
                       " WHERE checksum IS NULL"),
              "0");
  }
  auto log = OpenLog(db);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(log->Read(Ref("b" + std::to_string(i)), 1, 9).size(), 1u);
  EXPECT_TRUE(log->Append(MakeStream(Ref("b0"), 2)).appended());
  const SqliteCheckReport report = CheckSqliteDatabase(db);
  EXPECT_TRUE(report.ok()) << (report.problems.empty() ? "" : report.problems[0]);
  EXPECT_EQ(report.streams, 6u);
}

TEST_F(SqliteDamageTest, AFileOfFormat3OpenedReadOnlyIsRefusedAndLeftUnchanged) {
  Fill(2);
  MakeFormat3();
  SqliteOptions read_only;
  read_only.read_only = true;
  ExpectRefusedUnchanged(read_only, ErrorCode::kFailedPrecondition, "open it writable once");
}

TEST_F(SqliteDamageTest, AFileOfFormat4IsMigratedItsTimersGettingAParkedVersionNotKnown) {
  Fill(1);
  Timer parked;
  parked.owner = Ref("b0");
  parked.key = "expire";
  parked.partition = PartitionOf("t1", "b0", kPartitions);
  parked.timer_id = "tid";
  parked.version = 1;
  parked.due_at = 5'000;
  parked.target = Ref("b0");
  parked.command_type = "expire";
  parked.body = "{}";
  parked.state = TimerState::kParked;
  parked.attempt = 1;
  parked.parked_version = 1;
  {
    auto db = OpenSqliteDatabase(path_);
    ASSERT_TRUE(NewSqliteTimerStore(db, kContext, kPartitions)->Put(parked));
  }
  {  // the file as format 4 wrote it: timer tables without the parked_version column
    RawDb raw(path_);
    raw.Exec("ALTER TABLE wow_timer__shop__brand DROP COLUMN parked_version");
    raw.Exec("UPDATE wow_tables SET format = 4; UPDATE wow_format SET version = 4");
  }
  SqliteOptions read_only;
  read_only.read_only = true;
  ExpectRefusedUnchanged(read_only, ErrorCode::kFailedPrecondition, "format 4");

  auto db = OpenSqliteDatabase(path_);
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Text("SELECT version FROM wow_format WHERE name = 'wow'"),
              std::to_string(sqlite::kFormatVersion));
    EXPECT_EQ(raw.Text("SELECT count(*) FROM wow_tables WHERE format <> " +
                       std::to_string(sqlite::kFormatVersion)),
              "0");
  }
  auto timers = NewSqliteTimerStore(db, kContext, kPartitions);
  parked.parked_version = 0;  // not known: any later stream of the target re-arms it
  EXPECT_EQ(timers->Find(parked.owner, "expire"), parked);
  EXPECT_EQ(timers->Parked(parked.target), std::vector<Timer>{parked});
  EXPECT_EQ(OpenLog(db)->Read(Ref("b0"), 1, 9).size(), 1u);
}

TEST_F(SqliteDamageTest, ATimerTableOfAnEarlierFormatIsDroppedWithItsCheckpointsWhenTheStoreOpens) {
  Fill(1);
  Timer timer;
  timer.owner = Ref("b0");
  timer.key = "expire";
  timer.partition = PartitionOf("t1", "b0", kPartitions);
  timer.timer_id = "tid";
  timer.version = 1;
  timer.due_at = 5'000;
  timer.target = Ref("b0");
  timer.command_type = "expire";
  timer.body = "{}";
  {
    auto db = OpenSqliteDatabase(path_);
    ASSERT_TRUE(NewSqliteTimerStore(db, kContext, kPartitions)->Put(timer));
  }
  {  // a timer table recorded in a format this build does not read, its timers applied up to 1
    RawDb raw(path_);
    raw.Exec("UPDATE wow_tables SET format = 2 WHERE name = 'wow_timer__shop__brand'");
    raw.Exec("INSERT INTO wow_checkpoints VALUES ('shop', 0, 'wow.timers', 1), "
             "('shop', 1, 'wow.timers', 1), ('shop', 0, 'catalog', 1), "
             "('other', 0, 'wow.timers', 1)");
  }
  {  // read-only, the table stays as it is
    SqliteOptions read_only;
    read_only.read_only = true;
    NewSqliteTimerStore(OpenSqliteDatabase(path_, read_only), kContext, kPartitions);
    RawDb raw(path_);
    EXPECT_EQ(raw.Text("SELECT format FROM wow_tables WHERE name = 'wow_timer__shop__brand'"), "2");
  }
  auto db = OpenSqliteDatabase(path_);
  // Opening the store drops the table and the checkpoints, before a timer subscription (which
  // opens after it) reads them: so it puts every timer again from the log's start.
  auto timers = NewSqliteTimerStore(db, kContext, kPartitions);
  EXPECT_FALSE(timers->Find(timer.owner, "expire").has_value());
  EXPECT_EQ(RawDb(path_).Text("SELECT count(*) FROM wow_checkpoints WHERE subscription = "
                              "'wow.timers' AND context = 'shop'"),
            "0");
  Timer other = timer;
  other.key = "remind";
  other.timer_id = "tid2";
  ASSERT_TRUE(timers->Put(other));  // made again at its first write
  EXPECT_EQ(timers->Find(other.owner, "remind"), other);
  RawDb raw(path_);
  // The context's timer checkpoints are gone (its timers are put again from the log's start);
  // another subscription's, and another context's, stay.
  EXPECT_EQ(raw.Text("SELECT count(*) FROM wow_checkpoints WHERE context = 'shop' AND "
                     "subscription = 'wow.timers'"),
            "0");
  EXPECT_EQ(raw.Text("SELECT count(*) FROM wow_checkpoints"), "2");
  EXPECT_EQ(raw.Text("SELECT format FROM wow_tables WHERE name = 'wow_timer__shop__brand'"),
            std::to_string(sqlite::kFormatVersion));
}

TEST_F(SqliteDamageTest, AReadOnlyDatabaseReadsAndRefusesEveryWrite) {
  Fill(3);
  SqliteOptions read_only;
  read_only.read_only = true;
  auto db = OpenSqliteDatabase(path_, read_only);
  auto log = OpenLog(db);
  EXPECT_EQ(log->Read(Ref("b1"), 1, 9).size(), 1u);
  auto timers = NewSqliteTimerStore(db, kContext, kPartitions);  // the count is recorded
  const auto append = FailureOf([&] { log->Append(MakeStream(Ref("b1"), 2)); });
  ASSERT_TRUE(append.has_value());
  EXPECT_EQ(append->code, ErrorCode::kFailedPrecondition) << append->message;
  EXPECT_NE(append->message.find("read-only"), std::string::npos) << append->message;
  EXPECT_EQ(FailureOf([&] { log->CommitCheckpoint(0, "s", 1); })->code,
            ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(CheckSqliteDatabase(db).ok());
}

TEST_F(SqliteDamageTest, TheCheckOfASoundFileFindsNothingAndCountsWhatItRead) {
  Fill(20);
  auto db = OpenSqliteDatabase(path_);
  auto log = OpenLog(db);
  ASSERT_TRUE(log->Append(MakeStream(Ref("b3"), 2)).appended());
  auto reservations = NewSqliteReservationStore(db, clock_);
  const SqliteCheckReport report = CheckSqliteDatabase(db);
  EXPECT_TRUE(report.ok()) << (report.problems.empty() ? "" : report.problems[0]);
  EXPECT_EQ(report.streams, 21u);
  // Each brand's streams reserved one key of its own (MakeStream), confirmed at its last version.
  EXPECT_EQ(report.keys, 20u);
}

TEST_F(SqliteDamageTest, TheCheckReportsAStreamThatFailsItsChecksum) {
  Fill(4);
  RawDb(path_).Exec(std::string("UPDATE ") + kLogTable +
                    " SET events = replace(events, 'acme', 'acne') WHERE aggregate_id = 'b2'");
  const SqliteCheckReport report = CheckSqliteDatabase(OpenSqliteDatabase(path_));
  EXPECT_EQ(report.problem_count, 1u);
  EXPECT_TRUE(Mentions(report, "shop/brand/t1/b2 at version 1")) << report.problems[0];
  EXPECT_TRUE(Mentions(report, "does not match its checksum")) << report.problems[0];
}

TEST_F(SqliteDamageTest, TheCheckReportsMissingSequencesAndTheKeysOfAMissingStream) {
  Fill(8);
  const int partition = PartitionOf("t1", "b5", kPartitions);
  RawDb(path_).Exec(std::string("DELETE FROM ") + kLogTable + " WHERE aggregate_id = 'b5'");
  const SqliteCheckReport report = CheckSqliteDatabase(OpenSqliteDatabase(path_));
  EXPECT_TRUE(Mentions(report, "partition " + std::to_string(partition) + ": sequence"))
      << ::testing::PrintToString(report.problems);
  EXPECT_TRUE(Mentions(report, "confirmed for shop/brand/t1/b5 at version 1: the log has no such "
                               "stream"))
      << ::testing::PrintToString(report.problems);
  EXPECT_EQ(report.problem_count, 2u) << ::testing::PrintToString(report.problems);
}

TEST_F(SqliteDamageTest, TheCheckReportsVersionsOutOfOrderAndAKeyItsStreamDidNotReserve) {
  Fill(3);
  {
    RawDb raw(path_);
    raw.Exec(std::string("UPDATE ") + kLogTable + " SET version = 2 WHERE aggregate_id = 'b0'");
    raw.Exec("UPDATE wow_reservation__shop__brand SET key = 'other' WHERE owner_id = 'b1'");
  }
  const SqliteCheckReport report = CheckSqliteDatabase(OpenSqliteDatabase(path_));
  EXPECT_TRUE(Mentions(report, "shop/brand/t1/b0: version 2 follows version 0"))
      << ::testing::PrintToString(report.problems);
  EXPECT_TRUE(Mentions(report, "key \"other\"")) << ::testing::PrintToString(report.problems);
  EXPECT_TRUE(Mentions(report, "that stream did not reserve it"))
      << ::testing::PrintToString(report.problems);
}

TEST_F(SqliteDamageTest, TheCheckReportsAPageSqlitesIntegrityCheckFindsDamaged) {
  Fill(200);
  {
    // An index entry removed behind the table's back: the table and its index disagree.
    RawDb raw(path_);
    raw.Exec("PRAGMA writable_schema = ON");
    raw.Exec(std::string("UPDATE sqlite_schema SET sql = replace(sql, 'UNIQUE INDEX', 'UNIQUE "
                         "INDEX') WHERE name = '") +
             kLogTable + "__request'");
    raw.Exec(std::string("DROP INDEX \"") + kLogTable + "__request\"");
    raw.Exec(std::string("CREATE UNIQUE INDEX \"") + kLogTable + "__request\" ON " + kLogTable +
             " (tenant_id, request_id) WHERE aggregate_id <> 'b7'");
    raw.Exec(std::string("UPDATE sqlite_schema SET sql = 'CREATE UNIQUE INDEX \"") + kLogTable +
             "__request\" ON " + kLogTable + " (tenant_id, request_id)' WHERE name = '" +
             kLogTable + "__request'");
  }
  const SqliteCheckReport report = CheckSqliteDatabase(OpenSqliteDatabase(path_));
  EXPECT_TRUE(Mentions(report, "SQLite integrity check:"))
      << ::testing::PrintToString(report.problems);
}

TEST_F(SqliteDamageTest, TheCheckRunsBesideAWriterWithoutBlockingIt) {
  Fill(50);
  auto db = OpenSqliteDatabase(path_);
  auto log = OpenLog(db);
  std::atomic<bool> done{false};
  std::atomic<int> appended{0};
  std::thread writer([&] {
    for (int i = 0; !done.load(); ++i) {
      if (log->Append(MakeStream(Ref("w" + std::to_string(i)), 1)).appended()) ++appended;
    }
  });
  // Checks back to back until the writer has appended 20 streams meanwhile: a check that held
  // the writer off would leave it stuck until the deadline.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int checks = 0;
  while ((checks < 5 || appended.load() < 20) && std::chrono::steady_clock::now() < deadline) {
    EXPECT_TRUE(CheckSqliteDatabase(db).ok());
    ++checks;
  }
  done = true;
  writer.join();
  EXPECT_GE(appended.load(), 20) << "in " << checks << " checks";
  EXPECT_TRUE(CheckSqliteDatabase(db).ok());
}

}  // namespace
}  // namespace wow::sqlite_test
