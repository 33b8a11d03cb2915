// ReadModelStore: the rows projections keep (read models), beside a context's log, and the
// transactions in which a projection applies one entry of the log.
//
// A row lives in a table of one tenant under an id, and holds a version (the version of the
// aggregate stream it reflects, so a handler that puts rows only when its version is newer is
// idempotent), an index key (what List's prefix matches: a name key, say) and a body (JSON text).
// A projection's writes for one entry go through a ReadModelWriter inside Apply:
//   - transactional() stores (SQLite) commit the writes and the projection's checkpoint (the
//     log's, under the projection's subscription name) in one transaction, and skip an entry at
//     or below the checkpoint: each entry is applied exactly once, whatever crashes.
//   - other stores (memory, MongoDB) apply the writes of an entry together (MongoDB: in one
//     bulk write, which a failure may cut short: the entry is then applied again), and the
//     subscription runner commits the checkpoint later: after a crash or a lost lease an entry
//     may be applied again (at least once), so handlers must be idempotent: compare the row's
//     version with the stream's, as ReadModelWriter::Put does.
//
// Bad arguments (a table name failing ValidateTypeName, an empty id, a limit outside
// 1..kMaxReadModelPage, a body that is not JSON) throw Error(kInvalidArgument) and change
// nothing; failures of the backend throw Error.
//
// Thread-safety: implementations are safe for concurrent use; a ReadModelWriter belongs to the
// Apply call that made it and is used on that call's thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wow/model.h"
#include "wow/stream.h"

namespace wow {

// The most rows one List returns.
inline constexpr int kMaxReadModelPage = 1000;

struct ReadModelRow {
  std::string table;      // ValidateTypeName's rule
  std::string tenant_id;  // "" for the system tenant
  std::string id;         // not empty
  Version version = 0;
  std::string index_key;  // what List's prefix matches
  std::string body;       // JSON text
  friend bool operator==(const ReadModelRow&, const ReadModelRow&) = default;
};

// Which rows List returns: those of `table` and `tenant_id` whose id is after `after` (all when
// empty) and whose index key starts with `prefix`, by id in byte order, at most `limit`.
struct ReadModelQuery {
  std::string table;
  std::string tenant_id;
  std::string after;
  std::string prefix;
  int limit = 100;
};

// One projection's writes for one entry.
class ReadModelWriter {
 public:
  virtual ~ReadModelWriter() = default;
  // The row as this entry's writes so far left it; nullopt when there is none.
  virtual std::optional<ReadModelRow> Find(const std::string& table, const std::string& tenant_id,
                                           const std::string& id) = 0;
  // Stores `row` unless the stored row of its table, tenant and id has a version >= row.version
  // (an entry applied again); returns whether it stored it.
  virtual bool Put(const ReadModelRow& row) = 0;
};

class ReadModelStore {
 public:
  virtual ~ReadModelStore() = default;

  // Whether Apply commits the checkpoint with the writes (exactly once; see the file comment).
  virtual bool transactional() const = 0;

  // Runs `work` with a writer for the entry at `position`, for the projection whose subscription
  // is named `subscription`, and keeps its writes only when `work` returns: when it throws,
  // nothing it wrote is kept and the exception passes through. A transactional store also
  // commits the checkpoint of `subscription` in `position.partition` at `position.sequence` with
  // the writes, and returns false without calling `work` when the checkpoint is there already.
  // Returns true otherwise.
  virtual bool Apply(const std::string& subscription, Position position,
                     const std::function<void(ReadModelWriter&)>& work) = 0;

  // The row of `table`, `tenant_id` and `id` as committed; nullopt when there is none.
  virtual std::optional<ReadModelRow> Find(const std::string& table, const std::string& tenant_id,
                                           const std::string& id) = 0;

  // The rows `query` selects (see ReadModelQuery).
  virtual std::vector<ReadModelRow> List(const ReadModelQuery& query) = 0;

  // For a rebuild: deletes every row of `tables` and the checkpoints of `subscription` in every
  // partition; returns the rows deleted. A transactional store does it in one transaction. MongoDB
  // deletes the checkpoints first, then the rows, so a drop cut short leaves a projection that
  // replays the whole log over the rows left (right again with versioned puts); a rebuild run
  // again finishes it. Memory's cannot take a checkpoint back (the memory log keeps it): it throws
  // Error(kFailedPrecondition) and deletes nothing; it starts empty with its process.
  virtual std::int64_t Drop(const std::string& subscription,
                            const std::vector<std::string>& tables) = 0;
};

// Read models in memory, gone with the process; not transactional. Thread-safe.
std::unique_ptr<ReadModelStore> NewMemoryReadModelStore();

// Throws Error(kInvalidArgument) unless `row` may be stored (see the file comment).
void ValidateReadModelRow(const ReadModelRow& row);
// Throws Error(kInvalidArgument) unless `query` may be run (see the file comment).
void ValidateReadModelQuery(const ReadModelQuery& query);

}  // namespace wow
