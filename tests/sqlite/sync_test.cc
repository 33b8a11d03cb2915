// The syncer and the checkpointer (synchronous=FULL): a durable write is acknowledged only once
// the write-ahead log is synced after its commit, and batches committed meanwhile share one sync;
// lazy writes do not wait for it; the log's tails never see an entry before it is synced, another
// process's included (they sync the log themselves first); a
// failed sync fails its writes and every later one; the write-ahead log stays bounded under writes
// that never pause.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "sqlite_database_test_peer.h"
#include "sqlite_test_support.h"
#include "store/sqlite/database.h"
#include "support/temp_dir.h"
#include "wow/sqlite.h"

namespace wow::sqlite_test {
namespace {

using std::chrono::milliseconds;

class SqliteSyncTest : public ::testing::Test {
 protected:
  void SetUp() override { log_->Create(kPartitions); }

  // Waits until `done` holds, for at most 30 s.
  template <typename Condition>
  static bool Eventually(Condition done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(milliseconds(1));
    }
    return true;
  }

  testing_support::TempDir dir_;
  std::string path_ = dir_.File("wow.db");
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::shared_ptr<SqliteDatabase> db_ = OpenSqliteDatabase(path_);
  std::shared_ptr<EventLog> log_ = NewSqliteEventLog(db_, kContext, clock_);
};

// A second database handle on the file stands for another process: it has its own writer and
// syncer, and cannot see this handle's appends in flight.
TEST_F(SqliteSyncTest,
       ConcurrentUnsyncedAppendOfAnotherProcessReachesATailOnlyAfterTheTailSyncedTheLog) {
  auto other_db = OpenSqliteDatabase(path_);
  auto other_log = NewSqliteEventLog(other_db, kContext, clock_);
  other_log->Create(kPartitions);
  const int partition = PartitionOf("t1", "p1", kPartitions);
  const auto before = db_->write_stats();
  SqliteDatabaseTestPeer::HoldSyncs(*db_, true);
  std::atomic<bool> returned{false};
  std::jthread appender([&] {
    EXPECT_TRUE(log_->Append(MakeStream(Ref("p1"), 1)).appended());
    returned = true;
  });
  ASSERT_TRUE(Eventually([&] { return db_->write_stats().transactions > before.transactions; }));
  ASSERT_FALSE(returned) << "held: committed, not synced";

  EXPECT_EQ(other_db->write_stats().reader_syncs, 0u);
  ASSERT_EQ(other_log->ReadAfter(partition, 0, 10).size(), 1u);
  EXPECT_EQ(other_db->write_stats().reader_syncs, 1u)
      << "the other process's tail delivered an entry nobody had synced";
  ASSERT_EQ(other_log->ReadAfter(partition, 0, 10).size(), 1u);
  EXPECT_EQ(other_db->write_stats().reader_syncs, 1u) << "synced already: no second sync";

  SqliteDatabaseTestPeer::HoldSyncs(*db_, false);
}

TEST_F(SqliteSyncTest, ATailSyncsOnceToCatchUpOnAnotherProcesssEntriesAndNeverForItsOwn) {
  auto other_db = OpenSqliteDatabase(path_);
  auto other_log = NewSqliteEventLog(other_db, kContext, clock_);
  other_log->Create(kPartitions);
  const int partition = PartitionOf("t1", "q1", kPartitions);
  for (Version v = 1; v <= 5; ++v) {
    ASSERT_TRUE(other_log->Append(MakeStream(Ref("q1"), v)).appended());
  }
  for (Sequence after = 0; after < 5; ++after) {
    ASSERT_EQ(log_->ReadAfter(partition, after, 1).size(), 1u) << after;
  }
  EXPECT_EQ(db_->write_stats().reader_syncs, 1u) << "one sync covers the whole snapshot";
  EXPECT_EQ(other_db->write_stats().reader_syncs, 0u) << "its own acknowledged appends";
  for (Sequence after = 0; after < 5; ++after) {
    ASSERT_EQ(other_log->ReadAfter(partition, after, 1).size(), 1u) << after;
  }
  EXPECT_EQ(other_db->write_stats().reader_syncs, 0u);

  // synchronous=NORMAL promises no sync at commit, so its tails run none either.
  SqliteOptions normal;
  normal.synchronous = SqliteOptions::Synchronous::kNormal;
  auto normal_db = OpenSqliteDatabase(path_, normal);
  auto normal_log = NewSqliteEventLog(normal_db, kContext, clock_);
  normal_log->Create(kPartitions);
  ASSERT_EQ(normal_log->ReadAfter(partition, 0, 10).size(), 5u);
  EXPECT_EQ(normal_db->write_stats().reader_syncs, 0u);
}

// Callers that arrive while a reader sync runs cannot count on it (it started before their
// snapshots were taken, so it may not cover them), but one sync started after they arrived covers
// them all: three callers, two syncs.
TEST_F(SqliteSyncTest, ConcurrentReaderSyncsShareOneSyncStartedAfterTheyArrived) {
  ASSERT_TRUE(log_->Append(MakeStream(Ref("s1"), 1)).appended());  // the log exists
  std::atomic<int> arrived{0};
  std::atomic<int> syncing{0};
  std::atomic<bool> release{false};
  SqliteDatabaseTestPeer::ReaderSyncHooks(
      *db_, [&] { ++arrived; },
      [&] {
        if (++syncing == 1) {
          while (!release) std::this_thread::yield();
        }
      });
  const std::uint64_t before = db_->write_stats().reader_syncs;
  {
    std::jthread first([&] { db_->SyncForReaders(); });
    ASSERT_TRUE(Eventually([&] { return syncing == 1; }));
    std::jthread second([&] { db_->SyncForReaders(); });
    std::jthread third([&] { db_->SyncForReaders(); });
    ASSERT_TRUE(Eventually([&] { return arrived == 3; }));
    release = true;
  }
  EXPECT_EQ(db_->write_stats().reader_syncs - before, 2u)
      << "the two callers that arrived during the first sync share the next one, and neither "
         "counts on the first";
  EXPECT_EQ(syncing, 2);
  SqliteDatabaseTestPeer::ReaderSyncHooks(*db_, nullptr, nullptr);
}

TEST_F(SqliteSyncTest, AnAppendReturnsOnlyOnceSyncedAndTailsDoNotSeeItBefore) {
  const Stream stream = MakeStream(Ref("b1"), 1);
  const int partition = PartitionOf("t1", "b1", kPartitions);
  const auto before = db_->write_stats();
  SqliteDatabaseTestPeer::HoldSyncs(*db_, true);
  std::atomic<bool> returned{false};
  AppendResult result = AppendResult::Unknown("not run");
  std::jthread appender([&] {
    result = log_->Append(stream);
    returned = true;
  });
  ASSERT_TRUE(Eventually([&] { return db_->write_stats().transactions > before.transactions; }));
  EXPECT_EQ(log_->Head(partition), 1) << "committed, so readers see it";
  EXPECT_TRUE(log_->ReadAfter(partition, 0, 10).empty()) << "a tail must not get it unsynced";
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(returned) << "the append returned before its commit was synced";
  EXPECT_EQ(db_->write_stats().synced, before.synced);

  SqliteDatabaseTestPeer::HoldSyncs(*db_, false);
  appender.join();
  EXPECT_TRUE(result.appended());
  const auto entries = log_->ReadAfter(partition, 0, 10);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].stream.ref, stream.ref);
  EXPECT_EQ(db_->write_stats().synced, before.synced + 1);
  EXPECT_EQ(db_->write_stats().syncs, before.syncs + 1);
}

