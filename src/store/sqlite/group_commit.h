// GroupCommit (private): the database's writes, on its single writer connection.
//
// A Write call queues its work; the first queued thread becomes the leader, opens one BEGIN
// IMMEDIATE transaction on the writer, runs the queued works of every waiting thread (up to
// max_group_commit appends), each inside its own savepoint when there are several, commits once,
// and wakes the others with their own outcomes (after LevelDB's write queue). A leader whose queue
// filled meanwhile commits the next batch too, up to a few batches, before it hands the writer to
// the thread at the front: a hand-off costs a wake-up on the writer's critical path. A work that
// throws alone fails alone: its savepoint is undone and its thread gets its exception; a failure
// that ends the transaction (busy, full, I/O, corrupt) fails every work of the batch, none of
// which then wrote anything.
//
// Under synchronous=FULL the writer commits without waiting for the disk, and the leader hands
// each batch's durable works to the syncer (wal_syncer.h), which wakes their threads once the
// write-ahead log is synced; lazy works are acknowledged at their commit. Once a sync failed,
// every later write is refused.
//
// Thread-safety: safe for concurrent use. One mutex guards the queue, the statistics and the
// syncer's state (the syncer is given it); no one holds it while running a work, SQLite or a sync,
// nor takes another lock under it. Only the leader touches the writer connection, outside the
// mutex: leading_ lets one thread lead at a time.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "store/sqlite/connection.h"
#include "store/sqlite/wal_syncer.h"
#include "store/sqlite/write_request.h"
#include "wow/sqlite.h"

namespace wow {

class SqliteDatabaseTestPeer;

namespace sqlite {

class GroupCommit {
 public:
  // Commits on `writer`, which outlives the group commit, and which no one else uses while a Write
  // runs. `max_group_commit` bounds a batch's weight (REQUIRES: >= 1). `syncer_syncs`: the
  // database's synchronous is FULL; the group commit then switches the writer to NORMAL and starts
  // the syncer, which syncs `wal_path`. `path` names the database in messages.
  GroupCommit(Connection& writer, int max_group_commit, bool syncer_syncs, std::string path,
              std::string wal_path);
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Runs `work` on the writer inside a write transaction, batched with the works of other threads,
  // and returns once the transaction committed (and, when `sync` is kDurable under FULL, once the
  // write-ahead log was synced after it). `weight` counts toward max_group_commit (values below 1
  // count as 1). Rethrows what `work` threw, or the failure of the transaction; then nothing `work`
  // wrote is kept. Throws Error(kUnavailable) when the sync after the commit failed (then the
  // outcome is unknown), and for every Write after that.
  void Write(const std::function<void(Connection&)>& work, int weight, WriteSync sync);

  // The writer's counters: transactions, works, writing_micros, and the syncer's (synced, syncs,
  // syncing_micros); the others zero.
  SqliteWriteStats stats() const;

 private:
  friend class ::wow::SqliteDatabaseTestPeer;

  // Leads the group commit as `own`'s thread: commits the queue's batches (`own` in the first),
  // then hands the writer to the queue's front. True when `own` is done; false when it waits for
  // the syncer, which posts its wake.
  bool Lead(WriteRequest& own);
  // Runs the batch in one transaction on the writer, without the mutex; true when it committed.
  // Sets each request's error.
  bool RunBatch(const std::vector<WriteRequest*>& batch);

  Connection& writer_;
  const int max_group_commit_;
  const bool syncer_syncs_;  // synchronous=FULL: the writer commits NORMAL, the syncer syncs

  mutable std::mutex mutex_;
  // Guarded by mutex_. The queue's front runs the batch on writer_.
  std::deque<WriteRequest*> queue_;
  bool leading_ = false;  // a leader is running batches
  std::uint64_t transactions_ = 0;
  std::uint64_t works_ = 0;
  std::uint64_t writing_micros_ = 0;
  std::function<void()> after_each_batch_;  // a test seam; set while no write runs

  WalSyncer syncer_;  // guarded by mutex_ too (see wal_syncer.h)
};

}  // namespace sqlite
}  // namespace wow
