// The core model: aggregate references, versions, time, partitions and ids.
//
// These are plain values shared by the stores and the runtime. An AggregateRef names one aggregate
// instance: {context, aggregate type, tenant, id}. The system tenant is the empty string.
// Versions count an aggregate's streams from 1; UNVERSIONED (0) is below every stream version and
// marks a fact with no stream behind it (a key imported from the older PrepareKey); ANY_VERSION is
// above every version and lets a release free a key whichever fact confirmed it.
//
// Thread-safety: the value types are safe to share once built. SystemClock is safe for concurrent
// use; ManualClock is safe for concurrent use (reads and advances are atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace wow {

using Version = std::int64_t;
using Sequence = std::int64_t;
// A point in time as milliseconds since the Unix epoch, the unit every store keeps.
using EpochMillis = std::int64_t;

inline constexpr Version kUnversioned = 0;
inline constexpr Version kAnyVersion = std::numeric_limits<Version>::max();

// The system tenant: keys unique across the tenants of a context, and aggregates of no tenant.
inline constexpr std::string_view kSystemTenant = "";

// Whose tenant a reserved key is unique within: the deciding aggregate's (the default), or the
// system tenant's, which makes the key unique across the context's tenants.
enum class ReservationTenancy { kTenant, kSystem };

struct AggregateRef {
  std::string context;    // bounded context, such as "eshop-catalog"
  std::string aggregate;  // aggregate type, such as "brand"
  std::string tenant_id;  // "" for the system tenant
  std::string id;         // the aggregate's id within its type and tenant

  friend auto operator<=>(const AggregateRef&, const AggregateRef&) = default;
  friend bool operator==(const AggregateRef&, const AggregateRef&) = default;
};

// "context/aggregate/tenant/id", for messages and logs.
std::string ToString(const AggregateRef& ref);
std::ostream& operator<<(std::ostream& out, const AggregateRef& ref);

// Throws Error(kInvalidArgument) unless `name` can name a context or an aggregate type: 1 to 64
// characters of [a-z0-9-] starting with a letter. Store tables and collections are named after
// these names, so the rule keeps every backend's names valid and distinct. `what` names the
// argument in the message ("context", "aggregate type").
void ValidateTypeName(std::string_view name, std::string_view what);

// Whether `s` is 1 to `max` characters of [A-Za-z0-9._~-] (RFC 3986's unreserved characters):
// an id or tenant that a URL path segment, a log line and a terminal hold as it is.
bool IsUnreservedId(std::string_view s, std::size_t max);

// Throws Error(kInvalidArgument) unless `ref` names a valid context and aggregate type, a tenant of
// at most 256 bytes and a non-empty id of at most 256 bytes.
void ValidateRef(const AggregateRef& ref);

// Throws Error(kInvalidArgument) unless version >= kUnversioned. `what` names it ("timer version").
void ValidateVersion(Version version, std::string_view what = "version");

// The most partitions a context's log may have; a log's count is fixed when it is created.
inline constexpr int kMaxPartitions = 4096;

// Throws Error(kInvalidArgument) unless 1 <= partitions <= kMaxPartitions: the partition count of
// a log, or of the timers of its context.
void ValidatePartitionCount(int partitions);

// Throws Error(kInvalidArgument) unless 0 <= partition < partitions.
void ValidatePartition(int partition, int partitions);

// The partition an aggregate's streams, reservations' log entries and timers live in:
//   XXH64(tenant_id + '\0' + id, seed 0) % partitions.
// This function places data on disk; it is fixed forever and must never change.
// REQUIRES: partitions >= 1.
int PartitionOf(std::string_view tenant_id, std::string_view id, int partitions);

// A source of the current time. Stores judge expiry by their injected clock, never the
// database's, so every backend behaves alike and tests control time.
class Clock {
 public:
  virtual ~Clock() = default;
  // The current time in milliseconds since the Unix epoch.
  virtual EpochMillis NowMillis() const = 0;
};

// The system's real-time clock. Thread-safe.
class SystemClock final : public Clock {
 public:
  EpochMillis NowMillis() const override;
  // A process-wide instance; never destroyed.
  static const std::shared_ptr<SystemClock>& Instance();
};

// A clock that moves only when told. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(EpochMillis start = 1'700'000'000'000) : now_(start) {}
  EpochMillis NowMillis() const override { return now_.load(); }
  void Advance(std::chrono::milliseconds by) { now_ += by.count(); }
  void Set(EpochMillis to) { now_.store(to); }

 private:
  std::atomic<EpochMillis> now_;
};

// A fresh id: 32 lowercase hex digits, the system clock's milliseconds since the epoch (12 digits)
// then 80 random bits from a per-thread generator seeded by std::random_device. Ids made in later
// milliseconds sort after earlier ones, so the stores' indexes take new ids at their end rather
// than all over (B-tree locality). Used for request ids, attempts (the holds of a reservation),
// timers, nodes, and the ids the sample service gives new aggregates.
std::string NewId();

}  // namespace wow
