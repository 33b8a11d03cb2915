#include "core/key_facts.h"

#include "wow/decide_scope.h"

namespace wow::core {

int ApplyKeyFacts(ReservationStore& reservations, const Stream& stream) {
  int lost = 0;
  for (const KeyFact& fact : stream.reserved) {
    if (!reservations.Confirm(DecideScope::ScopeOf(stream.ref, fact.ns, fact.tenancy), fact.key,
                              stream.ref, stream.version)) {
      ++lost;
    }
  }
  for (const KeyFact& fact : stream.released) {
    reservations.Release(DecideScope::ScopeOf(stream.ref, fact.ns, fact.tenancy), fact.key,
                         stream.ref, stream.version);
  }
  return lost;
}

}  // namespace wow::core
