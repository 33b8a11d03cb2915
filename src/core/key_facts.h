// Applying a committed stream's key facts: the eager path after an append (CommandProcessor), the
// reservation subscription and the SQLite log's own append transaction share it, so all agree.
#pragma once

#include <functional>
#include <string>

#include "wow/reservation_store.h"
#include "wow/stream.h"

namespace wow::core {

// Called with a key fact's reservation scope and key; returns what the store's operation returned.
using KeyFactAction = std::function<bool(const ReservationScope& scope, const std::string& key)>;

// Calls `confirm` for each key `stream` reserved, then `release` for each key it released, in the
// scope the fact names (DecideScope::ScopeOf). Returns how many confirms returned false (keys
// another owner holds, which the caller reports). Throws what the actions throw.
int VisitKeyFacts(const Stream& stream, const KeyFactAction& confirm, const KeyFactAction& release);

// Confirms each key `stream` reserved and releases each key it released, at its version.
// Both are idempotent and versioned, so applying a stream twice, or an old one late, is harmless.
// Returns how many reserved keys another owner holds (which the caller reports). Throws Error from
// the store.
int ApplyKeyFacts(ReservationStore& reservations, const Stream& stream);

}  // namespace wow::core
