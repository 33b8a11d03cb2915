// The SQLite backend, the embedded default: the event log, the reservations and the timers of a
// service in one database file, with nothing to install.
//
// OpenSqliteDatabase opens (or creates) the file; the factories below build stores on it. Every
// store of one SqliteDatabase shares its connections: one writer connection whose transactions
// batch the concurrent writes of all threads (group commit), and a pool of reader connections, so
// reads never wait behind the writer (WAL mode). Several processes may open one file; each is a
// node. Their writes take turns on SQLite's write lock, waiting at most SqliteOptions::busy_timeout
// for it, and every append takes its partition's next sequence in its own transaction, so the
// sequences of each partition stay gapless across processes.
//
// Layout (see docs/SQLITE.md): a table per aggregate type per store, named
// "wow_log__<context>__<aggregate>", "wow_reservation__<context>__<aggregate>" and
// "wow_timer__<context>__<aggregate>", created on first use and recorded in a registry; the
// partition counters of each context, with their lineage, leases and checkpoints; and a format
// record. SQL is never built from a user's string: table names come only from validated type
// names (ValidateTypeName), and values are always bound to prepared statements.
//
// Errors: failures of SQLite throw wow::Error, with the code of the failure and a message saying
// what failed, SQLite's own code and text, and what to do:
//   kUnavailable        another process held the write lock longer than busy_timeout; an I/O error;
//                       a failed sync of the write-ahead log, after which every write fails until
//                       the database is opened again (the failed writes' outcome is unknown)
//   kResourceExhausted  the disk (or the database's page limit) is full
//   kPermissionDenied   the file or its directory cannot be written, or the file cannot be opened
//   kDataLoss           the file is not a SQLite database, or it is corrupt
//   kFailedPrecondition the file is of another format, or of another application, or a context
//                       was created with another partition count
// A failed write changes nothing: its transaction is rolled back (except after a failed sync, whose
// writes committed but may not be on disk).
//
// Damage: every stream is stored with a checksum, checked on every read; a stream that fails it is
// Error(kDataLoss) naming the stream, reported through wow/incidents.h. CheckSqliteDatabase
// checks a whole file.
//
// Thread-safety: SqliteDatabase and every store built on it are safe for concurrent use. Do not
// carry an open SqliteDatabase across fork(): open it in the child.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "wow/event_log.h"
#include "wow/model.h"
#include "wow/read_model.h"
#include "wow/reservation_store.h"
#include "wow/sqlite_options.h"
#include "wow/timer_store.h"

