#include "core/key_facts.h"

#include <spdlog/spdlog.h>

#include <set>
#include <utility>

#include "wow/event_log.h"
#include "wow/incidents.h"

namespace wow::core {
namespace {

using ScopedKey = std::pair<ReservationScope, std::string>;

// The keys that streams of `stream`'s aggregate after it, in `log`, reserved or released.
std::set<ScopedKey> KeysOfLaterFacts(EventLog& log, const Stream& stream) {
  std::set<ScopedKey> keys;
  for (const Stream& later : log.Read(stream.ref, stream.version + 1, kAnyVersion)) {
    for (const auto* facts : {&later.reserved, &later.released}) {
      for (const KeyFact& fact : *facts) {
        keys.emplace(DecideScope::ScopeOf(later.ref, fact.ns, fact.tenancy), fact.key);
      }
    }
  }
  return keys;
}

}  // namespace

int ApplyKeyFacts(ReservationStore& reservations, EventLog& log, const Stream& stream,
                  KeyFactsOrigin origin) {
  if (stream.reserved.empty() && stream.released.empty()) return 0;
  // A fact of the log applied late is superseded by a later fact on the same key: applying it
  // could confirm, then release, a key the owner reserved again since (its live pending
  // reservation), and let another aggregate take it. The later fact decides the key.
  std::optional<std::set<ScopedKey>> later;
  if (origin == KeyFactsOrigin::kFromLog) later = KeysOfLaterFacts(log, stream);
  const auto superseded = [&](const ReservationScope& scope, const std::string& key) {
    return later && later->contains({scope, key});
  };
  return VisitKeyFacts(
      stream,
      [&](const ReservationScope& scope, const std::string& key) {
        if (superseded(scope, key)) return true;
        if (reservations.Confirm(scope, key, stream.ref, stream.version)) return true;
        if (!later) later = KeysOfLaterFacts(log, stream);
        if (superseded(scope, key)) return true;  // appended meanwhile by another node
        const std::optional<Reservation> holder = reservations.Find(scope, key);
        ReportKeyIncident({scope, key, stream.ref, stream.version,
                           holder ? std::optional(holder->owner) : std::nullopt});
        return false;
      },
      [&](const ReservationScope& scope, const std::string& key) {
        return superseded(scope, key) ||
               reservations.Release(scope, key, stream.ref, stream.version);
      });
}

}  // namespace wow::core
