// Applying a committed stream's key facts: the eager path after an append (CommandProcessor), the
// reservation subscription and the SQLite log's own append transaction share it, so all agree.
#pragma once

#include <string>

#include "wow/decide_scope.h"
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
