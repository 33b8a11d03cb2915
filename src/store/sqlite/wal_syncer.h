// WalSyncer (private): under synchronous=FULL, makes the group commit's durable writes durable off
// the writer's path. The writer commits without waiting for the disk (synchronous=NORMAL) and the
// leader hands the syncer each batch's durable works (group_commit.h); the syncer thread syncs the
// write-ahead log once for every batch committed meanwhile (fdatasync) and only then marks those
// works done and wakes their threads, while the writer runs the next batch. A leader that finds
// nothing else to do syncs its own batches on its thread instead (SyncCommitted). A work is thus
// acknowledged only once on disk, as under FULL. A sync that fails leaves its batches' outcome
// unknown; the failure is kept, and the group commit refuses every later write with it (after a
// failed fsync the kernel may have dropped the unsynced pages, so no later sync could vouch for
// them).
//
// Thread-safety: the syncer's state is guarded by the group commit's mutex, which the syncer is
// given and which its thread takes: the leader hands works over and reads the failure in the
// critical section that pops the works from its queue, one lock a batch. Every function below but
// the constructor, destructor and Start requires the caller to hold that mutex. The syncer holds
// no other lock, and syncs with the mutex released.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite/wal_file.h"
#include "store/sqlite/write_request.h"
#include "wow/sqlite.h"

namespace wow {

class SqliteDatabaseTestPeer;

namespace sqlite {

class WalSyncer {
 public:
  // `mutex` guards the syncer's state: the group commit's, which outlives the syncer. `path`
  // names the database in messages; `wal_path` is its write-ahead log, opened by the first sync.
  // Starts no thread (see Start).
  WalSyncer(std::mutex& mutex, std::string path, std::string wal_path);
  // Once every work handed over is synced and woken, stops the thread, if started, and joins it.
  ~WalSyncer();
  WalSyncer(const WalSyncer&) = delete;
  WalSyncer& operator=(const WalSyncer&) = delete;

  // Starts the syncer thread (for synchronous=FULL). Call at most once, before the first Hand,
  // without the mutex.
  void Start();

  // The failure of the sync that failed, once one did: every later write must fail with it.
  // Null until then.
  const std::exception_ptr& failure() const { return failure_; }

  // Hands over `request`, a durable work whose transaction just committed without a sync. The
  // sync that covers it marks it done, with that sync's failure if any, and posts its wake; from
  // then on the request may be gone.
  void Hand(WriteRequest* request) { unsynced_.push_back(request); }
  // Counts one more committed transaction among those of the works handed over (SqliteWriteStats
  // counts them as `synced` once their sync succeeded).
  void CountTransaction() { ++unsynced_transactions_; }
  // Wakes the syncer thread, to sync what was handed over.
  void Wake() { wanted_.notify_one(); }
  // Wakes the syncer thread when works wait for a sync and none runs.
  void WakeIfUnsynced() {
    if (!unsynced_.empty() && !syncing_) wanted_.notify_one();
  }
  // Whether the calling thread may run SyncCommitted now: no sync runs, and syncs are not held.
  bool MaySyncHere() const { return !syncing_ && !held_; }

  // REQUIRES: `lock` holds the mutex; works were handed over; no sync runs. Syncs the write-ahead
  // log for every work handed over so far, marks them done (with the sync's failure, if any) and
  // posts their wakes, except `self`'s. Run by the syncer thread, or by a leader with nothing else
  // to commit, which passes in `done_already` the works it finished already: their wakes are
  // posted (and the vector cleared) before the sync. Releases the lock while it syncs and posts;
  // returns with it held.
  void SyncCommitted(std::unique_lock<std::mutex>& lock, const WriteRequest* self,
                     std::vector<WriteRequest*>* done_already);

  // Adds the syncs' counters (synced, syncs, syncing_micros) to `stats`.
  void AddStats(SqliteWriteStats& stats) const;

 private:
  friend class ::wow::SqliteDatabaseTestPeer;

  // The syncer thread: syncs what was handed over whenever there is some, until destroyed.
  void Run();
  // Makes everything written to the write-ahead log so far durable; throws Error(kUnavailable)
  // when it cannot (or, for tests, when `simulate_failure`). Without the mutex; one caller at a
  // time (syncing_).
  void SyncWal(bool simulate_failure);

  std::mutex& mutex_;
  const std::string path_;
  const std::string wal_path_;

  // Guarded by mutex_.
  std::vector<WriteRequest*> unsynced_;      // committed durable works, in commit order
  std::uint64_t unsynced_transactions_ = 0;  // the transactions that hold them
  std::exception_ptr failure_;               // set once a sync failed
  bool syncing_ = false;                     // the syncer thread or a leader is syncing
  bool stopping_ = false;
  bool held_ = false;            // a test seam: while set, the thread syncs nothing
  bool fail_next_sync_ = false;  // a test seam: the next sync fails as an fdatasync with EIO
  std::uint64_t synced_ = 0;
  std::uint64_t syncs_ = 0;
  std::uint64_t syncing_micros_ = 0;
  std::condition_variable wanted_;

  WalFile wal_file_;  // used by whoever syncs (syncing_ lets one at a time)
  std::jthread thread_;
};

}  // namespace sqlite
}  // namespace wow
