#include "wow/timer_store.h"

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

}  // namespace wow
