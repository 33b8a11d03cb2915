// Applying a committed stream's key facts to a ReservationStore: the eager path after an append
// (CommandProcessor) and the reservation subscription share it, so both agree.
#pragma once

#include "wow/reservation_store.h"
#include "wow/stream.h"

namespace wow::core {

// Confirms each key `stream` reserved and releases each key it released, at its version.
// Both are idempotent and versioned, so applying a stream twice, or an old one late, is harmless.
// Returns how many reserved keys another owner holds (which the caller reports). Throws Error from
// the store.
int ApplyKeyFacts(ReservationStore& reservations, const Stream& stream);

}  // namespace wow::core
