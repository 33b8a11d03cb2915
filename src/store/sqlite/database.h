// SqliteDatabase (private definition): one open database file, shared by the stores built on it.
//
// Writes go through Write: the calling thread queues its work; the first queued thread becomes the
// leader, opens one BEGIN IMMEDIATE transaction on the single writer connection, runs the queued
// works of every waiting thread (up to max_group_commit appends), each inside its own savepoint
// when there are several, commits once, and wakes the others with their own outcomes
// (after LevelDB's write queue). A leader whose queue filled meanwhile commits the next batch too,
// up to a few batches, before it hands the writer to the thread at the front: a hand-off costs a
// wake-up on the writer's critical path. A work that throws alone fails alone: its savepoint is
// undone and its thread gets its exception; a failure that ends the transaction (busy, full, I/O,
// corrupt) fails every work of the batch, none of which then wrote anything.
//
// Syncing is off the writer's path. Under synchronous=FULL the writer commits without waiting for
// the disk (synchronous=NORMAL) and passes the batch's durable works to the syncer thread, which
// syncs the write-ahead log once for every batch committed meanwhile (fdatasync) and only then
// wakes their threads; the writer meanwhile runs the next batch. A leader that finds no other work
// queued and no sync running syncs its batches itself instead, sparing a lone writer the two
// thread switches. A work is thus acknowledged only once on disk, as under FULL, while the disk's
// sync overlaps the next batch. Lazy works are
// acknowledged at their commit. A sync that fails leaves the batches' outcome unknown; the
// database then refuses every later write (after a failed fsync the kernel may have dropped the
// unsynced pages, so no later sync could vouch for them).
//
// Checkpoints are mostly off the writer's path. A checkpointer thread, woken by the writer every
// 256 frames it commits, copies the write-ahead log into the file (PASSIVE, beside the writer).
// It never catches up with a writer that never pauses, so the writer still checkpoints itself
// once the log holds 2000 frames (instead of SQLite's automatic checkpoint at 1000): only a
// checkpoint with no commit of this process running meanwhile can copy the whole log, which lets
// the next transaction restart it from its beginning; by then the checkpointer has copied most of
// it. (A checkpointer alone, measured, let the log grow without bound.)
//
// Reads go through Read, on a pool of reader connections (WAL: readers never wait for the writer).
// A reader may see a commit shortly before it is synced: a power loss in that window loses it with
// every later commit (the log hides its unsynced entries from tails: see SqliteEventLog).
//
// The file's tables: wow_format (the format record), wow_tables (the registry of the aggregate
// tables), wow_contexts (each context's partition count), wow_partitions (per partition: the last
// sequence, lineage and lease) and wow_checkpoints.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <semaphore.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/common/commit_signal.h"
#include "store/sqlite/connection.h"
#include "wow/sqlite.h"
#include "wow/stream.h"

