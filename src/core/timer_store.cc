#include "wow/timer_store.h"

#include <nlohmann/json.hpp>
#include <ostream>

#include "wow/error.h"

namespace wow {

std::string_view TimerStateName(TimerState state) {
  switch (state) {
    case TimerState::kPending:
      return "PENDING";
    case TimerState::kFiring:
      return "FIRING";
    case TimerState::kParked:
      return "PARKED";
  }
  return "UNKNOWN";
}

std::ostream& operator<<(std::ostream& out, TimerState state) {
  return out << TimerStateName(state);
}

void ValidateTimerOwner(const AggregateRef& owner, std::string_view context) {
  ValidateRef(owner);
  Require(owner.context == context, [&] {
    return "timer owner " + ToString(owner) + " is not of this store's context " +
           std::string(context);
  });
}

void ValidateTimerKey(const AggregateRef& owner, std::string_view key, std::string_view context) {
  ValidateTimerOwner(owner, context);
  Require(!key.empty(), [&] { return "timer key of " + ToString(owner) + " is empty"; });
}

void ValidateTimer(const Timer& t, std::string_view context, int partitions) {
  ValidateTimerKey(t.owner, t.key, context);
  const std::string what = "timer \"" + t.key + "\" of " + ToString(t.owner);
  ValidatePartition(t.partition, partitions);
  Require(t.partition == PartitionOf(t.owner.tenant_id, t.owner.id, partitions),
          [&] { return what + " is not in its owner's partition"; });
  ValidateVersion(t.version, "timer version");
  Require(!t.timer_id.empty(), [&] { return what + " has no timer id"; });
  ValidateRef(t.target);
  Require(!t.command_type.empty(), [&] { return what + " has no command type"; });
  Require(nlohmann::json::accept(t.body), [&] { return what + " has a body that is not JSON"; });
  Require(t.rule.max_attempts >= 1, [&] { return what + " allows fewer than 1 attempt"; });
  Require(t.attempt >= 0, [&] { return what + " has a negative attempt"; });
  ValidateVersion(t.parked_version, "timer parked version");
  Require(t.parked_version == kUnversioned || t.state == TimerState::kParked,
          [&] { return what + " has a parked version but is not PARKED"; });
}

void ValidateSettle(const std::vector<TimerChange>& changes, std::string_view context,
                    int partitions) {
  for (const TimerChange& change : changes) {
    ValidateTimer(change.loaded, context, partitions);
    Require(change.kind != TimerChange::Kind::kRearm || change.loaded.state == TimerState::kParked,
            [&] {
              return "only a PARKED timer can be re-armed; timer \"" + change.loaded.key +
                     "\" of " + ToString(change.loaded.owner) + " was loaded " +
                     std::string(TimerStateName(change.loaded.state));
            });
    ValidateVersion(change.target_version, "timer park's target version");
  }
}

}  // namespace wow
