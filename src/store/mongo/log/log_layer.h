// LogLayer: the collections of one context's log, as the multi-node algorithm (multi_node_log.h)
// sees them. MongoDB implements it on libmongoc; the simulation (tests/log_simulation) implements
// it in memory with injected faults, so the algorithm runs unchanged on both.
//
// The layer is a set of aggregate collections, each with unique keys on a document's position
// (partition, sequence), on an entry's version (tenant, id, version) and on its request
// (tenant, request id); one counter per partition, holding the next sequence no block has taken
// and the open blocks; and a registry of the aggregate collections. Every read sees what every
// acknowledged write wrote (MongoDB: readConcern majority, w: majority).
//
// Failures: a write whose outcome is not known (a lost acknowledgement, a timeout, a closed
// connection) throws Error(kUnavailable); it may have been applied, now or later. A read that
// fails throws Error. Expected outcomes (a taken key) are values.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wow/model.h"
#include "wow/stream.h"

namespace wow::mongo_log {

// One document of an aggregate collection.
//   kEntry:            a stream, at `sequence`.
//   kOwnPlaceholder:   written by the node that allocated `sequence` and will not write a stream
//                      there (its write failed, or it gave the sequence up).
//   kSealPlaceholder:  written by a node sealing another node's block, at one sequence, in every
//                      registered collection; final once the block has left the counter.
// Each document holds one sequence, so a tail reads by position alone. Placeholders have no
// aggregate, version or request: the version and request keys skip them.
struct LogDoc {
  enum class Kind { kEntry, kOwnPlaceholder, kSealPlaceholder };
  Kind kind = Kind::kEntry;
  int partition = 0;
  Sequence sequence = 0;
  Stream stream;  // kEntry only

  bool entry() const { return kind == Kind::kEntry; }
  static LogDoc Entry(int partition, Sequence sequence, Stream stream);
  static LogDoc Own(int partition, Sequence sequence);
  static LogDoc Seal(int partition, Sequence sequence);
};

// A run of sequences a node reserved on a partition's counter. `node` is the log instance's
// incarnation (unique per process and open), so a restarted process never takes a block of its
// previous life for its own.
struct Block {
  std::string node;
  Sequence first = 0;
  Sequence last = 0;
  bool sealing = false;  // another node is sealing it

  bool Holds(Sequence s) const { return first <= s && s <= last; }
  friend bool operator==(const Block&, const Block&) = default;
};

struct Counter {
  Sequence next = 1;  // the first sequence no block has taken
  std::vector<Block> blocks;

  // The open block holding `s`, or nullptr.
  const Block* BlockOf(Sequence s) const;
};

// The outcome of one document of an insert.
enum class WriteStatus {
  kWritten,
  kPositionTaken,  // a document is at (partition, sequence) in this collection
  kVersionTaken,
  kRequestTaken,
  kRefused,      // the store refuses the document itself (too large, not storable)
  kNotAttempted  // an ordered insert stopped before it
};

class LogLayer {
 public:
  virtual ~LogLayer() = default;

  // Reserves `size` sequences for `node` on `partition`'s counter, atomically: returns the block,
  // now open on the counter. Throws Error(kUnavailable) when the outcome is unknown (a block may
  // have been reserved that the caller never learns of; a stall resolves it).
  virtual Block ReserveBlock(int partition, const std::string& node, Sequence size) = 0;

  // Marks the open block starting at `first` as being sealed; no-op when it is not open.
  virtual void MarkSealing(int partition, Sequence first) = 0;

  // Removes the block starting at `first` from the open blocks; no-op when it is not open.
  virtual void RemoveBlock(int partition, Sequence first) = 0;

  virtual Counter ReadCounter(int partition) = 0;

  // The registered aggregate collections, sorted.
  virtual std::vector<std::string> ReadRegistry() = 0;

  // Registers `collection` (idempotent). The collection exists, with its keys, on return.
  virtual void Register(const std::string& collection) = 0;

  // Inserts `docs` into `collection`. Ordered: stops at the first document that is not written
  // (the rest kNotAttempted). Unordered: tries each. Returns one status per document. Throws
  // Error(kUnavailable) when the outcome is unknown: any document may be in, now or later.
  virtual std::vector<WriteStatus> Insert(const std::string& collection,
                                          const std::vector<LogDoc>& docs, bool ordered) = 0;

  // One read of the tail: the counter of `partition` first, then from each of `collections` its
  // first `limit` documents (entries and placeholders) after sequence `after`, in sequence order.
  // `docs[i]` are the documents of `collections[i]`.
  struct TailRead {
    Counter counter;
    std::vector<std::vector<LogDoc>> docs;
  };
  virtual TailRead ReadTail(int partition, Sequence after,
                            const std::vector<std::string>& collections, int limit) = 0;

  // The sequence of the entry of (tenant, id) at `version` in `collection`; nullopt when none.
  virtual std::optional<Sequence> FindVersion(const std::string& collection,
                                              const std::string& tenant_id, const std::string& id,
                                              Version version) = 0;

  // The entry that `request_id` wrote for `tenant_id` in `collection`; nullopt when none.
  virtual std::optional<Entry> FindRequest(const std::string& collection,
                                           const std::string& tenant_id,
                                           const std::string& request_id) = 0;
};

}  // namespace wow::mongo_log
