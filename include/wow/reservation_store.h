// ReservationStore: reserved keys, which keep a value unique across the aggregates of one type.
//
// A key is unique within its ReservationScope: one context and aggregate type, one tenant (or the
// system tenant, "", for keys unique across the type's tenants) and one namespace. At most one
// owner, an aggregate of the scope's type, holds it. A reservation is absent, pending (held by the
// attempts in `holds` until `expires_at`) or confirmed (permanent, at the `version` of the owner's
// fact that last confirmed it). The rules, by what the key's reservation is when the call comes:
//
//   Reserve(owner, hold, ttl)
//     absent, or anyone's expired pending     pending {hold}, expires now + ttl; true
//     owner's live pending                    hold joins holds, the later expiry kept; true
//     confirmed by owner                      unchanged; true
//     another's live pending, or confirmed    unchanged; false
//   Confirm(owner, version)
//     absent, or another's expired pending    confirmed at version; true
//     owner's pending, live or expired        confirmed at version, holds cleared; true
//     confirmed by owner                      version = max(old, version); true
//     another's live pending, or confirmed    unchanged; false
//   Release(owner, version)
//     owner's expired pending                 deleted; true
//     owner's live pending                    at kAnyVersion: deleted; true
//                                             at a version: unchanged; false (see below)
//     confirmed by owner                      deleted when its version <= version or version is
//                                             kAnyVersion; true. Else unchanged; false (an old
//                                             fact replayed after a later one confirmed it)
//     absent, or another's                    unchanged; false
//   Abandon(owner, hold)
//     owner's pending that hold holds         hold removed, deleted when none is left; true
//     anything else (a confirmed key too)     unchanged; false
//
// Why a versioned release leaves a live pending reservation alone: a release is a fact of the log
// and may be applied late, by a subscription behind the log or replaying after a crash. By then
// the owner may have reserved the key again in a later attempt (renamed away and back); deleting
// that pending reservation would let another aggregate take the key while the owner's later
// stream still lands with it: two holders. The later attempt's abandon, confirmation or expiry
// ends it. (Seed 001 deletes the owner's pending "whatever its holds"; this departs from it.)
//
// Every operation names its owner and does nothing for anyone else. Expiry is judged by the
// store's injected Clock, never the database's. Of concurrent Reserve calls for a free key exactly
// one returns true, on every backend.
//
// Bad input (an empty namespace or key, a key or namespace over 512 bytes, an empty hold, a ttl
// <= 0 or over 366 days, a version below kUnversioned, a Confirm at kAnyVersion, an owner of
// another type than the scope's) throws Error(kInvalidArgument) and changes nothing. Failures of
// the backend throw Error with the backend's code.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "wow/model.h"

namespace wow {

// The longest time to live a reservation may ask for.
inline constexpr std::chrono::milliseconds kMaxReservationTtl{366LL * 24 * 3600 * 1000};

// Where a key is unique.
struct ReservationScope {
  std::string context;    // the owners' bounded context
  std::string aggregate;  // the owners' aggregate type
  std::string tenant_id;  // the tenant, or "" (kSystemTenant) for keys unique across tenants
  std::string ns;         // the namespace, such as "eshop-catalog.brand-name"

  friend auto operator<=>(const ReservationScope&, const ReservationScope&) = default;
  friend bool operator==(const ReservationScope&, const ReservationScope&) = default;
};

enum class ReservationState { kPending, kConfirmed };

// "PENDING", "CONFIRMED".
std::string_view ReservationStateName(ReservationState state);
// Writes ReservationStateName(state), so that GoogleTest's failure messages and logs show the name.
std::ostream& operator<<(std::ostream& out, ReservationState state);

struct Reservation {
  std::string key;
  AggregateRef owner;
  ReservationState state = ReservationState::kPending;
  std::set<std::string> holds;  // the attempts holding a pending reservation; empty when confirmed
  EpochMillis expires_at = 0;   // a pending reservation's expiry; 0 when confirmed
  Version version = kUnversioned;  // a confirmed reservation's version; kUnversioned when pending

