// EventLog: the ordered log of one bounded context, split into a fixed number of partitions.
//
// An aggregate's streams live in partition PartitionOf(tenant_id, id, P), each at a sequence of
// that partition; sequences are per partition, total, and start at 1. Each aggregate's streams
// sit in its partition in version order. A tail never steps over a sequence that may still be
// written. Beside the partitions the log keeps, per partition, a lease (which node runs the
// partition's subscriptions and timers) and checkpoints (per subscription).
//
// Expected outcomes are values: AppendResult says appended, conflict (version taken), duplicate
// (request id taken; where the original is), refused (the stream is invalid, with the reason) or
// unknown (the outcome is not known; the stream may or may not be in the log). Bad arguments (a
// partition out of range, a ref of another context, a malformed aggregate type, a limit <= 0, a
// sequence below 0, an empty node or subscription name, a lease ttl <= 0) throw
// Error(kInvalidArgument) and change nothing; failures of the backend throw Error; calls before
// Create or Open (partitions() too) throw Error(kFailedPrecondition).
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "wow/model.h"
#include "wow/stream.h"

namespace wow {

class AppendResult {
 public:
  enum class Kind { kAppended, kConflict, kDuplicate, kRefused, kUnknown };

  static AppendResult Appended(Position at) { return {Kind::kAppended, at, 0, {}}; }
  static AppendResult Conflict() { return {Kind::kConflict, {}, 0, {}}; }
  static AppendResult Duplicate(Position original, Version original_version) {
    return {Kind::kDuplicate, original, original_version, {}};
  }
  static AppendResult Refused(std::string reason) {
    return {Kind::kRefused, {}, 0, std::move(reason)};
  }
  static AppendResult Unknown(std::string reason) {
    return {Kind::kUnknown, {}, 0, std::move(reason)};
  }

  Kind kind() const { return kind_; }
  bool appended() const { return kind_ == Kind::kAppended; }
  // kAppended: where the stream is. kDuplicate: where the original stream of the request is.
  Position position() const { return position_; }
  // kDuplicate: the version of the original stream.
  Version original_version() const { return original_version_; }
  // kRefused, kUnknown: why.
  const std::string& reason() const { return reason_; }

  friend bool operator==(const AppendResult&, const AppendResult&) = default;

 private:
  AppendResult(Kind kind, Position position, Version original_version, std::string reason)
      : kind_(kind),
        position_(position),
        original_version_(original_version),
        reason_(std::move(reason)) {}

  Kind kind_;
  Position position_;
  Version original_version_;
  std::string reason_;
};

// "appended", "conflict", "duplicate", "refused", "unknown".
std::string_view KindName(AppendResult::Kind kind);
// Writes KindName(kind), so that GoogleTest's failure messages and logs show the name.
std::ostream& operator<<(std::ostream& out, AppendResult::Kind kind);

// A partition's place in the history of partitions: the root's parent is none and its epoch 0.
struct PartitionLineage {
  std::optional<int> parent;
  int epoch = 0;
  friend bool operator==(const PartitionLineage&, const PartitionLineage&) = default;
};

struct Lease {
  std::string node;
  EpochMillis expires_at = 0;
  friend bool operator==(const Lease&, const Lease&) = default;
};

// Throws Error(kInvalidArgument) unless `node` is not empty and `ttl` is positive: the arguments
// every AcquireLease checks.
void ValidateLeaseRequest(const std::string& node, std::chrono::milliseconds ttl);

class EventLog {
 public:
  virtual ~EventLog() = default;

  // The context this log belongs to.
  virtual const std::string& context() const = 0;

  // Creates the log with `partitions` partitions, or checks an existing one. Throws
  // Error(kFailedPrecondition) naming both counts when the log exists with another count, or
  // naming both formats when it was written in another format; then nothing changes.
  // REQUIRES: 1 <= partitions <= kMaxPartitions (else Error(kInvalidArgument)).
  virtual void Create(int partitions) = 0;

  // Opens a log created before (by this process or another) and returns its partition count,
  // for programs that attach to an existing store without knowing its count. Throws
  // Error(kFailedPrecondition) when the log was never created; nothing changes.
  virtual int Open() = 0;

