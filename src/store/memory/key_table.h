// KeyTable (private): the reservations of keys in memory, a map of scopes, each a map of its keys
// in order, changed only by the rules of core/reservation_rules.h. A lookup compares the scope a
// few times and then only keys, without copying the scope or the key. The memory reservation store
// keeps its keys in one; a memory log made beside it (memory_stores.h) confirms and releases its
// streams' keys in the same one, inside the append.
//
// Thread-safety: none of its own. SharedKeyTable pairs a table with the mutex every user holds.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/reservation_rules.h"
#include "wow/reservation_store.h"

namespace wow::memory {

class KeyTable {
 public:
  // The reservation of `key` in `scope` as stored (an expired pending one included), or nullopt.
  std::optional<Reservation> Find(const ReservationScope& scope, const std::string& key) const;

  // Up to `limit` reservations of `scope` with keys after `after_key`, in key order.
  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) const;

  // Applies `op` to the key's reservation at `now` by the one copy of the rules, and returns the
  // rule's answer. REQUIRES: the arguments are valid (ValidateReserve and the like have passed).
  bool Apply(const ReservationScope& scope, const std::string& key, const core::ReservationOp& op,
             EpochMillis now);

 private:
  using Keys = std::map<std::string, Reservation, std::less<>>;

  // The keys of `scope`, or null when it has none.
  const Keys* KeysOf(const ReservationScope& scope) const;

  std::map<ReservationScope, Keys> scopes_;  // a scope without keys is erased
};

// A key table and the mutex that guards it, shared by the stores that use it.
struct SharedKeyTable {
  std::mutex mutex;
  KeyTable table;  // guarded by mutex
};

}  // namespace wow::memory