namespace wow {

namespace sqlite {

// The format this build reads and writes. Raise it with every change of the layout a reader of
// the previous format would misread, and teach OpenSqliteDatabase to refuse or migrate the old.
// 2: events kept as length-prefixed bytes.
// 3: the log tables keyed by position (PositionKey), so a partition's entries are one range of
//    rowids, without partition and sequence columns; facts kept as binary, not JSON (codec.h).
inline constexpr int kFormatVersion = 3;
// Written in the file's header (PRAGMA application_id): "Wow1".
inline constexpr std::int32_t kApplicationId = 0x576f7731;
inline constexpr int kMaxPartitions = 4096;

// The log tables' INTEGER PRIMARY KEY (rowid), `position`: partition << 40 | sequence, so that a
// partition's entries lie in one range of rowids, in sequence order, and ReadAfter reads them as
// one range scan. Sequences are 1 to kMaxSequence (2^40 - 1: an append past it is refused) and
// partitions below kMaxPartitions (2^12), so a key is below 2^52, never negative.
inline constexpr int kSequenceBits = 40;
inline constexpr Sequence kMaxSequence = (Sequence{1} << kSequenceBits) - 1;
static_assert(kMaxPartitions <= (std::int64_t{1} << (63 - kSequenceBits)));

// The key of `partition`'s sequence `sequence`. REQUIRES: 0 <= partition < kMaxPartitions,
// 0 <= sequence <= kMaxSequence.
constexpr std::int64_t PositionKey(int partition, Sequence sequence) {
  return (std::int64_t{partition} << kSequenceBits) | sequence;
}
// The position a key encodes. REQUIRES: key >= 0 (as PositionKey makes them).
constexpr Position KeyPosition(std::int64_t key) {
  return {static_cast<int>(key >> kSequenceBits), key & kMaxSequence};
}

enum class TableKind { kLog, kReservation, kTimer };

// How far a write's commit must reach before Write returns, when SqliteOptions::synchronous is
// kFull (under kNormal and kOff every commit is as the option says).
//   kDurable  on disk: the write-ahead log was synced after the commit. For the appends,
//             and what nothing else could rebuild.
//   kLazy     in the write-ahead log, synced by the next sync or checkpoint: survives a crash of
//             the process, and a power loss may lose it only with every later commit. For what
//             the log rebuilds (confirmed keys, timers, checkpoints) and what expires anyway
//             (pending keys, leases).
enum class WriteSync { kDurable, kLazy };

// "log", "reservation", "timer".
std::string_view KindName(TableKind kind);

// "wow_<kind>__<context>__<aggregate>". REQUIRES: context and aggregate are valid type names.
std::string TableName(TableKind kind, const std::string& context, const std::string& aggregate);

// An aggregate table of the registry.
struct RegisteredTable {
  std::string aggregate;
  std::string name;
};

}  // namespace sqlite

// Implemented by the stores built on a SqliteDatabase, so that one store can tell whether another
// keeps its data in the same file.
class SqliteBacked {
 public:
  virtual ~SqliteBacked() = default;
  virtual const SqliteDatabase& database() const = 0;
};

class SqliteDatabase {
 public:
  // Use OpenSqliteDatabase.
  SqliteDatabase(const std::string& path, const SqliteOptions& options);
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  const std::string& path() const { return path_; }
  const SqliteOptions& options() const { return options_; }

  // Runs `work` on the writer connection inside a write transaction, batched with the works of
  // other threads (see the file comment), and returns once the transaction committed. `weight`
  // counts toward max_group_commit (the streams of an append). `sync` says whether the commit must
  // be on disk when Write returns (see WriteSync). Rethrows what `work` threw, or the failure of
  // the transaction; then nothing `work` wrote is kept. Throws Error(kUnavailable) when the sync
  // after the commit failed (then the outcome is unknown), and for every Write after that.
  void Write(const std::function<void(sqlite::Connection&)>& work, int weight = 1,
             sqlite::WriteSync sync = sqlite::WriteSync::kDurable);

  // Runs `read` on a reader connection of the pool (outside any transaction; open one for a
  // consistent snapshot of several statements).
  template <typename F>
  auto Read(F&& read) {
    ReaderLease lease(*this);
    return read(*lease.connection);
  }

  // In a write transaction: creates the aggregate table `kind`/`context`/`aggregate` with its
  // indexes and records it in the registry, unless it exists. Throws Error(kFailedPrecondition)
  // when the registry records it in another format.
  void EnsureTable(sqlite::Connection& writer, sqlite::TableKind kind, const std::string& context,
                   const std::string& aggregate);
  // Whether the table exists (committed), looked up in the registry with `connection`.
  bool TableExists(sqlite::Connection& connection, const std::string& name);
  // The registered tables of `kind` and `context`, sorted by aggregate.
  std::vector<sqlite::RegisteredTable> Tables(sqlite::Connection& connection,
                                              sqlite::TableKind kind, const std::string& context);

  // In a write transaction: records that `context` has `partitions` partitions, or checks the
  // count recorded; throws Error(kFailedPrecondition) naming both counts when they differ.
  void ClaimPartitionCount(sqlite::Connection& writer, const std::string& context, int partitions);

