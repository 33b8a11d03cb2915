// SqliteDatabase (private definition): one open database file, shared by the stores built on it.
// A facade over the parts that do its jobs, each in its own header:
//
//   Schema       (schema.h)        the format check on open, the registry of the aggregate tables
//                                  and the contexts' partition counts; the format constants.
//   GroupCommit  (group_commit.h)  Write: the write queue, its leaders and batches on the single
//                                  writer connection, the writer's statistics.
//   WalSyncer    (wal_syncer.h)    under synchronous=FULL, the syncer thread that syncs the
//                                  write-ahead log for the committed durable writes; owned by
//                                  the group commit, whose mutex guards it.
//   Checkpointer (checkpointer.h)  the writer's WAL hook and the checkpointer thread.
//   ReaderPool   (reader_pool.h)   Read: the idle reader connections.
//   ReaderSync   (reader_sync.h)   SyncForReaders, on its own descriptor of the write-ahead log.
//
// Writes are batched (group commit) and, under synchronous=FULL, acknowledged only once the
// write-ahead log is synced, by a syncer thread off the writer's path. Reads run on a pool of
// reader connections (WAL: readers never wait for the writer). A reader may see a commit shortly
// before it is synced: a power loss in that window loses it with every later commit (the log
// hides its unsynced entries from tails: see SqliteEventLog).
//
// Thread-safety: safe for concurrent use. Locks: the group commit's mutex (its queue and
// statistics, and the syncer's state), the checkpointer's, the reader pool's, the reader sync's,
// the schema's and the commit signals' each guard their own part's state only, and none is held
// while another is taken: there is no lock order to keep. The writer connection is used by one
// thread at a time: the group commit's leader, inside whose commit the checkpointer's WAL hook
// runs (taking the checkpointer's mutex, with none of the others held).
//
// Tests reach the parts' seams (holding the syncer, failing a sync, hooks) through
// SqliteDatabaseTestPeer (tests/sqlite/sqlite_database_test_peer.h), a friend of the parts.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/common/commit_signal.h"
#include "store/sqlite/checkpointer.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/group_commit.h"
#include "store/sqlite/reader_pool.h"
#include "store/sqlite/reader_sync.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/write_request.h"
#include "wow/sqlite.h"
#include "wow/stream.h"

namespace wow {

class SqliteDatabaseTestPeer;

class SqliteDatabase {
 public:
  // Use OpenSqliteDatabase: opens the file, checks and initializes it (Schema), then starts the
  // syncer (under synchronous=FULL) and the checkpointer.
  SqliteDatabase(const std::string& path, const SqliteOptions& options);
  // Acknowledges every write the syncer still holds, stops the threads, and closes the writer
  // last. REQUIRES: no call runs.
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  const std::string& path() const { return path_; }
  const SqliteOptions& options() const { return options_; }

  // Runs `work` on the writer connection inside a write transaction, batched with the works of
  // other threads (group_commit.h), and returns once the transaction committed. `weight` counts
  // toward max_group_commit (the streams of an append). `sync` says whether the commit must be on
  // disk when Write returns (see WriteSync). Rethrows what `work` threw, or the failure of the
  // transaction; then nothing `work` wrote is kept. Throws Error(kUnavailable) when the sync
  // after the commit failed (then the outcome is unknown), and for every Write after that;
  // Error(kFailedPrecondition), running nothing, when the database is open read-only.
  void Write(const std::function<void(sqlite::Connection&)>& work, int weight = 1,
             sqlite::WriteSync sync = sqlite::WriteSync::kDurable);

  // Runs `read` on a reader connection of the pool (outside any transaction; open one for a
  // consistent snapshot of several statements) and returns what it returns.
  template <typename F>
  auto Read(F&& read) {
    sqlite::ReaderPool::Lease lease(readers_);
    return read(lease.connection());
  }

  // In a write transaction: creates the aggregate table `kind`/`context`/`aggregate` with its
  // indexes and records it in the registry, unless it exists. Throws Error(kFailedPrecondition)
  // when the registry records it in another format.
  void EnsureTable(sqlite::Connection& writer, sqlite::TableKind kind, const std::string& context,
                   const std::string& aggregate) {
    schema_.EnsureTable(writer, kind, context, aggregate);
  }
  // Whether `context` has a timer table of an earlier format; in a write transaction, drops them
  // with the context's timer checkpoints (Schema::DropEarlierTimerTables).
  bool HasEarlierTimerTables(sqlite::Connection& connection, const std::string& context) {
    return schema_.HasEarlierTimerTables(connection, context);
  }
  void DropEarlierTimerTables(sqlite::Connection& writer, const std::string& context) {
    schema_.DropEarlierTimerTables(writer, context);
  }
  // Whether the table exists (committed), looked up in the registry with `connection`.
  bool TableExists(sqlite::Connection& connection, const std::string& name) {
    return schema_.TableExists(connection, name);
  }
  // The registered tables of `kind` and `context`, sorted by aggregate.
  std::vector<sqlite::RegisteredTable> Tables(sqlite::Connection& connection,
                                              sqlite::TableKind kind, const std::string& context) {
    return schema_.Tables(connection, kind, context);
  }

  // In a write transaction: records that `context` has `partitions` partitions, or checks the
  // count recorded; throws Error(kFailedPrecondition) naming both counts when they differ.
  void ClaimPartitionCount(sqlite::Connection& writer, const std::string& context, int partitions) {
    schema_.ClaimPartitionCount(writer, context, partitions);
  }

  // The commit signal of `context`'s log in this process, shared by its logs on this database.
  std::shared_ptr<store::CommitSignal> Signal(const std::string& context, int partitions);

  // Makes every transaction committed to the file so far, by this process or another, durable:
  // syncs the write-ahead log on the calling thread (nothing when the file has none: its commits
  // were checkpointed into the file, synced). For readers that must not act on another process's
  // commit before it is on disk. Throws Error(kUnavailable) when the sync fails; this database's
  // writes go on (its syncer's next sync meets the same failure, if it covers them).
  void SyncForReaders() { reader_sync_.Sync(); }

  // See SqliteStats (wow/sqlite.h).
  using WriteStats = SqliteWriteStats;
  WriteStats write_stats() const;

 private:
  friend class SqliteDatabaseTestPeer;

  // Declared in the order they are built: the writer is opened and the file checked (Schema)
  // before anything else starts, and the writer is closed last, once every thread stopped.
  const std::string path_;
  const SqliteOptions options_;
  const std::unique_ptr<sqlite::Connection> writer_;
  const std::string wal_path_;
  sqlite::Schema schema_;
  sqlite::GroupCommit group_commit_;
  sqlite::Checkpointer checkpointer_;
  sqlite::ReaderSync reader_sync_;
  sqlite::ReaderPool readers_;

  std::mutex signals_mutex_;
  std::map<std::string, std::shared_ptr<store::CommitSignal>> signals_;  // guarded by it
};

}  // namespace wow
