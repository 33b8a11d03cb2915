// Applying a committed stream's key facts: the eager path after an append (CommandProcessor), the
// reservation subscription and the SQLite log's own append transaction share it, so all agree.
#pragma once

#include <string>

#include "wow/decide_scope.h"
#include "wow/reservation_store.h"
#include "wow/stream.h"

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

// Confirms each key `stream` reserved and releases each key it released, at its version.
// Both are idempotent and versioned, so applying a stream twice, or an old one late, is harmless.
// Returns how many reserved keys another owner holds (which the caller reports). Throws Error from
// the store.
int ApplyKeyFacts(ReservationStore& reservations, const Stream& stream);

}  // namespace wow::core
