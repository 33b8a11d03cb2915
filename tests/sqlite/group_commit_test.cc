// Group commit: concurrent appends of several threads are committed together in one transaction,
// each with its own outcome, and a work that fails in a batch fails alone.
#include <gtest/gtest.h>

#include <latch>
#include <map>
#include <set>
#include <thread>

#include "sqlite_database_test_peer.h"
#include "sqlite_test_support.h"
#include "store/sqlite/database.h"
#include "support/temp_dir.h"
#include "wow/sqlite.h"

namespace wow::sqlite_test {
namespace {

using std::chrono::milliseconds;

class SqliteGroupCommitTest : public ::testing::Test {
 protected:
  // Waits until `n` writes are queued on db (the leader's included).
  static void AwaitQueued(SqliteDatabase& db, size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (SqliteDatabaseTestPeer::QueuedWrites(db) < n &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    ASSERT_EQ(SqliteDatabaseTestPeer::QueuedWrites(db), n);
  }

  testing_support::TempDir dir_;
  std::string path_ = dir_.File("wow.db");
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
};

// Eight threads append 40 streams each, at the default durability (synchronous=FULL): every
// append succeeds, at sequences that are distinct and gapless per partition.
TEST_F(SqliteGroupCommitTest, ConcurrentAppendsOfEightThreadsAllSucceedAtDistinctGaplessSequences) {
  constexpr int kThreads = 8;
  constexpr int kAggregates = 4;
  constexpr int kVersions = 10;
  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  const auto before = db->write_stats();

  std::vector<std::vector<std::pair<Stream, AppendResult>>> outcomes(kThreads);
  {
    std::latch start(kThreads);
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        for (Version v = 1; v <= kVersions; ++v) {
          for (int a = 0; a < kAggregates; ++a) {
            Stream stream = MakeStream(Ref("t" + std::to_string(t) + "-" + std::to_string(a)), v);
            AppendResult result = log->Append(stream);
            outcomes[t].emplace_back(std::move(stream), std::move(result));
          }
        }
      });
    }
  }

  std::map<int, std::set<Sequence>> sequences;
  int appended = 0;
  for (const auto& thread : outcomes) {
    for (const auto& [stream, result] : thread) {
      ASSERT_TRUE(result.appended()) << static_cast<int>(result.kind()) << " " << result.reason();
      ++appended;
      EXPECT_TRUE(sequences[result.position().partition].insert(result.position().sequence).second)
          << "sequence given twice";
      EXPECT_EQ(result.position().partition,
                PartitionOf(stream.ref.tenant_id, stream.ref.id, kPartitions));
    }
  }
  EXPECT_EQ(appended, kThreads * kAggregates * kVersions);
  for (const auto& [partition, taken] : sequences) {
    EXPECT_EQ(*taken.begin(), 1);
    EXPECT_EQ(*taken.rbegin(), static_cast<Sequence>(taken.size())) << "gap in " << partition;
    EXPECT_EQ(log->Head(partition), static_cast<Sequence>(taken.size()));
    // The log holds what each append was told, in sequence order, versions in order.
    std::map<AggregateRef, Version> versions;
    for (const Entry& entry : log->ReadAfter(partition, 0, 10'000)) {
      EXPECT_EQ(entry.stream.version, ++versions[entry.stream.ref]) << entry.stream.ref;
    }
  }
  const auto after = db->write_stats();
  RecordProperty("transactions", static_cast<int>(after.transactions - before.transactions));
  RecordProperty("appends", appended);
  EXPECT_EQ(after.works - before.works, static_cast<std::uint64_t>(appended));
}

// While a leader commits, three appends and a failing work queue behind it: they commit in one
// transaction, each with its own outcome; the failing work's writes are undone alone.
TEST_F(SqliteGroupCommitTest,
       ConcurrentWritesQueuedBehindTheLeaderCommitTogetherAndAFailureFailsAlone) {
  auto db = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  ASSERT_TRUE(log->Append(MakeStream(Ref("c"), 1)).appended());

  std::latch leader_running(1);
  std::latch release_leader(1);
  std::jthread leader([&] {
    db->Write([&](sqlite::Connection&) {
      leader_running.count_down();
      release_leader.wait();
    });
  });
  leader_running.wait();
  const auto before = db->write_stats();

  AppendResult a = AppendResult::Unknown("not run");
  AppendResult c = AppendResult::Unknown("not run");
  AppendResult d = AppendResult::Unknown("not run");
  std::optional<Failure> failed;
  std::vector<std::jthread> writers;
  writers.emplace_back([&] { a = log->Append(MakeStream(Ref("a"), 1)); });
  AwaitQueued(*db, 2);
  writers.emplace_back([&] {
    failed = FailureOf([&] {
      db->Write([](sqlite::Connection& w) {
        sqlite::Query(w,
                      "INSERT INTO wow_checkpoints (context, partition, subscription, sequence) "
                      "VALUES ('shop', 0, 'doomed', 5)")
            .Run();
        throw Error(ErrorCode::kInternal, "the work failed");
      });
    });
  });
  AwaitQueued(*db, 3);
  writers.emplace_back([&] { c = log->Append(MakeStream(Ref("c"), 3)); });  // version 2 is next
  AwaitQueued(*db, 4);
  writers.emplace_back([&] { d = log->Append(MakeStream(Ref("d"), 1)); });
  AwaitQueued(*db, 5);
  release_leader.count_down();
  leader.join();
  writers.clear();

  EXPECT_TRUE(a.appended()) << static_cast<int>(a.kind()) << " " << a.reason();
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->message, "INTERNAL: the work failed");
  EXPECT_EQ(c, AppendResult::Conflict());
  EXPECT_TRUE(d.appended()) << static_cast<int>(d.kind()) << " " << d.reason();
  EXPECT_EQ(log->Checkpoint(0, "doomed"), 0) << "the failed work's write was undone";
  EXPECT_EQ(log->PositionOf(Ref("a"), 1), a.position());
  EXPECT_EQ(log->PositionOf(Ref("d"), 1), d.position());
  const auto after = db->write_stats();
  EXPECT_EQ(after.transactions - before.transactions, 2u) << "the leader's, then one for all";
  EXPECT_EQ(after.works - before.works, 5u);
}