// A lone leader syncs its own batch, unless the syncer synced it while the leader ran: then the
// syncer posts the leader's wake, and the leader's Write must wait for that post. Before the fix,
// it synced again and returned; the syncer's post could then land on the wake of the thread's next
// write, which led beside the real leader on one connection (SQLite crashed in sqlite3_reset).
TEST_F(SqliteSyncTest, ALeaderWhoseWriteTheSyncerSyncedMeanwhileWaitsForTheSyncersWake) {
  const int unconsumed = SqliteDatabaseTestPeer::UnconsumedWakes();
  const auto before = db_->write_stats();
  SqliteDatabaseTestPeer::AfterEachBatch(*db_, [this] { SqliteDatabaseTestPeer::SyncNow(*db_); });
  EXPECT_TRUE(log_->Append(MakeStream(Ref("b1"), 1)).appended());
  SqliteDatabaseTestPeer::AfterEachBatch(*db_, nullptr);
  EXPECT_EQ(db_->write_stats().syncs, before.syncs + 1) << "the hook's sync, and no other";
  EXPECT_EQ(SqliteDatabaseTestPeer::UnconsumedWakes(), unconsumed)
      << "the syncer posted a wake no one waited for";
}

TEST_F(SqliteSyncTest, LazyWritesDoNotWaitForTheSyncer) {
  SqliteDatabaseTestPeer::HoldSyncs(*db_, true);
  log_->CommitCheckpoint(0, "projection", 0);  // would hang here if it waited
  EXPECT_TRUE(log_->AcquireLease(0, "node-1", milliseconds(10'000)));
  SqliteDatabaseTestPeer::HoldSyncs(*db_, false);
  EXPECT_EQ(log_->LeaseOf(0)->node, "node-1");
}

TEST_F(SqliteSyncTest, ConcurrentAppendsCommittedWhileASyncRunsShareTheNextSync) {
  constexpr int kAppenders = 6;
  const auto before = db_->write_stats();
  SqliteDatabaseTestPeer::HoldSyncs(*db_, true);
  std::vector<AppendResult> results(kAppenders, AppendResult::Unknown("not run"));
  {
    std::vector<std::jthread> appenders;
    for (int i = 0; i < kAppenders; ++i) {
      appenders.emplace_back(
          [&, i] { results[i] = log_->Append(MakeStream(Ref("c" + std::to_string(i)), 1)); });
    }
    ASSERT_TRUE(Eventually([&] {
      return db_->write_stats().works == before.works + kAppenders &&
             SqliteDatabaseTestPeer::QueuedWrites(*db_) == 0;
    }));
    SqliteDatabaseTestPeer::HoldSyncs(*db_, false);
  }
  for (const AppendResult& result : results) EXPECT_TRUE(result.appended());
  const auto after = db_->write_stats();
  EXPECT_EQ(after.synced - before.synced, after.transactions - before.transactions);
  EXPECT_EQ(after.syncs - before.syncs, 1u) << "the held commits were synced together";
}

TEST_F(SqliteSyncTest, AFailedSyncFailsItsWriteAndEveryLaterWriteUntilReopened) {
  SqliteDatabaseTestPeer::FailNextSync(*db_);
  const auto failure = FailureOf([&] { log_->Append(MakeStream(Ref("d1"), 1)); });
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, ErrorCode::kUnavailable);
  EXPECT_NE(failure->message.find("syncing the write-ahead log failed"), std::string::npos)
      << failure->message;
  EXPECT_NE(failure->message.find("open the database again"), std::string::npos);

  const auto later = FailureOf([&] { log_->Append(MakeStream(Ref("d2"), 1)); });
  ASSERT_TRUE(later.has_value()) << "a write after a failed sync must fail too";
  EXPECT_EQ(later->message, failure->message);
  EXPECT_EQ(log_->PositionOf(Ref("d2"), 1), std::nullopt) << "the refused write wrote nothing";

  // Reads go on; the failed append's outcome is unknown to its caller, and here it committed.
  EXPECT_TRUE(log_->PositionOf(Ref("d1"), 1).has_value());
  auto reopened = OpenSqliteDatabase(path_);
  auto log = NewSqliteEventLog(reopened, kContext, clock_);
  log->Open();
  EXPECT_TRUE(log->Append(MakeStream(Ref("d2"), 1)).appended());
}

// Four threads append without a pause about 40 MiB of streams: checkpoints copy the log into the
// file and the log restarts from its beginning, so it never holds more than a few thousand pages.
// The checkpointer copies the log into the file as the writer commits, before the writer's own
// checkpoint (past 2,000 frames) would.
TEST_F(SqliteSyncTest, TheCheckpointerCopiesTheLogIntoTheFileOffTheWritersPath) {
  const std::uintmax_t file_before = std::filesystem::file_size(path_);
  for (int i = 0; i < 100; ++i) {  // about 5 pages each: 500 frames
    ASSERT_TRUE(log_->Append(MakeStream(Ref("c" + std::to_string(i)), 1, 16 * 1024)).appended());
  }
  ASSERT_TRUE(Eventually([&] { return db_->write_stats().checkpoints >= 1; }));
  ASSERT_TRUE(Eventually([&] {
    return std::filesystem::file_size(path_) > file_before + 1024 * 1024;
  })) << "the pages reached the file: "
      << std::filesystem::file_size(path_) << " bytes";
}

TEST_F(SqliteSyncTest, ConcurrentWritesThatNeverPauseKeepTheWriteAheadLogBounded) {
  constexpr int kThreads = 4;
  constexpr int kStreams = 600;  // per thread, 16 KiB each
  std::uintmax_t largest_log = 0;
  std::atomic<int> finished{0};
  {
    std::vector<std::jthread> appenders;
    for (int t = 0; t < kThreads; ++t) {
      appenders.emplace_back([&, t] {
        for (int i = 0; i < kStreams; ++i) {
          const std::string id = "w" + std::to_string(t) + "-" + std::to_string(i);
          EXPECT_TRUE(log_->Append(MakeStream(Ref(id), 1, 16 * 1024)).appended());
        }
        ++finished;
      });
    }
    while (finished < kThreads) {
      std::error_code missing;  // before the first commit
      const std::uintmax_t size = std::filesystem::file_size(path_ + "-wal", missing);
      if (!missing) largest_log = std::max(largest_log, size);
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  largest_log = std::max(largest_log, std::filesystem::file_size(path_ + "-wal"));
  EXPECT_GT(std::filesystem::file_size(path_), 30u * 1024 * 1024) << "the pages reached the file";
  EXPECT_LT(largest_log, 16u * 1024 * 1024) << "the log grew to " << largest_log << " bytes";
}

}  // namespace
}  // namespace wow::sqlite_test