  friend bool operator==(const Reservation&, const Reservation&) = default;
};

// Whether `r` is a pending reservation whose expiry has passed at `now`: free for anyone to take.
inline bool IsExpiredPending(const Reservation& r, EpochMillis now) {
  return r.state == ReservationState::kPending && r.expires_at <= now;
}

// The longest key a reservation store takes, in bytes.
inline constexpr std::size_t kMaxReservationKeyBytes = 512;

// Throws Error(kInvalidArgument) unless scope and key are well formed: a valid context and
// aggregate type, a tenant of at most 256 bytes, a namespace and key of 1 to 512 bytes.
void ValidateReservationKey(const ReservationScope& scope, std::string_view key);

// ValidateReservationKey, and an owner of the scope's context and type. Backends call it before
// touching anything.
void ValidateReservation(const ReservationScope& scope, std::string_view key,
                         const AggregateRef& owner);

// ValidateReservation, and a non-empty hold and a ttl in (0, kMaxReservationTtl]: a Reserve's
// arguments.
void ValidateReserve(const ReservationScope& scope, std::string_view key, const AggregateRef& owner,
                     std::string_view hold, std::chrono::milliseconds ttl);

// ValidateReservation, and a version of a stream or kUnversioned (not kAnyVersion): a Confirm's.
void ValidateConfirm(const ReservationScope& scope, std::string_view key, const AggregateRef& owner,
                     Version version);

// ValidateReservation, and a version >= kUnversioned or kAnyVersion: a Release's arguments.
void ValidateRelease(const ReservationScope& scope, std::string_view key, const AggregateRef& owner,
                     Version version);

// ValidateReservation, and a non-empty hold: an Abandon's arguments.
void ValidateAbandon(const ReservationScope& scope, std::string_view key, const AggregateRef& owner,
                     std::string_view hold);

class ReservationStore {
 public:
  virtual ~ReservationStore() = default;

  // Reserves `key` in `scope` for `owner`'s attempt `hold`, pending for `ttl` (see the table).
  // Returns true when owner holds the key afterwards, false when another owner does.
  virtual bool Reserve(const ReservationScope& scope, const std::string& key,
                       const AggregateRef& owner, const std::string& hold,
                       std::chrono::milliseconds ttl) = 0;

  // Confirms owner's reservation of `key` for its fact committed at `version` (see the table).
  // Returns true when owner holds the key confirmed afterwards, false when another owner holds it.
  virtual bool Confirm(const ReservationScope& scope, const std::string& key,
                       const AggregateRef& owner, Version version) = 0;

  // Releases owner's reservation of `key` for its fact committed at `version` that gave the key
  // up (see the table). Returns true when it deleted owner's reservation; false when there was
  // none, another owner holds the key, a later fact confirmed it (a replayed old release), or it
  // is a live pending reservation and `version` is not kAnyVersion (a later attempt holds it).
  virtual bool Release(const ReservationScope& scope, const std::string& key,
                       const AggregateRef& owner, Version version) = 0;

  // Removes `hold` from owner's pending reservation of `key`; deletes the reservation when no
  // hold is left. A confirmed reservation is never abandoned. Returns true when it removed the
  // hold.
  virtual bool Abandon(const ReservationScope& scope, const std::string& key,
                       const AggregateRef& owner, const std::string& hold) = 0;

  // The reservation of `key` in `scope` as stored, expired or not; nullopt when absent.
  virtual std::optional<Reservation> Find(const ReservationScope& scope,
                                          const std::string& key) = 0;

  // Up to `limit` reservations of `scope` with keys after `after_key`, in bytewise key order, as
  // stored (expired pending ones too); for paging through a namespace (tools). "" starts at the
  // first key. REQUIRES: limit > 0.
  virtual std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                        int limit) = 0;
};

// The reference implementation: every reservation in memory, gone with the process.
// Thread-safe. `clock` judges expiry.
std::unique_ptr<ReservationStore> NewMemoryReservationStore(std::shared_ptr<const Clock> clock);

}  // namespace wow