  // The commit signal of `context`'s log in this process, shared by its logs on this database.
  std::shared_ptr<store::CommitSignal> Signal(const std::string& context, int partitions);

  // Makes every transaction committed to the file so far, by this process or another, durable:
  // syncs the write-ahead log on the calling thread (nothing when the file has none: its commits
  // were checkpointed into the file, synced). For readers that must not act on another process's
  // commit before it is on disk. Throws Error(kUnavailable) when the sync fails; this database's
  // writes go on (its syncer's next sync meets the same failure, if it covers them).
  void SyncForReaders();

  // See SqliteStats (wow/sqlite.h).
  using WriteStats = SqliteWriteStats;
  WriteStats write_stats() const;
  // How many Write calls are queued or running now. For tests.
  size_t queued_writes() const;

  // For tests of the syncer (synchronous=FULL): while held, it syncs nothing, so durable works
  // stay committed and unacknowledged; FailNextSyncForTesting makes its next sync fail as an
  // fdatasync that returned EIO would.
  void HoldSyncsForTesting(bool hold);
  void FailNextSyncForTesting();
  // For tests of the leader: `hook` runs on the leader's thread after each batch it committed
  // (nullptr: none); SyncNowForTesting syncs what is committed and unsynced on the calling thread,
  // as the syncer would. UnconsumedWakesForTesting counts the writes, in this process, whose wake
  // was posted more often than their thread waited: each such post is a bug, for it could instead
  // land on the thread's next write.
  void AfterEachBatchForTesting(std::function<void()> hook);
  void SyncNowForTesting();
  static int UnconsumedWakesForTesting();
  // For tests of SyncForReaders (nullptr: none): `arrived` runs on each caller's thread once it
  // noted the syncs started before it; `syncing` on the syncing thread, before its fdatasync. Set
  // them while no SyncForReaders runs.
  void ReaderSyncHooksForTesting(std::function<void()> arrived, std::function<void()> syncing);

 private:
  // A POSIX semaphore: unlike a condition variable, it may be posted after the mutex that
  // guards the state is released, and destroyed as soon as the waiter returns (POSIX allows it).
  class Wakeup {
   public:
    Wakeup() { sem_init(&semaphore_, 0, 0); }
    ~Wakeup() {
      int value = 0;
      sem_getvalue(&semaphore_, &value);
      if (value != 0) unconsumed_wakes_.fetch_add(1, std::memory_order_relaxed);
      sem_destroy(&semaphore_);
    }
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;
    void Post() { sem_post(&semaphore_); }
    void Wait() {
      while (sem_wait(&semaphore_) != 0) {  // only EINTR: a signal handler ran
      }
    }

   private:
    sem_t semaphore_;
  };
  static inline std::atomic<int> unconsumed_wakes_{0};

  // One Write call. Its thread sleeps on `wake` until it is the leader or its work is done; the
  // fields are written under write_mutex_ before `wake` is posted, which hands them over.
  struct WriteRequest {
    const std::function<void(sqlite::Connection&)>* work = nullptr;
    int weight = 1;
    sqlite::WriteSync sync = sqlite::WriteSync::kDurable;
    bool done = false;
    std::exception_ptr error;
    Wakeup wake;
  };

  struct ReaderLease {
    explicit ReaderLease(SqliteDatabase& db);
    ~ReaderLease();
    ReaderLease(const ReaderLease&) = delete;
    ReaderLease& operator=(const ReaderLease&) = delete;
    SqliteDatabase& db;
    std::unique_ptr<sqlite::Connection> connection;
  };

