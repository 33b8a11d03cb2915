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
// Reads go through Read, on a pool of reader connections (WAL: readers never wait for the writer).
//
// The file's tables: wow_format (the format record), wow_tables (the registry of the aggregate
// tables), wow_contexts (each context's partition count), wow_partitions (per partition: the last
// sequence, lineage and lease) and wow_checkpoints.
//
// Thread-safety: safe for concurrent use.
#pragma once

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
//   kDurable  on disk (synchronous=FULL): the appends, and what nothing else could rebuild.
//   kLazy     in the WAL file, synced by the next durable commit or checkpoint (synchronous=
//             NORMAL): survives a crash of the process, and a power loss may lose it only with
//             every later commit. For what the log rebuilds (confirmed keys, timers, checkpoints)
//             and what expires anyway (pending keys, leases).
// A batch of the group commit is durable when one of its works is.
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
  // the transaction; then nothing `work` wrote is kept.
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

  // How many write transactions this database committed, the works (Write calls) they held
  // (works / transactions is the group commit's batch size), and how many of the transactions
  // were synced to disk before Write returned (synchronous=FULL). For tests and benchmarks.
  struct WriteStats {
    std::uint64_t transactions = 0;
    std::uint64_t works = 0;
    std::uint64_t synced = 0;
  };
  WriteStats write_stats() const;
  // How many Write calls are queued or running now. For tests.
  size_t queued_writes() const;

 private:
  struct WriteRequest {
    const std::function<void(sqlite::Connection&)>* work = nullptr;
    int weight = 1;
    sqlite::WriteSync sync = sqlite::WriteSync::kDurable;
    bool done = false;
    std::exception_ptr error;
    std::condition_variable ready;
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
  // Runs the batch in one transaction, synced to disk unless `lazy`; true when it committed.
  // Sets each request's error.
  bool RunBatch(const std::vector<WriteRequest*>& batch, bool lazy);

  const std::string path_;
  const SqliteOptions options_;

  // The write queue; its front runs the batch on writer_, which only the leader touches.
  mutable std::mutex write_mutex_;
  std::deque<WriteRequest*> write_queue_;
  bool leading_ = false;  // a leader is running batches; guarded by write_mutex_
  std::unique_ptr<sqlite::Connection> writer_;
  bool writer_lazy_ = false;  // writer_ commits with synchronous=NORMAL now; only the leader
  WriteStats write_stats_;    // guarded by write_mutex_

  std::mutex readers_mutex_;
  std::vector<std::unique_ptr<sqlite::Connection>> idle_readers_;

  std::mutex tables_mutex_;
  std::set<std::string> existing_tables_;  // committed: tables are never dropped

  std::mutex signals_mutex_;
  std::map<std::string, std::shared_ptr<store::CommitSignal>> signals_;
};

}  // namespace wow
