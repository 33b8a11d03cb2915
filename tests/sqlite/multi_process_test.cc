// Several processes on one file, each a node: their appends interleave into one gapless sequence
// per partition, a tail in one sees another's commits within the poll interval, and of processes
// racing to reserve one key exactly one wins. Children are forked before the parent opens the
// file, and each test is bounded to seconds.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "sqlite_test_support.h"
#include "support/temp_dir.h"
#include "wow/sqlite.h"

namespace wow::sqlite_test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

class SqliteMultiProcessTest : public ::testing::Test {
 protected:
  testing_support::TempDir dir_;
  std::string path_ = dir_.File("wow.db");
};

TEST_F(SqliteMultiProcessTest, AppendsOfTwoProcessesInterleaveIntoOneGaplessSequencePerPartition) {
  constexpr int kChildren = 2;
  constexpr int kAggregates = 5;
  constexpr int kVersions = 30;
  auto child_ref = [](int child, int aggregate) {
    return Ref("p" + std::to_string(child) + "-" + std::to_string(aggregate));
  };
  Pipe start;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    children.push_back(ForkChild([&, c] {
      auto db = OpenSqliteDatabase(path_);  // synchronous=FULL: slow commits, which overlap
      auto log = NewSqliteEventLog(db, kContext, SystemClock::Instance());
      log->Create(kPartitions);
      if (start.Read(1).size() != 1) return 2;
      for (Version v = 1; v <= kVersions; ++v) {
        for (int a = 0; a < kAggregates; ++a) {
          if (!log->Append(MakeStream(child_ref(c, a), v)).appended()) return 3;
        }
      }
      return 0;
    }));
  }
  std::this_thread::sleep_for(milliseconds(100));  // both open the file, then start together
  start.Write(std::string(kChildren, 'g'));
  ASSERT_EQ(WaitChildren(children, milliseconds(60'000)), std::vector<int>(kChildren, 0));

  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, SystemClock::Instance());
  log->Create(kPartitions);
  size_t total = 0;
  int switches = 0;  // consecutive entries of a partition from different processes
  std::map<AggregateRef, Version> versions;
  for (int p = 0; p < kPartitions; ++p) {
    const std::vector<Entry> entries = log->ReadAfter(p, 0, 100'000);
    EXPECT_EQ(log->Head(p), static_cast<Sequence>(entries.size()));
    for (size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ(entries[i].position, (Position{p, static_cast<Sequence>(i) + 1}));
      EXPECT_EQ(entries[i].stream.version, ++versions[entries[i].stream.ref]);
      if (i > 0 && entries[i].stream.ref.id[1] != entries[i - 1].stream.ref.id[1]) ++switches;
    }
    total += entries.size();
  }
  EXPECT_EQ(total, static_cast<size_t>(kChildren * kAggregates * kVersions));
  for (const auto& [ref, version] : versions) EXPECT_EQ(version, kVersions) << ref;
  RecordProperty("switches", switches);
  EXPECT_GT(switches, 0) << "the two processes' appends did not interleave";
}

// A new file's first openers race to turn it to WAL and create its tables: SQLite answers some of
// them SQLITE_BUSY without waiting, which the open must ride out rather than fail.
TEST_F(SqliteMultiProcessTest, ProcessesOpeningOneNewFileAtOnceAllOpenIt) {
  constexpr int kRounds = 40;
  constexpr int kChildren = 4;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = dir_.File("new-" + std::to_string(round) + ".db");
    Pipe start;
    std::vector<pid_t> children;
    for (int c = 0; c < kChildren; ++c) {
      children.push_back(ForkChild([&, c] {
        if (start.Read(1).size() != 1) return 2;
        auto db = OpenSqliteDatabase(path);
        auto log = NewSqliteEventLog(db, kContext, SystemClock::Instance());
        log->Create(kPartitions);
        return log->Append(MakeStream(Ref("opener-" + std::to_string(c)), 1)).appended() ? 0 : 3;
      }));
    }
    start.Write(std::string(kChildren, 'g'));
    ASSERT_EQ(WaitChildren(children, milliseconds(30'000)), std::vector<int>(kChildren, 0))
        << "round " << round;
    auto db = OpenSqliteDatabase(path);
    auto log = NewSqliteEventLog(db, kContext, SystemClock::Instance());
    log->Create(kPartitions);
    Sequence total = 0;
    for (int p = 0; p < kPartitions; ++p) total += log->Head(p);
    EXPECT_EQ(total, kChildren) << "round " << round;
  }
}

TEST_F(SqliteMultiProcessTest, ATailSeesAnotherProcessesCommitWithinThePollInterval) {
  Pipe go;
  Pipe committed;
  const pid_t child = ForkChild([&] {
    if (go.Read(1).size() != 1) return 2;
    auto db = OpenSqliteDatabase(path_);
    auto log = NewSqliteEventLog(db, kContext, SystemClock::Instance());
    log->Create(kPartitions);
    if (!log->Append(MakeStream(Ref("a"), 1)).appended()) return 3;
    const auto at = SteadyClock::now().time_since_epoch().count();  // CLOCK_MONOTONIC: system-wide
    committed.Write(std::string(reinterpret_cast<const char*>(&at), sizeof at));
    return 0;
  });

  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, SystemClock::Instance());
  log->Create(kPartitions);
  const int partition = PartitionOf("t1", "a", kPartitions);
  std::vector<Entry> tailed;
  SteadyClock::time_point returned;
  std::jthread tail([&] {
    tailed = log->Tail(partition, 0, 10, milliseconds(10'000));
    returned = SteadyClock::now();
  });
  // Idle for 1.6 s, the tail polls at its slowest, once a second.
  std::this_thread::sleep_for(milliseconds(1'600));
  go.Write("g");
  tail.join();
  const std::string at = committed.Read(sizeof(SteadyClock::rep));
  ASSERT_EQ(WaitChildren({child}, milliseconds(20'000)), std::vector<int>{0});
  ASSERT_EQ(at.size(), sizeof(SteadyClock::rep));
  SteadyClock::rep ticks = 0;
  std::memcpy(&ticks, at.data(), sizeof ticks);
  const auto delay = returned - SteadyClock::time_point(SteadyClock::duration(ticks));

  ASSERT_EQ(tailed.size(), 1u);
  EXPECT_EQ(tailed[0].position, (Position{partition, 1}));
  EXPECT_EQ(tailed[0].stream, MakeStream(Ref("a"), 1));
  EXPECT_LT(delay, milliseconds(1'000 + 400)) << "the max poll interval is 1 s";
  RecordProperty("delay_ms",
                 static_cast<int>(std::chrono::duration_cast<milliseconds>(delay).count()));
}

TEST_F(SqliteMultiProcessTest, ProcessesReservingOneKeyHaveExactlyOneWinner) {
  constexpr int kChildren = 3;
  constexpr int kKeys = 40;
  const ReservationScope scope{kContext, "brand", "t1", "shop.brand-name"};
  auto owner = [](int child) { return Ref("owner-" + std::to_string(child)); };
  Pipe start;
  Pipe report;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    children.push_back(ForkChild([&, c] {
      SqliteOptions options;
      options.synchronous = SqliteOptions::Synchronous::kNormal;
      auto db = OpenSqliteDatabase(path_, options);
      auto store = NewSqliteReservationStore(db, SystemClock::Instance());
      if (start.Read(1).size() != 1) return 2;
      std::string wins(1, static_cast<char>('0' + c));
      for (int k = 0; k < kKeys; ++k) {
        wins += store->Reserve(scope, "key-" + std::to_string(k), owner(c), "h",
                               milliseconds(600'000))
                    ? '1'
                    : '0';
      }
      report.Write(wins);  // shorter than PIPE_BUF: written whole
      return 0;
    }));
  }
  std::this_thread::sleep_for(milliseconds(100));
  start.Write(std::string(kChildren, 'g'));
  const std::string reports = report.Read(kChildren * (kKeys + 1));
  ASSERT_EQ(WaitChildren(children, milliseconds(30'000)), std::vector<int>(kChildren, 0));
  ASSERT_EQ(reports.size(), static_cast<size_t>(kChildren * (kKeys + 1)));

  std::vector<std::vector<bool>> won(kChildren, std::vector<bool>(kKeys));
  for (int r = 0; r < kChildren; ++r) {
    const std::string one = reports.substr(static_cast<size_t>(r) * (kKeys + 1), kKeys + 1);
    const int child = one[0] - '0';
    for (int k = 0; k < kKeys; ++k) won[child][k] = one[k + 1] == '1';
  }
  auto db = OpenSqliteDatabase(path_);
  auto store = NewSqliteReservationStore(db, SystemClock::Instance());
  for (int k = 0; k < kKeys; ++k) {
    int winners = 0;
    int winner = -1;
    for (int c = 0; c < kChildren; ++c) {
      if (won[c][k]) {
        ++winners;
        winner = c;
      }
    }
    ASSERT_EQ(winners, 1) << "key-" << k;
    const auto reservation = store->Find(scope, "key-" + std::to_string(k));
    ASSERT_TRUE(reservation.has_value());
    EXPECT_EQ(reservation->owner, owner(winner));
  }
}

}  // namespace
}  // namespace wow::sqlite_test
