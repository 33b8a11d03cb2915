// Faults of the file and the machine: a read-only file, a full disk, a corrupt page, a write lock
// another process holds too long. Each is a wow::Error of the right code whose message says what
// failed and what to do; nothing is half-written; the process goes on.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "sqlite_test_support.h"
#include "store/sqlite/database.h"
#include "support/temp_dir.h"
#include "wow/sqlite.h"

namespace wow::sqlite_test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

class SqliteFaultTest : public ::testing::Test {
 protected:
  testing_support::TempDir dir_;
  std::string path_ = dir_.File("wow.db");
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
};

TEST_F(SqliteFaultTest, AReadOnlyFileIsPermissionDeniedSayingWhatToDoAndLeftUnchanged) {
  OpenSqliteDatabase(path_);
  ASSERT_EQ(chmod(path_.c_str(), 0444), 0);
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  const std::string before = FileBytes(path_);
  auto check = [&]() -> int {
    const auto failure = FailureOf([&] { OpenSqliteDatabase(path_); });
    if (!failure) return 10;
    if (failure->code != ErrorCode::kPermissionDenied) return 11;
    if (failure->message.find("read-only") == std::string::npos) return 12;
    if (failure->message.find("writable") == std::string::npos) return 13;
    return 0;
  };
  if (geteuid() == 0) {
    // root may write any file: look at it as an ordinary user, in a child.
    const pid_t child = ForkChild([&] {
      if (setgid(65534) != 0 || setuid(65534) != 0) return 20;
      return check();
    });
    EXPECT_EQ(WaitChildren({child}, milliseconds(20'000)), std::vector<int>{0});
  } else {
    EXPECT_EQ(check(), 0);
  }
  EXPECT_EQ(FileBytes(path_), before);
}

TEST_F(SqliteFaultTest, AFullDiskIsResourceExhaustedAndWritesNothingHalfWay) {
  SqliteOptions options;
  options.synchronous = SqliteOptions::Synchronous::kNormal;
  auto db = OpenSqliteDatabase(path_, options);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  auto reservations = NewSqliteReservationStore(db, clock_);
  const ReservationScope scope{kContext, "brand", "t1", "shop.brand-name"};
  ASSERT_TRUE(log->Append(MakeStream(Ref("a"), 1)).appended());
  ASSERT_TRUE(reservations->Confirm(scope, "acme", Ref("a"), 1));
  // The database may not grow past its size now: SQLite's stand-in for a full disk.
  db->Write([](sqlite::Connection& w) { w.Execute("PRAGMA max_page_count = 1"); });

  Version next = 2;
  std::optional<Failure> full;
  for (int attempt = 0; attempt < 500 && !full; ++attempt) {
    full = FailureOf([&] {
      ASSERT_TRUE(log->Append(MakeStream(Ref("a"), next, 8192)).appended());
      ++next;
    });
  }
  ASSERT_TRUE(full.has_value()) << "the log never filled up";
  EXPECT_EQ(full->code, ErrorCode::kResourceExhausted) << full->message;
  EXPECT_NE(full->message.find("full"), std::string::npos) << full->message;
  EXPECT_NE(full->message.find("free space"), std::string::npos) << full->message;
  const int partition = PartitionOf("t1", "a", kPartitions);
  EXPECT_EQ(log->Head(partition), next - 1);
  EXPECT_FALSE(log->PositionOf(Ref("a"), next).has_value());
  EXPECT_EQ(log->ReadAfter(partition, 0, 1000).size(), static_cast<size_t>(next - 1));

  std::optional<Failure> reservations_full;
  int key = 0;
  for (; key < 500 && !reservations_full; ++key) {
    reservations_full = FailureOf([&] {
      reservations->Reserve(scope, std::to_string(key) + std::string(500, 'k'), Ref("a"), "h1",
                            milliseconds(60'000));
    });
  }
  ASSERT_TRUE(reservations_full.has_value()) << "the reservations never filled up";
  EXPECT_EQ(reservations_full->code, ErrorCode::kResourceExhausted) << reservations_full->message;
  EXPECT_FALSE(reservations->Find(scope, std::to_string(key - 1) + std::string(500, 'k')));

  // Space again: the store goes on, whole.
  db->Write([](sqlite::Connection& w) { w.Execute("PRAGMA max_page_count = 1073741823"); });
  EXPECT_TRUE(log->Append(MakeStream(Ref("a"), next, 8192)).appended());
  EXPECT_EQ(log->Head(partition), next);
  db.reset();
  log.reset();
  reservations.reset();
  EXPECT_EQ(RawDb(path_).Text("PRAGMA integrity_check"), "ok");
}

TEST_F(SqliteFaultTest, ACorruptPageIsDataLossSayingWhatToDoAndWritesNothingHalfWay) {
  const int partition = PartitionOf("t1", "a", kPartitions);
  {
    auto db = OpenSqliteDatabase(path_);
    auto log = NewSqliteEventLog(db, kContext, clock_);
    log->Create(kPartitions);
    for (Version v = 1; v <= 20; ++v) ASSERT_TRUE(log->Append(MakeStream(Ref("a"), v)).appended());
  }
  std::int64_t page_size = 0;
  std::int64_t root = 0;
  {
    RawDb raw(path_);
    page_size = std::stoll(raw.Text("PRAGMA page_size"));
    root = std::stoll(
        raw.Text("SELECT rootpage FROM sqlite_schema WHERE name = 'wow_log__shop__brand'"));
  }
  std::string bytes = FileBytes(path_);
  ASSERT_GE(static_cast<std::int64_t>(bytes.size()), root * page_size);
  std::fill(bytes.begin() + (root - 1) * page_size, bytes.begin() + root * page_size, '\xa5');
  WriteFileBytes(path_, bytes);

  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  for (const auto& [what, call] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"Read", [&] { log->Read(Ref("a"), 1, kAnyVersion); }},
           {"ReadAfter", [&] { log->ReadAfter(partition, 0, 100); }},
           {"Append", [&] { log->Append(MakeStream(Ref("b"), 1)); }},
       }) {
    const auto failure = FailureOf(call);
    ASSERT_TRUE(failure.has_value()) << what;
    EXPECT_EQ(failure->code, ErrorCode::kDataLoss) << what << ": " << failure->message;
    EXPECT_NE(failure->message.find("corrupt"), std::string::npos) << failure->message;
    EXPECT_NE(failure->message.find("backup"), std::string::npos) << failure->message;
  }
  EXPECT_EQ(log->Head(partition), 20) << "the failed append took no sequence";
  const int b_partition = PartitionOf("t1", "b", kPartitions);
  EXPECT_EQ(log->Head(b_partition), b_partition == partition ? 20 : 0);
}

TEST_F(SqliteFaultTest, AWriteLockHeldLongerThanTheBusyTimeoutIsUnavailableSayingSo) {
  SqliteOptions options;
  options.busy_timeout = milliseconds(200);
  auto db = OpenSqliteDatabase(path_, options);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  auto reservations = NewSqliteReservationStore(db, clock_);
  const ReservationScope scope{kContext, "brand", "t1", "shop.brand-name"};

  RawDb other(path_);  // another connection, as another process would hold it
  other.Exec("BEGIN IMMEDIATE");
  const auto start = SteadyClock::now();
  const auto append = FailureOf([&] { log->Append(MakeStream(Ref("a"), 1)); });
  const auto waited = SteadyClock::now() - start;
  ASSERT_TRUE(append.has_value());
  EXPECT_EQ(append->code, ErrorCode::kUnavailable) << append->message;
  EXPECT_NE(append->message.find("busy_timeout (200 ms)"), std::string::npos) << append->message;
  EXPECT_GE(waited, milliseconds(150));
  EXPECT_LT(waited, milliseconds(5'000));
  const auto reserve = FailureOf(
      [&] { reservations->Reserve(scope, "acme", Ref("a"), "h1", milliseconds(1000)); });
  ASSERT_TRUE(reserve.has_value());
  EXPECT_EQ(reserve->code, ErrorCode::kUnavailable) << reserve->message;
  EXPECT_EQ(log->Head(PartitionOf("t1", "a", kPartitions)), 0) << "reads do not wait";

  other.Exec("ROLLBACK");
  EXPECT_TRUE(log->Append(MakeStream(Ref("a"), 1)).appended());
  EXPECT_TRUE(reservations->Reserve(scope, "acme", Ref("a"), "h1", milliseconds(1000)));
}

}  // namespace
}  // namespace wow::sqlite_test