  // The partition count given to Create, or found by Open.
  virtual int partitions() const = 0;

  // Appends `stream` at the next sequence of its aggregate's partition. Its version must be the
  // aggregate's next (else kConflict) and its request id unused by its aggregate type and tenant
  // (else kDuplicate with the original's place). An invalid stream (InvalidStreamReason) is
  // kRefused and nothing is stored.
  virtual AppendResult Append(const Stream& stream) = 0;

  // Appends streams of one partition or several as a group commit: result i is the outcome
  // Append would have given stream i, appended in order. A stream that fails (refused, conflict,
  // duplicate) fails alone, together with its aggregate's later streams in the group, which were
  // decided on it (they are kConflict); the other streams are appended.
  virtual std::vector<AppendResult> AppendAll(const std::vector<Stream>& streams) = 0;

  // The streams of `ref` with from <= version <= to, in version order, without transport; none
  // when from > to.
  virtual std::vector<Stream> Read(const AggregateRef& ref, Version from, Version to) = 0;

  // The entries of `ref` at the given versions (those that exist), with transport, in version
  // order; for redelivery.
  virtual std::vector<Entry> ReadEntries(const AggregateRef& ref,
                                         const std::vector<Version>& versions) = 0;

  // Where the stream of `ref` at `version` is; nullopt when there is none.
  virtual std::optional<Position> PositionOf(const AggregateRef& ref, Version version) = 0;

  // The entry of the stream that request `request_id` committed for an aggregate of type
  // `aggregate` and tenant `tenant_id`, without transport; nullopt when none did.
  virtual std::optional<Entry> FindByRequestId(const std::string& aggregate,
                                               const std::string& tenant_id,
                                               const std::string& request_id) = 0;

  // The highest sequence of a stream in `partition`; 0 when it holds none.
  virtual Sequence Head(int partition) = 0;

  // The lineage of `partition`: {nullopt, 0} for every partition of this version.
  virtual PartitionLineage Lineage(int partition) = 0;

  // Up to `limit` entries of `partition` after sequence `after`, with transport, in sequence
  // order, stopping before the first sequence that is not final yet; never blocks.
  virtual std::vector<Entry> ReadAfter(int partition, Sequence after, int limit) = 0;

  // Like ReadAfter, but when there is nothing after `after` waits until there is, `max_wait`
  // passes, or `stop` is requested; then returns what there is (maybe nothing). While it waits it
  // polls the store, every 50 ms at first, doubling up to 1 s; a commit of this process to the
  // partition wakes it at once.
  virtual std::vector<Entry> Tail(int partition, Sequence after, int limit,
                                  std::chrono::milliseconds max_wait,
                                  std::stop_token stop = {}) = 0;

  // The aggregate types this log has streams of (its registry), sorted.
  virtual std::vector<std::string> AggregateTypes() = 0;

  // Takes or renews the lease of `partition` for `node` until now + ttl, by the log's clock.
  // Returns true when `node` holds it afterwards; false while another node's lease is live
  // (a lease is live while now < expires_at).
  virtual bool AcquireLease(int partition, const std::string& node,
                            std::chrono::milliseconds ttl) = 0;

  // Gives the lease up when `node` holds it (it reads back as expired); otherwise does nothing.
  virtual void ReleaseLease(int partition, const std::string& node) = 0;

  // The lease of `partition` as stored, live or expired; nullopt when none was ever taken.
  virtual std::optional<Lease> LeaseOf(int partition) = 0;

  // The last sequence of `partition` that `subscription` committed; 0 when none.
  virtual Sequence Checkpoint(int partition, const std::string& subscription) = 0;

  // Records that `subscription` handled `partition` up to `sequence`; a checkpoint never moves
  // back, so committing a lower sequence changes nothing.
  virtual void CommitCheckpoint(int partition, const std::string& subscription,
                                Sequence sequence) = 0;
};

// The reference implementation: the whole log in memory, gone with the process. Thread-safe.
// `clock` judges leases.
std::unique_ptr<EventLog> NewMemoryEventLog(std::string_view context,
                                            std::shared_ptr<const Clock> clock);

}  // namespace wow
