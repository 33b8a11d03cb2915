// Applying a committed stream's key facts: the eager path after an append (CommandProcessor), the
// reservation subscription and the logs whose appends confirm their keys (SQLite's transaction,
// the memory log's append) share it, so all agree.
#pragma once

#include <string>

#include "core/reservation_rules.h"
#include "wow/decide_scope.h"
#include "wow/incidents.h"
#include "wow/reservation_store.h"
#include "wow/stream.h"

namespace wow {
class EventLog;
}

namespace wow::core {

// Calls `confirm` for each key `stream` reserved, then `release` for each key it released, each as
// bool(const ReservationScope&, const std::string& key), in the scope the fact names
// (DecideScope::ScopeOf). Returns how many confirms returned false (keys another owner holds,
// which the caller reports). Throws what the actions throw. A template, not std::function: the
// SQLite log calls it once per append on the writer thread, and its capturing lambdas would
// allocate.
template <typename Confirm, typename Release>
int VisitKeyFacts(const Stream& stream, Confirm&& confirm, Release&& release) {
  int lost = 0;
  for (const KeyFact& fact : stream.reserved) {
    if (!confirm(DecideScope::ScopeOf(stream.ref, fact.ns, fact.tenancy), fact.key)) ++lost;
  }
  for (const KeyFact& fact : stream.released) {
    release(DecideScope::ScopeOf(stream.ref, fact.ns, fact.tenancy), fact.key);
  }
  return lost;
}

// The check before an append that confirms its keys itself (StoreSet::appends_confirm_keys):
// whether `stream` may be appended, because each key it reserved is still its attempt's own
// (core::HeldByAttempt of `find(scope, key)`, the key's std::optional<Reservation> as stored).
// A stream no decision made (no attempt) is not checked. Throws what `find` throws.
template <typename Find>
bool AttemptHoldsItsKeys(const Stream& stream, Find&& find) {
  if (stream.attempt.empty()) return true;
  for (const KeyFact& fact : stream.reserved) {
    const ReservationScope scope = DecideScope::ScopeOf(stream.ref, fact.ns, fact.tenancy);
    if (!HeldByAttempt(find(scope, fact.key), stream.ref, stream.attempt)) return false;
  }
  return true;
}

// Within the append of `stream` that AttemptHoldsItsKeys allowed: confirms each key it reserved
// and releases each key it released, at its version, by `apply(scope, key, op)` (the rule's
// answer). A confirmation another owner's reservation refuses (a stream with no attempt) is a key
// incident, reported with the holder `find(scope, key)` reads. Throws what the actions throw.
template <typename Apply, typename Find>
void ApplyKeyFactsInAppend(const Stream& stream, Apply&& apply, Find&& find) {
  VisitKeyFacts(
      stream,
      [&](const ReservationScope& scope, const std::string& key) {
        if (apply(scope, key, ReservationOp::Confirm(stream.ref, stream.version))) return true;
        const std::optional<Reservation> holder = find(scope, key);
        ReportKeyIncident({scope, key, stream.ref, stream.version,
                           holder ? std::optional(holder->owner) : std::nullopt});
        return false;
      },
      [&](const ReservationScope& scope, const std::string& key) {
        return apply(scope, key, ReservationOp::Release(stream.ref, stream.version));
      });
}

// Where a stream's key facts come from.
enum class KeyFactsOrigin {
  kJustAppended,  // the stream this node just appended: no later stream is expected
  kFromLog,       // a stream read from the log, maybe late (a subscription, a replay)
};

// Confirms each key `stream` reserved and releases each key it released, at its version.
// Both are idempotent and versioned, so applying a stream twice is harmless. A fact on a key that a
// later stream of the aggregate in `log` also reserved or released is skipped: the later fact
// decides the key (read up front for kFromLog; for kJustAppended only when a confirmation fails).
// A reserved key another owner holds, with no later fact on it, is a key incident, reported
// (wow/incidents.h) and counted in the result. Throws Error from the stores.
int ApplyKeyFacts(ReservationStore& reservations, EventLog& log, const Stream& stream,
                  KeyFactsOrigin origin);

}  // namespace wow::core
