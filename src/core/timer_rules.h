// The timer rules every TimerStore backend shares (DESIGN §5.3) beyond the checks of
// wow/timer_store.h: the order in which Due and Parked return timers.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <vector>

namespace wow::core {

// Whether `a` comes before `b` in the order Due and Parked return timers: by due_at, then by
// timer_id. T is a Timer, or a backend's row that holds the two fields by those names.
template <typename T>
bool DueFirst(const T& a, const T& b) {
  return std::tie(a.due_at, a.timer_id) < std::tie(b.due_at, b.timer_id);
}

// Orders the earliest `limit` of `timers` first by DueFirst and drops the rest. REQUIRES: limit >
// 0.
template <typename T>
void KeepEarliestDue(std::vector<T>& timers, int limit) {
  const auto end = timers.begin() + std::min<std::ptrdiff_t>(limit, std::ssize(timers));
  std::partial_sort(timers.begin(), end, timers.end(), DueFirst<T>);
  timers.erase(end, timers.end());
}

}  // namespace wow::core
