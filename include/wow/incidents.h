// Incidents a service must not let pass silently: key incidents (a confirmation that found
// another owner holding the key it confirms) and data loss (a store found its data damaged).
//
// The runtime appends a decision's stream only while its reserved keys are surely its own, so a
// confirmation never finds another owner unless something broke that promise (a process paused
// past its reservations' time to live, a store changed by hand, a bug). When one does, two
// aggregates may believe they hold one key: the framework never lets that pass silently. Each
// incident is logged at error level, naming the key and both owners, and counted; a service
// exports the count as a metric and reports itself unhealthy while it is above zero.
//
// Data loss: a store that finds a stream it reads damaged (a checksum that does not match, a row
// it cannot decode) throws Error(kDataLoss) naming it, and reports it here, counted; the error
// carries the message, so nothing is logged here. A service exports the count as a metric and
// reports itself unhealthy while it is above zero: what it read cannot be trusted.
//
// Thread-safety: the functions are safe for concurrent use; the counts and the last incidents are
// process-wide.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "wow/model.h"
#include "wow/reservation_store.h"

namespace wow {

struct KeyIncident {
  ReservationScope scope;
  std::string key;
  AggregateRef claimant;               // the aggregate whose committed stream reserved the key
  Version version = kUnversioned;      // that stream's version
  std::optional<AggregateRef> holder;  // who holds the key instead, when it could be read
};

// Logs `incident` at error level and counts it.
void ReportKeyIncident(const KeyIncident& incident);

// How many incidents this process reported.
std::uint64_t KeyIncidentCount();

// The last incident this process reported, or nullopt.
std::optional<KeyIncident> LastKeyIncident();

// "key \"k\" of <scope>: confirmed by <claimant> at version v, held by <holder>".
std::string Describe(const KeyIncident& incident);

// Counts the damage `description` says was found (it names the file and what is damaged).
void ReportDataLoss(const std::string& description);

// How many times this process found damage.
std::uint64_t DataLossCount();

// The description of the last damage this process found, or nullopt.
std::optional<std::string> LastDataLoss();

}  // namespace wow
