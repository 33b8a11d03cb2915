// The memory store set's log and reservation store, made together (private): both over one key
// table (key_table.h), so that the log's append confirms and releases its stream's keys in it
// while it holds the log's lock and the table's, after checking that the stream's attempt still
// holds each key it reserved (StoreSet::appends_confirm_keys), as the SQLite log does in its
// transaction. The processor then confirms nothing after the append and no reservation
// subscription runs. The public NewMemoryEventLog and NewMemoryReservationStore stay apart.
//
// Thread-safety: the stores are thread-safe. The log takes the table's mutex after its own; the
// reservation store takes only the table's.
#pragma once

#include <memory>
#include <string_view>

#include "store/memory/key_table.h"
#include "wow/event_log.h"
#include "wow/model.h"
#include "wow/reservation_store.h"

namespace wow::memory {

struct LogAndReservations {
  std::shared_ptr<EventLog> log;
  std::shared_ptr<ReservationStore> reservations;
};

// A memory log of `context` and a memory reservation store over one new key table, the log's
// appends confirming their keys in it. `clock` judges leases and expiry. Throws
// Error(kInvalidArgument) for a bad context or a null clock.
LogAndReservations NewLogAndReservations(std::string_view context,
                                         std::shared_ptr<const Clock> clock);

// A memory reservation store over `keys` (shared with a log: NewLogAndReservations).
std::unique_ptr<ReservationStore> NewReservationStoreOn(std::shared_ptr<SharedKeyTable> keys,
                                                        std::shared_ptr<const Clock> clock);

}  // namespace wow::memory