  sqlite::ConnectionOptions ConnectionOptionsFor(bool reader) const;
  void CheckAndInitialize();
  // Leads the group commit as `own`'s thread: commits the queue's batches (`own` in the first),
  // then hands the writer to the queue's front. True when `own` is done; false when it waits for
  // the syncer, which posts its wake.
  bool Lead(WriteRequest& own);
  // Runs the batch in one transaction; true when it committed. Sets each request's error.
  bool RunBatch(const std::vector<WriteRequest*>& batch);
  // The syncer thread (synchronous=FULL): syncs the write-ahead log for the committed durable
  // works, then wakes them.
  void RunSyncer();
  // With `lock` held and unsynced_ not empty, no sync running: syncs the write-ahead log for every
  // work in unsynced_, marks them done (with the sync's failure, if any) and posts their wakes,
  // except `self`'s. Run by the syncer, or by a leader with nothing else to commit, which passes
  // the works it finished already in `done_already`: posted (and cleared) before the sync.
  void SyncCommitted(std::unique_lock<std::mutex>& lock, const WriteRequest* self,
                     std::vector<WriteRequest*>* done_already);
  // Makes everything written to the write-ahead log so far durable; throws Error when it cannot
  // (or, for tests, when `simulate_failure`).
  void SyncWal(bool simulate_failure);
  // sqlite3_wal_hook of the writer, after each commit that leaves `frames` in the write-ahead log:
  // wakes the checkpointer every kCheckpointerFrames, and checkpoints on the writer past
  // kWriterCheckpointFrames.
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int frames);
  // The checkpointer thread: copies the log's frames into the file (PASSIVE) when woken.
  void RunCheckpointer();

  const std::string path_;
  const SqliteOptions options_;

  // The write queue; its front runs the batch on writer_, which only the leader touches.
  mutable std::mutex write_mutex_;
  std::deque<WriteRequest*> write_queue_;
  bool leading_ = false;  // a leader is running batches; guarded by write_mutex_
  std::unique_ptr<sqlite::Connection> writer_;
  const bool syncer_syncs_;  // synchronous=FULL: the writer commits NORMAL, the syncer syncs
  WriteStats write_stats_;   // guarded by write_mutex_

  // The syncer's state, guarded by write_mutex_.
  std::vector<WriteRequest*> unsynced_;      // committed durable works, in commit order
  std::uint64_t unsynced_transactions_ = 0;  // the transactions that hold them
  std::exception_ptr sync_failure_;          // set once a sync failed; every later Write fails
  bool syncing_ = false;                     // the syncer or a leader is syncing
  bool syncs_held_ = false;
  bool fail_next_sync_ = false;
  std::function<void()> after_each_batch_;  // for tests; set while no write runs
  bool stopping_ = false;
  std::condition_variable sync_wanted_;
  // The write-ahead log's path, and its file descriptor, opened by the first sync; used by whoever
  // syncs (syncing_ lets one at a time).
  std::string wal_path_;
  struct WalFile {
    int fd = -1;
    ~WalFile();
  } wal_file_;
  // SyncForReaders' own descriptor of the log, opened by its first sync; its syncs, numbered as
  // they start; the number of the last that succeeded; their count.
  std::mutex reader_sync_mutex_;
  WalFile reader_wal_file_;  // guarded by reader_sync_mutex_
  std::atomic<std::uint64_t> reader_syncs_started_{0};
  std::uint64_t reader_synced_through_ = 0;  // guarded by reader_sync_mutex_
  std::atomic<std::uint64_t> reader_syncs_{0};
  std::function<void()> reader_arrived_hook_;  // for tests; set while no SyncForReaders runs
  std::function<void()> reader_syncing_hook_;
  std::jthread syncer_;

  // The checkpointer's state, guarded by checkpoint_mutex_ (requested_frames_: the writer's).
  std::mutex checkpoint_mutex_;
  std::condition_variable checkpoint_wanted_;
  bool checkpoint_requested_ = false;
  bool checkpointer_stopping_ = false;
  int checkpoint_requested_frames_ = 0;  // the log's frames at the last wake; the writer's own
  std::atomic<std::uint64_t> checkpoints_{0};
  std::jthread checkpointer_;

  std::mutex readers_mutex_;
  std::vector<std::unique_ptr<sqlite::Connection>> idle_readers_;

  std::mutex tables_mutex_;
  std::set<std::string> existing_tables_;  // committed: tables are never dropped

  std::mutex signals_mutex_;
  std::map<std::string, std::shared_ptr<store::CommitSignal>> signals_;
};

}  // namespace wow
