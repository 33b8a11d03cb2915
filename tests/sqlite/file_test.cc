// The database file: what OpenSqliteDatabase creates, what survives a reopen, and the files it
// refuses (another format, another application, another partition count, not a database) with a
// clear error, leaving them unchanged.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>

#include "sqlite_test_support.h"
#include "store/sqlite/database.h"
#include "support/temp_dir.h"
#include "wow/sqlite.h"

namespace wow::sqlite_test {
namespace {

using std::chrono::milliseconds;

// Timer "remind" of `owner` (a ref of tenant t1), set by its stream 1, commanding its owner at
// `due_at`.
Timer RemindTimer(const AggregateRef& owner, EpochMillis due_at) {
  Timer timer;
  timer.owner = owner;
  timer.key = "remind";
  timer.partition = PartitionOf(owner.tenant_id, owner.id, kPartitions);
  timer.timer_id = "timer-1";
  timer.version = 1;
  timer.due_at = due_at;
  timer.target = owner;
  timer.command_type = "remind";
  timer.body = "{}";
  return timer;
}

class SqliteFileTest : public ::testing::Test {
 protected:
  testing_support::TempDir dir_;
  std::string path_ = dir_.File("wow.db");
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
};

TEST_F(SqliteFileTest, OpenCreatesAFileInWalModeWithItsFormatRecord) {
  OpenSqliteDatabase(path_);
  RawDb raw(path_);
  EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.Text("SELECT version FROM wow_format WHERE name = 'wow'"),
            std::to_string(sqlite::kFormatVersion));
  EXPECT_EQ(raw.Text("PRAGMA application_id"), std::to_string(0x576f7731));
}

// SQLite's memory statistics take a global mutex on every allocation: the first database a process
// opens turns them off, so SQLite counts nothing.
TEST_F(SqliteFileTest, OpeningADatabaseTurnsSqlitesMemoryStatisticsOff) {
  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, std::make_shared<ManualClock>());
  log->Create(kPartitions);
  ASSERT_TRUE(log->Append(MakeStream(Ref("m1"), 1)).appended());
  EXPECT_EQ(sqlite3_memory_used(), 0);
}

