// The in-memory EventLog: the reference semantics of DESIGN §5.2, one mutex over the partitions.
// Every append is made under the mutex, so sequences are gapless and never need placeholders.
// An entry never changes once appended and never moves (a deque), so a read only finds its entries
// under the mutex and copies them after letting it go: every command waits for the mutex.
// The log of a memory store set shares its reservation store's key table (memory_stores.h): an
// append with key facts then also holds the table's mutex, checks the attempt still holds its keys
// (a conflict otherwise) and confirms and releases them, in one step no other store sees halfway.
#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "core/key_facts.h"
#include "store/common/commit_signal.h"
#include "store/memory/memory_stores.h"
#include "wow/error.h"
#include "wow/event_log.h"

namespace wow {
namespace {

struct Partition {
  std::deque<Entry> entries;  // the entry at sequence s is entries[s - 1]
  std::optional<Lease> lease;
  std::map<std::string, Sequence> checkpoints;
};

Stream WithoutTransport(Stream stream) {
  stream.transport.clear();
  return stream;
}

class MemoryEventLog final : public EventLog {
 public:
  // `keys`: the key table the appends confirm their keys in, or null for a log whose appends leave
  // the keys to others (NewMemoryEventLog).
  MemoryEventLog(std::string context, std::shared_ptr<const Clock> clock,
                 std::shared_ptr<memory::SharedKeyTable> keys)
      : context_(std::move(context)), clock_(std::move(clock)), keys_(std::move(keys)) {
    ValidateTypeName(context_, "context");
    Require(clock_ != nullptr, "an event log needs a clock");
  }

  const std::string& context() const override { return context_; }

  void Create(int partitions) override {
    ValidatePartitionCount(partitions);
    std::lock_guard lock(mutex_);
    if (partitions_.empty()) {
      partitions_.resize(static_cast<size_t>(partitions));
      signal_ = std::make_unique<store::CommitSignal>(partitions);
    } else if (PartitionCount() != partitions) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "event log of context \"" + context_ + "\" has " +
                      std::to_string(PartitionCount()) + " partitions, not " +
                      std::to_string(partitions) + "; the partition count never changes");
    }
  }

  int Open() override { return partitions(); }

  int partitions() const override {
    std::lock_guard lock(mutex_);
    RequireCreated();
    return PartitionCount();
  }

  AppendResult Append(const Stream& stream) override { return AppendAll({stream}).front(); }

  std::vector<AppendResult> AppendAll(const std::vector<Stream>& streams) override {
    // What needs no lock is done before taking it: every command waits for the lock.
    std::vector<Pending> pending;
    pending.reserve(streams.size());
    for (const Stream& stream : streams) {
      pending.push_back({InvalidStreamReason(stream, context_),
                         {stream.ref.aggregate, stream.ref.tenant_id, stream.request_id},
                         stream});
    }
    std::vector<AppendResult> results;
    results.reserve(streams.size());
    std::set<int> committed;
    {
      std::lock_guard lock(mutex_);
      RequireCreated();
      std::set<AggregateRef> failed;  // an aggregate's later streams follow its failed one
      for (Pending& stream : pending) {
        results.push_back(AppendLocked(stream, failed.contains(stream.stream.ref)));
        if (results.back().appended()) {  // the stream was moved into the log
          committed.insert(results.back().position().partition);
        } else {
          failed.insert(stream.stream.ref);  // not appended: the pending copy was not moved
        }
      }
    }
    for (int partition : committed) signal_->Notify(partition);
    return results;
  }

  std::vector<Stream> Read(const AggregateRef& ref, Version from, Version to) override {
    ValidateOwnRef(ref);
    std::vector<const Entry*> found;
    {
      std::lock_guard lock(mutex_);
      RequireCreated();
      const std::vector<Position>& positions = PositionsLocked(ref);
      const Version last = std::min<Version>(to, static_cast<Version>(positions.size()));
      for (Version v = std::max<Version>(from, 1); v <= last; ++v) {
        found.push_back(&At(positions[static_cast<size_t>(v - 1)]));
      }
    }
    std::vector<Stream> streams;
    streams.reserve(found.size());
    for (const Entry* entry : found) streams.push_back(WithoutTransport(entry->stream));
    return streams;
  }

  std::vector<Entry> ReadEntries(const AggregateRef& ref,
                                 const std::vector<Version>& versions) override {
    ValidateOwnRef(ref);
    const std::set<Version> wanted(versions.begin(), versions.end());
    std::vector<const Entry*> found;
    {
      std::lock_guard lock(mutex_);
      RequireCreated();
      const std::vector<Position>& positions = PositionsLocked(ref);
      for (Version v : wanted) {
        if (v >= 1 && v <= static_cast<Version>(positions.size())) {
          found.push_back(&At(positions[static_cast<size_t>(v - 1)]));
        }
      }
    }
    return Copies(found);
  }