// The writer keeps a guess at each partition's last sequence; two databases on one file, each with
// its own writer and guesses, appending in turn to one partition, still take gapless sequences:
// each finds its guess stale after the other's append and reads the counter.
TEST_F(SqliteGroupCommitTest, TwoDatabasesOnOneFileAppendingInTurnTakeGaplessSequences) {
  auto db1 = OpenSqliteDatabase(path_);
  auto db2 = OpenSqliteDatabase(path_);
  auto log1 = NewSqliteEventLog(db1, kContext, clock_);
  auto log2 = NewSqliteEventLog(db2, kContext, clock_);
  log1->Create(kPartitions);
  log2->Create(kPartitions);
  const int partition = PartitionOf("t1", "a", kPartitions);
  for (Version v = 1; v <= 12; ++v) {
    EventLog& log = (v % 4 < 2) ? *log1 : *log2;  // two appends each, in turn
    const AppendResult result = log.Append(MakeStream(Ref("a"), v));
    ASSERT_TRUE(result.appended()) << "version " << v << ": " << result.reason();
    EXPECT_EQ(result.position(), (Position{partition, v})) << "version " << v;
  }
  EXPECT_EQ(log1->Head(partition), 12);
  EXPECT_EQ(log2->Head(partition), 12);
}

TEST_F(SqliteGroupCommitTest, ConcurrentAppendsBatchAtMostMaxGroupCommitStreams) {
  SqliteOptions options;
  options.max_group_commit = 2;
  auto db = OpenSqliteDatabase(path_, options);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);

  std::latch leader_running(1);
  std::latch release_leader(1);
  std::jthread leader([&] {
    db->Write([&](sqlite::Connection&) {
      leader_running.count_down();
      release_leader.wait();
    });
  });
  leader_running.wait();
  const auto before = db->write_stats();
  std::vector<AppendResult> results(4, AppendResult::Unknown("not run"));
  std::vector<std::jthread> writers;
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back(
        [&, i] { results[i] = log->Append(MakeStream(Ref("x" + std::to_string(i)), 1)); });
    AwaitQueued(*db, static_cast<size_t>(i) + 2);
  }
  release_leader.count_down();
  leader.join();
  writers.clear();
  for (const AppendResult& result : results) EXPECT_TRUE(result.appended());
  const auto after = db->write_stats();
  EXPECT_EQ(after.transactions - before.transactions, 3u) << "the leader's, then 2 + 2";
}

