// MultiNodeLog: the algorithm that keeps a log exact when several nodes append to it without
// transactions (seed 002): sequences allocated from blocks reserved on each partition's counter,
// one insert per aggregate collection settled by its unique keys, a placeholder at every sequence
// allocated and not written, sealing of a stopped node's blocks, and a tail that never steps over
// a sequence that may still be written, resolving a stall after `stall_grace`.
//
// It runs on a LogLayer: MongoDB's collections in MongoEventLog, simulated collections with
// injected faults in tests/log_simulation. It holds no lock across a call of the layer.
//
// Why the tail is exact. A sequence is final when it holds an entry, an own placeholder (written
// by the sequence's allocator, which writes that sequence nowhere else), or a seal placeholder
// whose block has left the counter (the sealer removes it after a placeholder at each of its
// sequences in every registered collection). A sealer marks the block first and reads the
// registry after; an owner that registers a collection checks its blocks on the counter after,
// and drops those marked: so a collection the sealer missed gets no write of the sealed block.
// A tail reads the registry again before it steps over a seal placeholder and before it resolves
// a stall, so it also reads a collection registered since its last look.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "store/mongo/log/log_layer.h"
#include "wow/event_log.h"

namespace wow::mongo_log {

// Deliberate defects, for the simulation's tests to prove it catches each; all off otherwise.
struct Defects {
  bool tail_steps_over_missing = false;       // a missing sequence taken as final
  bool seal_skips_a_collection = false;       // sealing leaves out the last registered collection
  bool placeholder_overwrites_entry = false;  // a placeholder at an entry's sequence wins the merge
  bool stall_keeps_registry = false;          // no registry re-read when resolving or sealing
};

struct MultiNodeLogOptions {
  std::string node;         // this log's incarnation: unique per process and open
  Sequence block_size = 1;  // sequences reserved at least per block
  std::chrono::milliseconds stall_grace{2000};
  Defects defects;
};

class MultiNodeLog {
 public:
  // `layer` must outlive the log. REQUIRES: options.node not empty, block_size >= 1.
  MultiNodeLog(LogLayer& layer, std::shared_ptr<const Clock> clock, MultiNodeLogOptions options);

  // A stream with the place its aggregate has: its type's collection and its partition.
  struct Placed {
    const Stream* stream;
    std::string collection;
    int partition;
  };

  // Appends the streams as one group: result i is stream i's (EventLog::AppendAll's rules). A
  // stream's version must follow an entry of its aggregate (read through FindVersion unless
  // remembered). Throws Error only when a read it needs fails; nothing it allocated is left
  // without a placeholder or a retry of one.
  std::vector<AppendResult> Append(const std::vector<Placed>& streams);

  // Remembers that the entry of `ref` (in `collection`) at `version` is at `sequence`, so its next
  // stream takes a later one without a read.
  void Remember(const std::string& collection, const AggregateRef& ref, Version version,
                Sequence sequence);

  // Up to `limit` entries of `partition` after `after`, in sequence order, stopping before the
  // first sequence that is not final; resolves a stall older than stall_grace. Throws Error when
  // a read or a resolution fails (nothing is delivered twice on a retry).
  std::vector<Entry> ReadAfter(int partition, Sequence after, int limit);

  // Closes this node's open blocks: their unused sequences get own placeholders and the blocks
  // leave the counters. Throws Error when a write fails (a stall resolves what is left).
  void Close();

  // The collections this log reads (its last look at the registry and its own registrations).
  std::vector<std::string> KnownCollections() const;

 private:
  struct OwnBlock {
    Sequence first = 0;
    Sequence last = 0;
    Sequence next = 0;       // first sequence not allocated
    int outstanding = 0;     // allocated writes not settled yet
    std::string collection;  // where its given-up sequences are written
  };
  struct Stall {
    Sequence sequence = 0;
    EpochMillis since = 0;
  };
  struct PartitionState {
    std::vector<OwnBlock> blocks;  // by first
    std::set<Sequence> dropped;    // firsts of blocks another node sealed
    Stall stall;
  };
  struct Pending {  // an own placeholder not written yet
    std::string collection;
    LogDoc doc;
  };

  // Under mu_: a sequence after `floor` from this node's blocks of `partition`, or 0 when none is
  // left; the sequences given up to pass `floor` are added to `give_up`.
  Sequence AllocateLocked(int partition, Sequence floor, const std::string& collection,
                          std::vector<Pending>& give_up);
  // Under mu_: gives up `block`'s sequences from its next to `to`, an own placeholder each.
  void GiveUpLocked(int partition, OwnBlock& block, Sequence to, const std::string& collection,
                    std::vector<Pending>& give_up);
  void AddBlock(int partition, const Block& block, const std::string& collection);
  // Settles sequence `s` (its write or placeholder is in); queues the block's removal when done.
  void SettleLocked(int partition, Sequence s, std::vector<Sequence>& removable);
  void DropBlockOf(int partition, Sequence s);
  void RemoveBlocks(int partition, const std::vector<Sequence>& firsts);
  void EnsureRegistered(const std::string& collection);
  // The outcome for `stream`, whose version is taken or does not follow its aggregate's: a
  // duplicate when its request id is taken, else a conflict.
  AppendResult ConflictOrDuplicate(const std::string& collection, const Stream& stream);
  // The outcome for `stream`, whose request id is taken: where the original is.
  AppendResult DuplicateOf(const std::string& collection, const Stream& stream);
  void WritePlaceholders(std::vector<Pending> placeholders);
  void RetryPending();
  std::vector<std::string> RefreshRegistry();
  void ResolveOwn(int partition, const Block& block, Sequence missing);
  void Seal(int partition, const Block& block);

  LogLayer& layer_;
  const std::shared_ptr<const Clock> clock_;
  const MultiNodeLogOptions options_;

  mutable std::mutex mu_;
  std::map<int, PartitionState> partitions_;
  std::vector<Pending> pending_;
  std::set<std::string> registered_;  // by this log, its blocks checked after
  std::vector<std::string> known_;    // what the tail reads, sorted
  bool registry_read_ = false;
  // The last (version, sequence) seen per aggregate, keyed by collection, tenant and id.
  std::map<std::string, std::pair<Version, Sequence>> last_seen_;
};

}  // namespace wow::mongo_log
