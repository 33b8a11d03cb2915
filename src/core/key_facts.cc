#include "core/key_facts.h"

#include "wow/decide_scope.h"

namespace wow::core {

int VisitKeyFacts(const Stream& stream, const KeyFactAction& confirm,
                  const KeyFactAction& release) {
  int lost = 0;
  for (const KeyFact& fact : stream.reserved) {
    if (!confirm(DecideScope::ScopeOf(stream.ref, fact.ns, fact.tenancy), fact.key)) ++lost;
  }
  for (const KeyFact& fact : stream.released) {
    release(DecideScope::ScopeOf(stream.ref, fact.ns, fact.tenancy), fact.key);
  }
  return lost;
}

int ApplyKeyFacts(ReservationStore& reservations, const Stream& stream) {
  return VisitKeyFacts(
      stream,
      [&](const ReservationScope& scope, const std::string& key) {
        return reservations.Confirm(scope, key, stream.ref, stream.version);
      },
      [&](const ReservationScope& scope, const std::string& key) {
        return reservations.Release(scope, key, stream.ref, stream.version);
      });
}

}  // namespace wow::core
