#include "core/key_facts.h"

namespace wow::core {

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
