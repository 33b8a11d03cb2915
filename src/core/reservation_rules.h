// The reservation rules (DESIGN §5.1, the table in wow/reservation_store.h) as one pure function:
// a key's reservation as stored (or none), an operation and the time in; the operation's answer
// and what to store out. Every ReservationStore backend applies its operations through it, and the
// model-based test uses it as the oracle every backend is compared with.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "wow/model.h"
#include "wow/reservation_store.h"

namespace wow::core {

// One reservation operation on one key, with its arguments. Build it with the named makers.
struct ReservationOp {
  enum class Kind { kReserve, kConfirm, kRelease, kAbandon };
  Kind kind = Kind::kReserve;
  AggregateRef owner;
  std::string hold;                  // kReserve, kAbandon: the attempt
  std::chrono::milliseconds ttl{0};  // kReserve: how long the pending reservation lives
  Version version = kUnversioned;    // kConfirm, kRelease: the fact's version

  static ReservationOp Reserve(AggregateRef owner, std::string hold,
                               std::chrono::milliseconds ttl) {
    return {Kind::kReserve, std::move(owner), std::move(hold), ttl, kUnversioned};
  }
  static ReservationOp Confirm(AggregateRef owner, Version version) {
    return {Kind::kConfirm, std::move(owner), {}, std::chrono::milliseconds{0}, version};
  }
  static ReservationOp Release(AggregateRef owner, Version version) {
    return {Kind::kRelease, std::move(owner), {}, std::chrono::milliseconds{0}, version};
  }
  static ReservationOp Abandon(AggregateRef owner, std::string hold) {
    return {Kind::kAbandon, std::move(owner), std::move(hold), std::chrono::milliseconds{0},
            kUnversioned};
  }
};

// What an operation does to the key's reservation.
struct ReservationOutcome {
  enum class Write {
    kNone,    // the stored reservation stays as it is
    kStore,   // `stored` replaces it (or is inserted)
    kDelete,  // it is deleted
  };
  // The operation's answer: Reserve and Confirm, whether the owner holds the key afterwards;
  // Release, whether it deleted the owner's reservation; Abandon, whether it removed the hold.
  bool answer = false;
  Write write = Write::kNone;
  Reservation stored;  // Write::kStore only
};

// Applies `op` to the reservation of `key` as stored (`current`, nullopt when absent) at `now`.
// REQUIRES: the arguments are valid (ValidateReserve / ValidateReservation have passed, and a
// Confirm is not at kAnyVersion) and `current`, when set, is the reservation of `key`.
ReservationOutcome ApplyReservationRule(const std::optional<Reservation>& current,
                                        const std::string& key, const ReservationOp& op,
                                        EpochMillis now);

// Whether `current` is still the reservation of `owner`'s attempt `hold`: a pending reservation of
// the owner that `hold` holds (expired or not: nobody took it), or a key the owner confirmed. An
// append that confirms its keys in its own transaction checks this for each key it reserved.
bool HeldByAttempt(const std::optional<Reservation>& current, const AggregateRef& owner,
                   const std::string& hold);

}  // namespace wow::core