namespace wow {

// One open database file: its connections, their prepared statements and the group-commit writer.
// Opaque; held by shared_ptr by every store built on it, so it is closed when the last goes.
class SqliteDatabase;

// Opens the database file at `path`, creating it (but not its directory) when missing; switches
// it to WAL mode, and checks its format record, or writes one in a new file; migrates a file of
// an earlier format (formats 3 and 4). Under options.read_only it writes nothing (see
// SqliteOptions::read_only).
// Throws wow::Error, leaving the file as it was, when:
//   kPermissionDenied    the path cannot be opened or created, or the file is read-only
//   kDataLoss            the file is not a SQLite database, or it is corrupt, or its header's
//                        application_id or its registry of tables is damaged
//   kFailedPrecondition  the path is not a regular file (a directory, a device such as /dev/null),
//                        the file is in another format of this backend, or another application's
//   kUnavailable         another process holds the file's lock longer than busy_timeout
//   kInvalidArgument     the options are out of range
//   kResourceExhausted   the disk is full; a file this call created is removed again, with its
//                        -wal, -shm and -journal files (a file that was there stays)
// A file in another format of this backend is refused with a message naming both formats.
std::shared_ptr<SqliteDatabase> OpenSqliteDatabase(const std::string& path,
                                                   const SqliteOptions& options = {});

// What a database's writer did in this process since it was opened: for monitoring (the group
// commit's batch size is works / transactions; transactions per sync is synced / syncs) and for
// benchmarks. Counters only grow.
struct SqliteWriteStats {
  std::uint64_t transactions = 0;  // write transactions committed
  std::uint64_t works = 0;   // the writes they held: appends, reservation and timer changes...
  std::uint64_t synced = 0;  // transactions acknowledged only once synced (synchronous=FULL)
  std::uint64_t syncs = 0;   // the syncs of the write-ahead log that did it
  // Time the writer connection spent in write transactions (from BEGIN through COMMIT, the
  // works included), and time spent in the syncs. Their growth over an interval, divided by the
  // interval, is how busy the single writer and the disk were: a writer near 100% is the
  // database's limit.
  std::uint64_t writing_micros = 0;
  std::uint64_t syncing_micros = 0;
  // Syncs a tail ran before delivering entries another process may not have synced yet.
  std::uint64_t reader_syncs = 0;
  // Passes of the checkpointer thread that copied the write-ahead log's frames into the file
  // (every 256 frames committed), off the writer's path.
  std::uint64_t checkpoints = 0;
};

// The write statistics of `db`. REQUIRES: db is not null.
SqliteWriteStats SqliteStats(const std::shared_ptr<SqliteDatabase>& db);

// The event log of `context` in `db`; call Create(partitions) before anything else. Create
// refuses (kFailedPrecondition, naming both counts, changing nothing) a partition count other than
// the one the context was created with, by any process or store. `clock` judges leases.
// Appends of concurrent threads are committed together (group commit); Tail finds this process's
// commits at once and other processes' by polling (50 ms, doubling to 1 s while idle).
// Throws Error(kInvalidArgument) for a malformed context or a null db or clock.
std::unique_ptr<EventLog> NewSqliteEventLog(std::shared_ptr<SqliteDatabase> db,
                                            std::string_view context,
                                            std::shared_ptr<const Clock> clock);

// The reservations of every context in `db`. Each operation is one read-modify-write transaction
// holding the write lock, so of concurrent reserves of a free key exactly one wins, across threads
// and processes. `clock` judges expiry. Throws Error(kInvalidArgument) for a null db or clock.
std::unique_ptr<ReservationStore> NewSqliteReservationStore(std::shared_ptr<SqliteDatabase> db,
                                                            std::shared_ptr<const Clock> clock);

// The timers of `context` in `db`, whose log has `partitions` partitions. Records the context's
// partition count when the file has none yet; throws Error(kFailedPrecondition), naming both
// counts and changing nothing, when the context was created with another. Unless `db` is
// read-only, drops the context's timer tables of an earlier format with its wow.timers
// checkpoints (kTimerSubscriptionName), in one transaction: the timer subscription, started
// after, puts their timers again from the log.
// Throws Error(kInvalidArgument) for a malformed context, partitions outside 1..kMaxPartitions or a
// null db.
std::unique_ptr<TimerStore> NewSqliteTimerStore(std::shared_ptr<SqliteDatabase> db,
                                                std::string_view context, int partitions);

// The read models of `context`'s projections in `db` (table wow_read_models): transactional, each
// Apply one write transaction with the projection's checkpoint in the context's log.
// Throws Error(kInvalidArgument) for a malformed context or a null db.
std::unique_ptr<ReadModelStore> NewSqliteReadModelStore(std::shared_ptr<SqliteDatabase> db,
                                                        std::string_view context);

// The contexts whose logs or timers `db` holds, with their partition counts, by name; for tools.
// Throws wow::Error as a read of the file fails, or Error(kInvalidArgument) for a null db.
std::map<std::string, int> SqliteContexts(const std::shared_ptr<SqliteDatabase>& db);

// What CheckSqliteDatabase found: nothing wrong when `problems` is empty.
struct SqliteCheckReport {
  // One sentence per problem, naming the table, the stream or the key; at most the
  // max_problems asked for (problem_count says how many were found).
  std::vector<std::string> problems;
  std::uint64_t problem_count = 0;
  std::uint64_t streams = 0;  // log rows read, each one's checksum checked and decoded
  std::uint64_t keys = 0;     // keys confirmed at a stream's version, each looked up in its stream

  bool ok() const { return problem_count == 0; }
};

// Checks the whole file `db` is open on, in one read transaction on a reader connection (so the
// processes writing to the file go on; the write-ahead log grows meanwhile, as a checkpoint cannot
// copy past a running read): SQLite's integrity check, then, for every context, each stream's
// checksum and decoding, each partition's sequences gapless from 1 to its last, each aggregate's
// versions gapless from 1 and in log order in the partition its id maps to, and each key
// confirmed at a stream's version held by that stream's reserved keys. Returns what it found;
// damage is a value, never thrown. Throws wow::Error when the file cannot be read at all (as any
// read). Holds every stream's position in memory (8 bytes each) while it runs.
// REQUIRES: db is not null; max_problems >= 1.
SqliteCheckReport CheckSqliteDatabase(const std::shared_ptr<SqliteDatabase>& db,
                                      std::size_t max_problems = 100);

}  // namespace wow