TEST_F(SqliteFileTest, OpenOfAMissingDirectoryIsPermissionDeniedSayingWhatToDo) {
  const auto failure = FailureOf([&] { OpenSqliteDatabase(dir_.File("missing/wow.db")); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kPermissionDenied) << failure->message;
  EXPECT_NE(failure->message.find("missing/wow.db"), std::string::npos) << failure->message;
  EXPECT_NE(failure->message.find("directory exists"), std::string::npos) << failure->message;
}

// SQLite opens /dev/null as an empty database and leaves /dev/null-journal beside it.
TEST_F(SqliteFileTest, APathThatIsNotARegularFileIsRefusedAndNothingIsCreatedBesideIt) {
  std::error_code ignored;
  std::filesystem::remove("/dev/null-journal", ignored);
  for (const std::string& path : {std::string("/dev/null"), dir_.path().string()}) {
    SCOPED_TRACE(path);
    const auto failure = FailureOf([&] { OpenSqliteDatabase(path); });
    ASSERT_TRUE(failure.has_value());
    EXPECT_EQ(failure->code, ErrorCode::kFailedPrecondition) << failure->message;
    EXPECT_NE(failure->message.find("not a regular file"), std::string::npos)
        << failure->message;
    EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  }
}

// A 64 KiB tmpfs mounted on a directory of its own, unmounted when destroyed; mounted() is false
// where the process may not mount (not root, or a container without CAP_SYS_ADMIN).
class SmallDisk {
 public:
  explicit SmallDisk(std::string dir) : dir_(std::move(dir)) {
    std::filesystem::create_directory(dir_);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  // Fills the disk but for `free_kib` KiB.
  void LeaveFree(int free_kib) {
    std::ofstream fill(dir_ + "/fill", std::ios::binary | std::ios::trunc);
    fill << std::string(static_cast<size_t>(64 - free_kib) * 1024, 'x');
  }
  // The names of the files on it.
  std::vector<std::string> Files() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  const std::string dir_;
  bool mounted_ = false;
};

// Found by a hostile test: starting on a full disk left a 3-byte -shm (or an empty database).
TEST_F(SqliteFileTest, ANewFileTheDiskHasNoRoomForIsResourceExhaustedAndLeavesNothingBehind) {
  SmallDisk disk(dir_.File("disk"));
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string path = dir_.File("disk/wow.db");
  for (int free_kib : {0, 4, 8, 16, 32}) {
    SCOPED_TRACE("free KiB: " + std::to_string(free_kib));
    disk.LeaveFree(free_kib);
    const auto failure = FailureOf([&] { OpenSqliteDatabase(path); });
    ASSERT_TRUE(failure.has_value());
    EXPECT_EQ(failure->code, ErrorCode::kResourceExhausted) << failure->message;
    EXPECT_EQ(disk.Files(), std::vector<std::string>{"fill"})
        << "the -shm could not grow, or the first page be written";
  }
  // A file that was there before stays, empty as it was.
  disk.LeaveFree(0);
  std::ofstream{path};
  const auto failure = FailureOf([&] { OpenSqliteDatabase(path); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kResourceExhausted) << failure->message;
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(SqliteFileTest, BadOptionsAreInvalidArguments) {
  SqliteOptions negative_timeout;
  negative_timeout.busy_timeout = milliseconds(-1);
  SqliteOptions no_group;
  no_group.max_group_commit = 0;
  for (const SqliteOptions& options : {negative_timeout, no_group}) {
    const auto failure = FailureOf([&] { OpenSqliteDatabase(path_, options); });
    ASSERT_TRUE(failure.has_value());
    EXPECT_EQ(failure->code, ErrorCode::kInvalidArgument) << failure->message;
  }
}

TEST_F(SqliteFileTest, ReopenKeepsStreamsReservationsTimersLeasesAndCheckpoints) {
  const ReservationScope scope{kContext, "brand", "t1", "shop.brand-name"};
  Timer timer;
  timer.owner = Ref("a");
  timer.key = "remind";
  timer.partition = PartitionOf("t1", "a", kPartitions);
  timer.timer_id = "timer-1";
  timer.version = 1;
  timer.due_at = 1'700'000'100'000;
  timer.target = Ref("b");
  timer.command_type = "remind";
  timer.body = R"({"n":1})";
  std::vector<Stream> streams;
  {
    auto db = OpenSqliteDatabase(path_);
    auto log = NewSqliteEventLog(db, kContext, clock_);
    log->Create(kPartitions);
    for (Version v = 1; v <= 3; ++v) {
      streams.push_back(MakeStream(Ref("a"), v));
      ASSERT_TRUE(log->Append(streams.back()).appended());
    }
    ASSERT_TRUE(log->AcquireLease(1, "node-1", milliseconds(60'000)));
    log->CommitCheckpoint(2, "projection", 7);
    auto reservations = NewSqliteReservationStore(db, clock_);
    ASSERT_TRUE(reservations->Confirm(scope, "acme", Ref("a"), 1));
    ASSERT_TRUE(reservations->Reserve(scope, "bolt", Ref("a"), "h1", milliseconds(60'000)));
    auto timers = NewSqliteTimerStore(db, kContext, kPartitions);
    ASSERT_TRUE(timers->Put(timer));
  }
  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  const int partition = PartitionOf("t1", "a", kPartitions);
  const std::vector<Entry> entries = log->ReadAfter(partition, 0, 10);
  ASSERT_EQ(entries.size(), 3u);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].position, (Position{partition, static_cast<Sequence>(i) + 1}));
    EXPECT_EQ(entries[i].stream, streams[i]);
  }
  EXPECT_EQ(log->Head(partition), 3);
  EXPECT_EQ(log->AggregateTypes(), std::vector<std::string>{"brand"});
  EXPECT_EQ(log->LeaseOf(1), (Lease{"node-1", clock_->NowMillis() + 60'000}));
  EXPECT_EQ(log->Checkpoint(2, "projection"), 7);
  EXPECT_EQ(log->Append(MakeStream(Ref("a"), 3)).kind(), AppendResult::Kind::kDuplicate);
  EXPECT_TRUE(log->Append(MakeStream(Ref("a"), 4)).appended());
  auto reservations = NewSqliteReservationStore(db, clock_);
  EXPECT_EQ(reservations->Find(scope, "acme")->version, 1);
  EXPECT_EQ(reservations->Find(scope, "bolt")->holds, std::set<std::string>{"h1"});
  EXPECT_EQ(NewSqliteTimerStore(db, kContext, kPartitions)->Find(timer.owner, "remind"), timer);
}

TEST_F(SqliteFileTest, TablesOfAnotherConnectionAreFoundThroughTheRegistry) {
  auto first = OpenSqliteDatabase(path_);
  auto second = OpenSqliteDatabase(path_);
  auto reader = NewSqliteEventLog(second, kContext, clock_);
  reader->Create(kPartitions);
  EXPECT_TRUE(reader->AggregateTypes().empty());
  auto writer = NewSqliteEventLog(first, kContext, clock_);
  writer->Create(kPartitions);
  ASSERT_TRUE(writer->Append(MakeStream(Ref("a", "category"), 1)).appended());
  EXPECT_EQ(reader->AggregateTypes(), std::vector<std::string>{"category"});
  EXPECT_EQ(reader->ReadAfter(PartitionOf("t1", "a", kPartitions), 0, 10).size(), 1u);
  EXPECT_EQ(reader->Read(Ref("a", "category"), 1, kAnyVersion).size(), 1u);
  EXPECT_EQ(reader->Append(MakeStream(Ref("a", "category"), 1)).kind(),
            AppendResult::Kind::kDuplicate);
}

TEST_F(SqliteFileTest, TwoContextsOnOneFileNeverTouchEachOthersLogLeasesOrCheckpoints) {
  auto db = OpenSqliteDatabase(path_);
  auto shop = NewSqliteEventLog(db, "shop", clock_);
  auto billing = NewSqliteEventLog(db, "billing", clock_);
  shop->Create(kPartitions);
  billing->Create(kPartitions);
  const AggregateRef shop_brand{"shop", "brand", "t1", "a"};
  const AggregateRef billing_brand{"billing", "brand", "t1", "a"};  // same type, tenant and id
  const int p = PartitionOf("t1", "a", kPartitions);
  ASSERT_TRUE(shop->Append(MakeStream(shop_brand, 1)).appended());
  ASSERT_TRUE(shop->Append(MakeStream(shop_brand, 2)).appended());
  const AppendResult first_billing = billing->Append(MakeStream(billing_brand, 1));
  ASSERT_TRUE(first_billing.appended());
  EXPECT_EQ(first_billing.position().sequence, 1) << "billing's partition counts on its own";
  EXPECT_EQ(shop->Head(p), 2);
  EXPECT_EQ(billing->Head(p), 1);
  EXPECT_EQ(billing->Read(billing_brand, 1, kAnyVersion).size(), 1u);
  EXPECT_EQ(billing->ReadAfter(p, 0, 10).size(), 1u);

  ASSERT_TRUE(shop->AcquireLease(p, "node-a", milliseconds(10'000)));
  EXPECT_TRUE(billing->AcquireLease(p, "node-b", milliseconds(10'000)))
      << "shop's lease of the partition is not billing's";
  shop->CommitCheckpoint(p, "projection", 2);
  EXPECT_EQ(billing->Checkpoint(p, "projection"), 0);
  billing->CommitCheckpoint(p, "projection", 1);
  EXPECT_EQ(shop->Checkpoint(p, "projection"), 2);
  EXPECT_EQ(shop->LeaseOf(p)->node, "node-a");
  EXPECT_EQ(billing->LeaseOf(p)->node, "node-b");
}

TEST_F(SqliteFileTest, DueOnOneConnectionFindsATimerOfATypeAnotherConnectionCreated) {
  auto first = OpenSqliteDatabase(path_);
  auto second = OpenSqliteDatabase(path_);
  auto reader = NewSqliteTimerStore(second, kContext, kPartitions);
  EXPECT_TRUE(reader->Due({0, 1, 2, 3}, clock_->NowMillis(), 10).empty());  // knows no table yet
  auto writer = NewSqliteTimerStore(first, kContext, kPartitions);
  const Timer timer = RemindTimer(Ref("o1", "invoice"), clock_->NowMillis() - 1);
  ASSERT_TRUE(writer->Put(timer));
  const std::vector<Timer> due = reader->Due({0, 1, 2, 3}, clock_->NowMillis(), 10);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0], timer);
}

TEST_F(SqliteFileTest, ATimerRuleIsStoredByItsTypeNameAndAnUnknownNameIsDataLossNamingTheTimer) {
  auto db = OpenSqliteDatabase(path_);
  auto timers = NewSqliteTimerStore(db, kContext, kPartitions);
  Timer timer = RemindTimer(Ref("o1", "invoice"), clock_->NowMillis());
  timer.rule = {TimerRule::Kind::kRetry, 3, 100, 1'000};
  ASSERT_TRUE(timers->Put(timer));
  RawDb raw(path_);
  const std::string table = raw.Text("SELECT name FROM wow_tables WHERE kind = 'timer'");
  EXPECT_NE(raw.Text("SELECT rule FROM \"" + table + "\"").find(R"("type":"retry")"),
            std::string::npos);
  EXPECT_EQ(timers->Find(timer.owner, "remind"), timer);
  raw.Exec("UPDATE \"" + table + "\" SET rule = replace(rule, 'retry', 'sometimes')");
  const auto failure = FailureOf([&] { timers->Find(timer.owner, "remind"); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kDataLoss);
  EXPECT_NE(failure->message.find("timer \"remind\" of " + ToString(timer.owner)),
            std::string::npos)
      << failure->message;
  EXPECT_NE(failure->message.find("sometimes"), std::string::npos) << failure->message;
}

TEST_F(SqliteFileTest, AFileOfAnotherFormatIsRefusedNamingBothAndLeftUnchanged) {
  OpenSqliteDatabase(path_);
  RawDb(path_).Exec("UPDATE wow_format SET version = 99");
  const std::string before = FileBytes(path_);
  const auto failure = FailureOf([&] { OpenSqliteDatabase(path_); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kFailedPrecondition) << failure->message;
  EXPECT_NE(failure->message.find("format 99"), std::string::npos) << failure->message;
  EXPECT_NE(failure->message.find("format " + std::to_string(sqlite::kFormatVersion)),
            std::string::npos)
      << failure->message;
  EXPECT_EQ(FileBytes(path_), before);
}

TEST_F(SqliteFileTest, AFileOfFormat2IsRefusedByNameAndLeftUnchanged) {
  OpenSqliteDatabase(path_);
  RawDb(path_).Exec("UPDATE wow_format SET version = 2");
  const std::string before = FileBytes(path_);
  const auto failure = FailureOf([&] { OpenSqliteDatabase(path_); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kFailedPrecondition) << failure->message;
  EXPECT_NE(failure->message.find("format 2;"), std::string::npos) << failure->message;
  EXPECT_NE(failure->message.find("reads format 5 (and migrates formats 3 and 4) only"), std::string::npos)
      << failure->message;
  EXPECT_EQ(FileBytes(path_), before);
}

TEST_F(SqliteFileTest, TheLogTableIsKeyedByPartitionShiftedLeft40BitsOrSequence) {
  EXPECT_EQ(sqlite::PositionKey(3, 5), (std::int64_t{3} << 40) | 5);
  for (const Position position :
       {Position{0, 1}, Position{kMaxPartitions - 1, 7}, Position{5, sqlite::kMaxSequence}}) {
    EXPECT_EQ(sqlite::KeyPosition(sqlite::PositionKey(position.partition, position.sequence)),
              position);
  }
  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  RawDb raw(path_);
  for (const std::string id : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
    const AppendResult result = log->Append(MakeStream(Ref(id), 1));
    ASSERT_TRUE(result.appended());
    const Position position = result.position();
    EXPECT_EQ(
        raw.Text("SELECT aggregate_id FROM wow_log__shop__brand WHERE rowid = " +
                 std::to_string((std::int64_t{position.partition} << 40) | position.sequence)),
        id);
  }
}

TEST_F(SqliteFileTest, AnAppendPastThePartitionsLastSequenceIsResourceExhaustedAndWritesNothing) {
  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  const int partition = PartitionOf("t1", "a", kPartitions);
  RawDb(path_).Exec(
      "UPDATE wow_partitions SET last_sequence = " + std::to_string(sqlite::kMaxSequence - 1) +
      " WHERE partition = " + std::to_string(partition));
  const AppendResult last = log->Append(MakeStream(Ref("a"), 1));
  ASSERT_TRUE(last.appended());
  EXPECT_EQ(last.position(), (Position{partition, sqlite::kMaxSequence}));
  const auto failure = FailureOf([&] { log->Append(MakeStream(Ref("a"), 2)); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kResourceExhausted) << failure->message;
  EXPECT_NE(failure->message.find("is full"), std::string::npos) << failure->message;
  EXPECT_EQ(log->Head(partition), sqlite::kMaxSequence);
  EXPECT_EQ(log->Read(Ref("a"), 1, kAnyVersion).size(), 1u);
  const std::vector<Entry> tail = log->ReadAfter(partition, sqlite::kMaxSequence - 1, 10);
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail.front().position, last.position());
  EXPECT_TRUE(log->ReadAfter(partition, sqlite::kMaxSequence, 10).empty());
  EXPECT_TRUE(log->ReadAfter(partition, std::numeric_limits<Sequence>::max(), 10).empty());
}

TEST_F(SqliteFileTest, AnotherApplicationsDatabaseIsRefusedAndLeftUnchanged) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total TEXT)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string before = FileBytes(path_);
  const auto failure = FailureOf([&] { OpenSqliteDatabase(path_); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kFailedPrecondition) << failure->message;
  EXPECT_NE(failure->message.find("invoices"), std::string::npos) << failure->message;
  EXPECT_EQ(FileBytes(path_), before);
  EXPECT_EQ(RawDb(path_).Text("PRAGMA journal_mode"), "delete") << "not switched to WAL";
}

TEST_F(SqliteFileTest, AnotherPartitionCountIsRefusedNamingBothAndLeavesTheFileUnchanged) {
  {
    auto db = OpenSqliteDatabase(path_);
    auto log = NewSqliteEventLog(db, kContext, clock_);
    log->Create(4);
    ASSERT_TRUE(log->Append(MakeStream(Ref("a"), 1)).appended());
  }
  const std::string before = FileBytes(path_);
  {
    auto db = OpenSqliteDatabase(path_);
    const auto from_log = FailureOf([&] { NewSqliteEventLog(db, kContext, clock_)->Create(8); });
    ASSERT_TRUE(from_log.has_value());
    EXPECT_EQ(from_log->code, ErrorCode::kFailedPrecondition) << from_log->message;
    EXPECT_NE(from_log->message.find("4 partitions, not 8"), std::string::npos)
        << from_log->message;
    const auto from_timers = FailureOf([&] { NewSqliteTimerStore(db, kContext, 8); });
    ASSERT_TRUE(from_timers.has_value());
    EXPECT_EQ(from_timers->code, ErrorCode::kFailedPrecondition) << from_timers->message;
    EXPECT_NE(from_timers->message.find("4 partitions, not 8"), std::string::npos)
        << from_timers->message;
    auto log = NewSqliteEventLog(db, kContext, clock_);
    log->Create(4);
    EXPECT_EQ(log->Head(PartitionOf("t1", "a", 4)), 1);
  }
  EXPECT_EQ(FileBytes(path_), before);
}

TEST_F(SqliteFileTest, ATimerStoreClaimsThePartitionCountTheLogMustThenName) {
  auto db = OpenSqliteDatabase(path_);
  NewSqliteTimerStore(db, kContext, 2);
  const auto failure = FailureOf([&] { NewSqliteEventLog(db, kContext, clock_)->Create(4); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kFailedPrecondition);
  NewSqliteEventLog(db, kContext, clock_)->Create(2);
  NewSqliteEventLog(db, "other", clock_)->Create(4);  // partition counts are per context
}

TEST_F(SqliteFileTest, AFileThatIsNotASqliteDatabaseIsDataLossSayingSoAndLeftUnchanged) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "this is a text file, not a database\n";
  WriteFileBytes(path_, text);
  const auto failure = FailureOf([&] { OpenSqliteDatabase(path_); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kDataLoss) << failure->message;
  EXPECT_NE(failure->message.find("not a SQLite database"), std::string::npos) << failure->message;
  EXPECT_NE(failure->message.find(path_), std::string::npos) << failure->message;
  EXPECT_EQ(FileBytes(path_), text);
}

}  // namespace
}  // namespace wow::sqlite_test

namespace wow {
namespace {

TEST(SqliteContexts, ListsEachContextWithItsPartitionCount) {
  testing_support::TempDir dir;
  auto db = OpenSqliteDatabase(dir.File("contexts.db"));
  EXPECT_TRUE(SqliteContexts(db).empty());
  NewSqliteEventLog(db, "shop", SystemClock::Instance())->Create(8);
  NewSqliteTimerStore(db, "billing", 2);
  EXPECT_EQ(SqliteContexts(db), (std::map<std::string, int>{{"billing", 2}, {"shop", 8}}));
}

}  // namespace
}  // namespace wow