// A leader whose queue filled while it committed commits the next batches too (a few at most),
// rather than waking another thread for each.
// Eight writes queue behind a leader whose work blocks, one work a batch. `own` is the leader's own
// write's durability; `syncs_held` holds the syncer. Returns how many of the eight the leader's
// thread ran.
int RunOnLeader(const std::string& path, sqlite::WriteSync own, bool syncs_held,
                std::uint64_t* transactions) {
  SqliteOptions options;
  options.max_group_commit = 1;  // one work a batch
  auto db = OpenSqliteDatabase(path, options);
  SqliteDatabaseTestPeer::HoldSyncs(*db, syncs_held);
  std::latch leader_running(1);
  std::latch release_leader(1);
  std::thread::id leader_thread;
  std::jthread leader([&] {
    leader_thread = std::this_thread::get_id();
    db->Write(
        [&](sqlite::Connection&) {
          leader_running.count_down();
          release_leader.wait();
        },
        1, own);
  });
  leader_running.wait();
  const auto before = db->write_stats();
  constexpr int kQueued = 8;
  std::vector<std::thread::id> ran_on(kQueued);
  std::vector<std::jthread> writers;
  for (int i = 0; i < kQueued; ++i) {
    writers.emplace_back([&, i] {
      db->Write([&](sqlite::Connection&) { ran_on[i] = std::this_thread::get_id(); }, 1,
                sqlite::WriteSync::kLazy);
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (SqliteDatabaseTestPeer::QueuedWrites(*db) < static_cast<size_t>(i) + 2 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
  }
  release_leader.count_down();
  writers.clear();
  SqliteDatabaseTestPeer::HoldSyncs(*db, false);
  leader.join();
  *transactions = db->write_stats().transactions - before.transactions;
  int on_leader = 0;
  for (const std::thread::id& id : ran_on) on_leader += id == leader_thread ? 1 : 0;
  return on_leader;
}

TEST_F(SqliteGroupCommitTest, ConcurrentWritesQueuedBehindALeaderAreCommittedByItForAFewBatches) {
  std::uint64_t transactions = 0;
  const int on_leader = RunOnLeader(path_, sqlite::WriteSync::kLazy, false, &transactions);
  EXPECT_EQ(transactions, 9u);
  EXPECT_GE(on_leader, 1) << "the leader handed the writer on after its own batch";
  EXPECT_LT(on_leader, 8) << "the leader never handed the writer on";
}

TEST_F(SqliteGroupCommitTest, ConcurrentWritesQueuedBehindALeaderWaitingForTheSyncerAllRunOnIt) {
  std::uint64_t transactions = 0;
  const int on_leader = RunOnLeader(path_, sqlite::WriteSync::kDurable, true, &transactions);
  EXPECT_EQ(transactions, 9u);
  EXPECT_EQ(on_leader, 8) << "a leader whose own write waits for the syncer keeps leading";
}

TEST_F(SqliteGroupCommitTest, AppendAllIsOneTransactionWhateverItsSize) {
  SqliteOptions options;
  options.max_group_commit = 4;
  auto db = OpenSqliteDatabase(path_, options);
  auto log = NewSqliteEventLog(db, kContext, clock_);
  log->Create(kPartitions);
  std::vector<Stream> streams;
  for (int i = 0; i < 16; ++i) streams.push_back(MakeStream(Ref("s" + std::to_string(i)), 1));
  const auto before = db->write_stats();
  for (const AppendResult& result : log->AppendAll(streams)) EXPECT_TRUE(result.appended());
  EXPECT_EQ(db->write_stats().transactions - before.transactions, 1u);
}

// The writer's busy time counts the works it ran inside their transaction; the sync time counts
// only syncs (synchronous=NORMAL syncs nothing at commit).
TEST_F(SqliteGroupCommitTest, WritingTimeCountsTheWorksRunInTheTransaction) {
  SqliteOptions options;
  options.synchronous = SqliteOptions::Synchronous::kNormal;
  auto db = OpenSqliteDatabase(path_, options);
  const auto before = db->write_stats();
  db->Write([](sqlite::Connection&) { std::this_thread::sleep_for(milliseconds(30)); });
  const auto after = db->write_stats();
  EXPECT_GE(after.writing_micros - before.writing_micros, 30'000u);
  EXPECT_LT(after.writing_micros - before.writing_micros, 30'000'000u);
  EXPECT_EQ(after.syncing_micros, before.syncing_micros);
}

}  // namespace
}  // namespace wow::sqlite_test
