// SqliteDatabaseTestPeer: the test seams of SqliteDatabase and its parts (src/store/sqlite), for
// white-box tests of the group commit, the syncer and the readers' syncs. A friend of the facade
// and of the parts, it reaches their private state under the locks that guard it, so that the
// production classes carry no functions for tests.
//
// Thread-safety: as each function says; none may run while the database is being destroyed.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <utility>

#include "store/sqlite/database.h"

namespace wow {

class SqliteDatabaseTestPeer {
 public:
  // How many Write calls of `db` are queued or running now (the leader's included).
  static size_t QueuedWrites(const SqliteDatabase& db) {
    const sqlite::GroupCommit& group = db.group_commit_;
    std::lock_guard lock(group.mutex_);
    return group.queue_.size();
  }

  // For tests of the syncer (synchronous=FULL): while held, it syncs nothing, and no leader syncs
  // its own batches either, so durable works stay committed and unacknowledged.
  static void HoldSyncs(SqliteDatabase& db, bool hold) {
    sqlite::GroupCommit& group = db.group_commit_;
    {
      std::lock_guard lock(group.mutex_);
      group.syncer_.held_ = hold;
    }
    group.syncer_.wanted_.notify_all();
  }

  // Makes the next sync of `db`'s syncer fail as an fdatasync that returned EIO would.
  static void FailNextSync(SqliteDatabase& db) {
    sqlite::GroupCommit& group = db.group_commit_;
    std::lock_guard lock(group.mutex_);
    group.syncer_.fail_next_sync_ = true;
  }

  // `hook` runs on the leader's thread after each batch it committed (nullptr: none), without
  // the group commit's mutex. Set it while no Write runs.
  static void AfterEachBatch(SqliteDatabase& db, std::function<void()> hook) {
    sqlite::GroupCommit& group = db.group_commit_;
    std::lock_guard lock(group.mutex_);
    group.after_each_batch_ = std::move(hook);
  }

  // Syncs what is committed and unsynced on the calling thread, as the syncer would; nothing when
  // nothing is, or a sync runs.
  static void SyncNow(SqliteDatabase& db) {
    sqlite::GroupCommit& group = db.group_commit_;
    std::unique_lock lock(group.mutex_);
    if (!group.syncer_.unsynced_.empty() && !group.syncer_.syncing_) {
      group.syncer_.SyncCommitted(lock, nullptr, nullptr);
    }
  }

  // The writes, in this process, whose wake was posted more often than their thread waited: each
  // such post is a bug, for it could instead land on the thread's next write.
  static int UnconsumedWakes() {
    return sqlite::Wakeup::unconsumed_.load(std::memory_order_relaxed);
  }

  // For tests of SyncForReaders (nullptr: none): `arrived` runs on each caller's thread once it
  // noted the syncs started before it; `syncing` on the syncing thread, before its fdatasync. Set
  // them while no SyncForReaders runs.
  static void ReaderSyncHooks(SqliteDatabase& db, std::function<void()> arrived,
                              std::function<void()> syncing) {
    sqlite::ReaderSync& sync = db.reader_sync_;
    std::lock_guard lock(sync.mutex_);
    sync.arrived_hook_ = std::move(arrived);
    sync.syncing_hook_ = std::move(syncing);
  }
};

}  // namespace wow