  std::optional<Position> PositionOf(const AggregateRef& ref, Version version) override {
    std::lock_guard lock(mutex_);
    RequireOwnRef(ref);
    const std::vector<Position>& positions = PositionsLocked(ref);
    if (version < 1 || version > static_cast<Version>(positions.size())) return std::nullopt;
    return positions[static_cast<size_t>(version - 1)];
  }

  std::optional<Entry> FindByRequestId(const std::string& aggregate, const std::string& tenant_id,
                                       const std::string& request_id) override {
    ValidateTypeName(aggregate, "aggregate type");
    const Entry* found = nullptr;
    {
      std::lock_guard lock(mutex_);
      RequireCreated();
      auto it = requests_.find({aggregate, tenant_id, request_id});
      if (it == requests_.end()) return std::nullopt;
      found = &At(it->second);
    }
    return Entry{found->position, WithoutTransport(found->stream)};
  }

  Sequence Head(int partition) override {
    std::lock_guard lock(mutex_);
    return static_cast<Sequence>(PartitionLocked(partition).entries.size());
  }

  PartitionLineage Lineage(int partition) override {
    std::lock_guard lock(mutex_);
    PartitionLocked(partition);
    return {};
  }

  std::vector<Entry> ReadAfter(int partition, Sequence after, int limit) override {
    Require(after >= 0, [&] { return "sequence " + std::to_string(after) + " is below 0"; });
    Require(limit > 0, [&] { return "read limit must be positive, got " + std::to_string(limit); });
    std::vector<const Entry*> found;
    {
      std::lock_guard lock(mutex_);
      const std::deque<Entry>& entries = PartitionLocked(partition).entries;
      const auto first = std::min(static_cast<size_t>(after), entries.size());
      const auto last = std::min(first + static_cast<size_t>(limit), entries.size());
      for (size_t i = first; i < last; ++i) found.push_back(&entries[i]);
    }
    return Copies(found);
  }

  std::vector<Entry> Tail(int partition, Sequence after, int limit,
                          std::chrono::milliseconds max_wait, std::stop_token stop) override {
    store::CommitSignal* signal = nullptr;
    {
      std::lock_guard lock(mutex_);
      PartitionLocked(partition);
      signal = signal_.get();
    }
    return store::TailWithBackoff(*signal, partition, max_wait, stop, store::TailPolicy{},
                                  [&] { return ReadAfter(partition, after, limit); });
  }

  std::vector<std::string> AggregateTypes() override {
    std::lock_guard lock(mutex_);
    RequireCreated();
    return {types_.begin(), types_.end()};
  }

  bool AcquireLease(int partition, const std::string& node,
                    std::chrono::milliseconds ttl) override {
    ValidateLeaseRequest(node, ttl);
    std::lock_guard lock(mutex_);
    std::optional<Lease>& lease = PartitionLocked(partition).lease;
    const EpochMillis now = clock_->NowMillis();
    if (lease && lease->node != node && lease->expires_at > now) return false;
    lease = Lease{node, now + ttl.count()};
    return true;
  }

  // A released lease stays stored, expired at once, so LeaseOf still says who held it last.
  void ReleaseLease(int partition, const std::string& node) override {
    std::lock_guard lock(mutex_);
    std::optional<Lease>& lease = PartitionLocked(partition).lease;
    if (lease && lease->node == node) {
      lease->expires_at = std::min(lease->expires_at, clock_->NowMillis());
    }
  }

  std::optional<Lease> LeaseOf(int partition) override {
    std::lock_guard lock(mutex_);
    return PartitionLocked(partition).lease;
  }

  Sequence Checkpoint(int partition, const std::string& subscription) override {
    Require(!subscription.empty(), "subscription name is empty");
    std::lock_guard lock(mutex_);
    const auto& checkpoints = PartitionLocked(partition).checkpoints;
    auto it = checkpoints.find(subscription);
    return it == checkpoints.end() ? 0 : it->second;
  }

  void CommitCheckpoint(int partition, const std::string& subscription,
                        Sequence sequence) override {
    Require(!subscription.empty(), "subscription name is empty");
    Require(sequence >= 0,
            [&] { return "checkpoint sequence " + std::to_string(sequence) + " is below 0"; });
    std::lock_guard lock(mutex_);
    Sequence& checkpoint = PartitionLocked(partition).checkpoints[subscription];
    checkpoint = std::max(checkpoint, sequence);
  }

 private:
  using RequestKey = std::tuple<std::string, std::string, std::string>;

  // A stream to append, as AppendAll prepares it before taking the lock.
  struct Pending {
    std::optional<std::string> invalid;  // InvalidStreamReason
    RequestKey request;
    Stream stream;  // a copy, moved into the log when appended
  };

