#include "core/reservation_rules.h"

#include <algorithm>

namespace wow::core {
namespace {

using Write = ReservationOutcome::Write;

ReservationOutcome Unchanged(bool answer) { return {answer, Write::kNone, {}}; }
ReservationOutcome Deleted() { return {true, Write::kDelete, {}}; }
ReservationOutcome Stored(bool answer, Reservation r) {
  return {answer, Write::kStore, std::move(r)};
}

Reservation PendingOf(const std::string& key, const ReservationOp& op, EpochMillis now) {
  return {key, op.owner, ReservationState::kPending, {op.hold}, now + op.ttl.count(), kUnversioned};
}

Reservation ConfirmedOf(const std::string& key, const AggregateRef& owner, Version version) {
  return {key, owner, ReservationState::kConfirmed, {}, 0, version};
}

ReservationOutcome Reserve(const std::optional<Reservation>& r, const std::string& key,
                           const ReservationOp& op, EpochMillis now) {
  if (!r || IsExpiredPending(*r, now)) return Stored(true, PendingOf(key, op, now));
  if (r->owner != op.owner) return Unchanged(false);
  if (r->state == ReservationState::kConfirmed) return Unchanged(true);
  Reservation joined = *r;
  joined.holds.insert(op.hold);
  joined.expires_at = std::max(joined.expires_at, now + op.ttl.count());
  if (joined == *r) return Unchanged(true);
  return Stored(true, std::move(joined));
}

ReservationOutcome Confirm(const std::optional<Reservation>& r, const std::string& key,
                           const ReservationOp& op, EpochMillis now) {
  if (!r) return Stored(true, ConfirmedOf(key, op.owner, op.version));
  if (r->owner != op.owner) {
    if (!IsExpiredPending(*r, now)) return Unchanged(false);
    return Stored(true, ConfirmedOf(key, op.owner, op.version));  // free: the fact takes it
  }
  if (r->state == ReservationState::kPending) {
    return Stored(true, ConfirmedOf(key, op.owner, op.version));  // live or expired: it committed
  }
  if (r->version >= op.version) return Unchanged(true);
  return Stored(true, ConfirmedOf(key, op.owner, op.version));
}

ReservationOutcome Release(const std::optional<Reservation>& r, const ReservationOp& op,
                           EpochMillis now) {
  if (!r || r->owner != op.owner) return Unchanged(false);
  if (r->state == ReservationState::kPending) {
    // A live pending reservation belongs to a later attempt than the fact being released (the
    // owner reserved the key again): only its abandon, confirmation or expiry ends it. A release
    // at a version is a fact of the log that may be applied late; deleting the pending key would
    // let another aggregate take it while the later attempt's stream lands with it.
    if (IsExpiredPending(*r, now) || op.version == kAnyVersion) return Deleted();
    return Unchanged(false);
  }
  // A key a later fact confirmed again is kept: this release is an old one, replayed.
  if (op.version != kAnyVersion && r->version > op.version) return Unchanged(false);
  return Deleted();
}

ReservationOutcome Abandon(const std::optional<Reservation>& r, const ReservationOp& op) {
  if (!r || r->owner != op.owner || r->state != ReservationState::kPending ||
      !r->holds.contains(op.hold)) {
    return Unchanged(false);
  }
  if (r->holds.size() == 1) return Deleted();
  Reservation left = *r;
  left.holds.erase(op.hold);
  return Stored(true, std::move(left));
}

}  // namespace

ReservationOutcome ApplyReservationRule(const std::optional<Reservation>& current,
                                        const std::string& key, const ReservationOp& op,
                                        EpochMillis now) {
  switch (op.kind) {
    case ReservationOp::Kind::kReserve:
      return Reserve(current, key, op, now);
    case ReservationOp::Kind::kConfirm:
      return Confirm(current, key, op, now);
    case ReservationOp::Kind::kRelease:
      return Release(current, op, now);
    case ReservationOp::Kind::kAbandon:
      return Abandon(current, op);
  }
  return Unchanged(false);
}

bool HeldByAttempt(const std::optional<Reservation>& current, const AggregateRef& owner,
                   const std::string& hold) {
  if (!current || current->owner != owner) return false;
  return current->state == ReservationState::kConfirmed || current->holds.contains(hold);
}

}  // namespace wow::core
