// Schema (private): the file's layout as this build knows it. The format constants and position
// keys the stores use; the check of a file's format when it is opened (and the initialization of a
// new file); the registry of the aggregate tables (wow_tables) and the contexts' partition counts
// (wow_contexts).
//
// The file's tables: wow_format (the format record), wow_tables (the registry of the aggregate
// tables), wow_contexts (each context's partition count), wow_partitions (per partition: the last
// sequence, lineage and lease) and wow_checkpoints.
//
// Thread-safety: a Schema is safe for concurrent use; the connection each call is given needs the
// usual external synchronisation (connection.h), which is its caller's.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/sqlite/connection.h"
#include "wow/stream.h"

namespace wow::sqlite {

// The format this build reads and writes. Raise it with every change of the layout a reader of
// the previous format would misread, and teach OpenSqliteDatabase to refuse or migrate the old.
// 2: events kept as length-prefixed bytes.
// 3: the log tables keyed by position (PositionKey), so a partition's entries are one range of
//    rowids, without partition and sequence columns; facts kept as binary, not JSON (codec.h).
// 4: each log row keeps its stream's checksum (stream_checksum.h).
// 5: each timer row keeps its parked_version (the target's version that refused it).
// A file of format 3 or 4 is migrated when a writer opens it (Schema); every earlier format is
// refused.
inline constexpr int kFormatVersion = 5;
// The oldest format OpenSqliteDatabase migrates to kFormatVersion.
inline constexpr int kOldestMigratedFormatVersion = 3;
// Written in the file's header (PRAGMA application_id): "Wow1".
inline constexpr std::int32_t kApplicationId = 0x576f7731;

// The log tables' INTEGER PRIMARY KEY (rowid), `position`: partition << 40 | sequence, so that a
// partition's entries lie in one range of rowids, in sequence order, and ReadAfter reads them as
// one range scan. Sequences are 1 to kMaxSequence (2^40 - 1: an append past it is refused) and
// partitions below kMaxPartitions (2^12), so a key is below 2^52, never negative.
inline constexpr int kSequenceBits = 40;
inline constexpr Sequence kMaxSequence = (Sequence{1} << kSequenceBits) - 1;
static_assert(wow::kMaxPartitions <= (std::int64_t{1} << (63 - kSequenceBits)),
              "the partitions a log may have do not fit the log tables' keys");

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

// "log", "reservation", "timer".
std::string_view KindName(TableKind kind);

// "wow_<kind>__<context>__<aggregate>". REQUIRES: context and aggregate are valid type names.
std::string TableName(TableKind kind, const std::string& context, const std::string& aggregate);

// An aggregate table of the registry.
struct RegisteredTable {
  std::string aggregate;
  std::string name;
};

class Schema {
 public:
  // Checks the file `writer` is open on, before changing anything, and refuses a file of another
  // format or application as it is (Error(kFailedPrecondition), naming what it found), and a
  // file whose header or registry is damaged (Error(kDataLoss): a Wow file whose application_id
  // is not Wow's, a registered table missing); then switches it to WAL mode, migrates a file of
  // format kOldestMigratedFormatVersion or later (in one write transaction, see Migrate), and
  // writes the core tables and the format record when the file has none. When `read_only`, it
  // writes nothing: a file without a format record, or one to migrate, is refused
  // (Error(kFailedPrecondition)). Retries for up to `busy_timeout` while another process initializes the same new file
  // (SQLite reports some of those moments as SQLITE_BUSY without calling the busy handler); throws
  // the SQLite failure after that, as for any other. `path` names the file in messages. `writer`
  // outlives the Schema: TableExists tells it from the readers.
  Schema(std::string path, Connection& writer, std::chrono::milliseconds busy_timeout,
         bool read_only);
  Schema(const Schema&) = delete;
  Schema& operator=(const Schema&) = delete;

  // In a write transaction on the writer: creates the aggregate table `kind`/`context`/`aggregate`
  // with its indexes and records it in the registry, unless it exists. Throws
  // Error(kFailedPrecondition) when the registry records it in another format.
  void EnsureTable(Connection& writer, TableKind kind, const std::string& context,
                   const std::string& aggregate);
  // Whether `context` has a timer table recorded in a format before this build's (read with
  // `connection`).
  bool HasEarlierTimerTables(Connection& connection, const std::string& context);
  // In a write transaction on the writer: deletes the timer checkpoints of `context`, then drops
  // its timer tables of an earlier format with their records, so that the timer subscription
  // (which reads its checkpoints after the timer store is open) puts their timers again from the
  // log's start: the timers are a view of the log.
  void DropEarlierTimerTables(Connection& writer, const std::string& context);
  // Whether the table exists, looked up in the registry with `connection`: committed, or, on the
  // writer, written by its open transaction (forgotten again if that rolls back).
  bool TableExists(Connection& connection, const std::string& name);
  // The registered tables of `kind` and `context`, sorted by aggregate.
  std::vector<RegisteredTable> Tables(Connection& connection, TableKind kind,
                                      const std::string& context);

  // In a write transaction on the writer: records that `context` has `partitions` partitions, or
  // checks the count recorded; throws Error(kFailedPrecondition) naming both counts when they
  // differ.
  void ClaimPartitionCount(Connection& writer, const std::string& context, int partitions);

 private:
  // One attempt of the constructor's check and initialization.
  void CheckAndInitialize();
  // In one write transaction, each step from the file's format up: (3 to 4) the log tables get
  // their checksum column, filled from the rows as they are; (4 to 5) the timer tables get their
  // parked_version column, 0 (not known) in every row. Then the file and its tables are recorded
  // in kFormatVersion. Nothing when another process migrated the file first.
  void Migrate();

  const std::string path_;
  Connection& writer_;
  const bool read_only_;

  std::mutex tables_mutex_;
  std::set<std::string> existing_tables_;  // committed (tables are never dropped); by readers
};

}  // namespace wow::sqlite