  // The outcome of appending `pending` now; `blocked` when an earlier stream of its aggregate in
  // the same group failed, which makes the stream's version unreachable (kConflict).
  AppendResult AppendLocked(Pending& pending, bool blocked) {
    if (pending.invalid) return AppendResult::Refused(*pending.invalid);
    const Stream& stream = pending.stream;
    const RequestKey& request = pending.request;
    if (auto it = requests_.find(request); it != requests_.end()) {
      return AppendResult::Duplicate(it->second, At(it->second).stream.version);
    }
    const auto next = static_cast<Version>(PositionsLocked(stream.ref).size()) + 1;
    if (blocked || stream.version != next) return AppendResult::Conflict();
    const auto find_key = [&](const ReservationScope& scope, const std::string& key) {
      return keys_->table.Find(scope, key);
    };
    std::unique_lock<std::mutex> keys_lock;
    if (keys_ && !(stream.reserved.empty() && stream.released.empty())) {
      keys_lock = std::unique_lock(keys_->mutex);
      if (!core::AttemptHoldsItsKeys(stream, find_key)) return AppendResult::Conflict();
    }
    const int partition = PartitionOf(stream.ref.tenant_id, stream.ref.id, PartitionCount());
    std::deque<Entry>& entries = partitions_[static_cast<size_t>(partition)].entries;
    const Position at{partition, static_cast<Sequence>(entries.size()) + 1};
    entries.push_back(Entry{at, std::move(pending.stream)});
    const Stream& appended = entries.back().stream;
    aggregates_[appended.ref].push_back(at);
    types_.insert(appended.ref.aggregate);
    requests_.emplace(std::move(pending.request), at);
    if (keys_lock.owns_lock()) {
      const EpochMillis now = clock_->NowMillis();
      core::ApplyKeyFactsInAppend(
          appended,
          [&](const ReservationScope& scope, const std::string& key, const core::ReservationOp& op) {
            return keys_->table.Apply(scope, key, op, now);
          },
          find_key);
    }
    return AppendResult::Appended(at);
  }

  int PartitionCount() const { return static_cast<int>(partitions_.size()); }

  void RequireCreated() const {
    if (partitions_.empty()) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "event log of context \"" + context_ + "\" is not created; call Create first");
    }
  }

  // Needs no lock: checks only `ref` against the log's context.
  void ValidateOwnRef(const AggregateRef& ref) const {
    ValidateRef(ref);
    Require(ref.context == context_, [&] {
      return "aggregate " + ToString(ref) + " is not of context \"" + context_ + "\"";
    });
  }

  void RequireOwnRef(const AggregateRef& ref) const {
    RequireCreated();
    ValidateOwnRef(ref);
  }

  // Copies of `found`, entries of the log: made without the lock, as an entry never changes.
  static std::vector<Entry> Copies(const std::vector<const Entry*>& found) {
    std::vector<Entry> entries;
    entries.reserve(found.size());
    for (const Entry* entry : found) entries.push_back(*entry);
    return entries;
  }

  Partition& PartitionLocked(int partition) {
    RequireCreated();
    ValidatePartition(partition, PartitionCount());
    return partitions_[static_cast<size_t>(partition)];
  }

  const std::vector<Position>& PositionsLocked(const AggregateRef& ref) const {
    static const std::vector<Position> kNone;
    auto it = aggregates_.find(ref);
    return it == aggregates_.end() ? kNone : it->second;
  }

  const Entry& At(Position position) const {
    return partitions_[static_cast<size_t>(position.partition)]
        .entries[static_cast<size_t>(position.sequence - 1)];
  }

  const std::string context_;
  const std::shared_ptr<const Clock> clock_;
  const std::shared_ptr<memory::SharedKeyTable> keys_;  // null: appends leave the keys alone
  mutable std::mutex mutex_;
  std::vector<Partition> partitions_;  // empty until Create
  std::unique_ptr<store::CommitSignal> signal_;
  std::map<AggregateRef, std::vector<Position>> aggregates_;
  std::map<RequestKey, Position> requests_;
  std::set<std::string> types_;  // the aggregate types with streams
};

}  // namespace

std::unique_ptr<EventLog> NewMemoryEventLog(std::string_view context,
                                            std::shared_ptr<const Clock> clock) {
  return std::make_unique<MemoryEventLog>(std::string(context), std::move(clock), nullptr);
}

namespace memory {

LogAndReservations NewLogAndReservations(std::string_view context,
                                         std::shared_ptr<const Clock> clock) {
  auto keys = std::make_shared<SharedKeyTable>();
  LogAndReservations stores;
  stores.log = std::make_shared<MemoryEventLog>(std::string(context), clock, keys);
  stores.reservations = NewReservationStoreOn(std::move(keys), std::move(clock));
  return stores;
}

}  // namespace memory

}  // namespace wow
