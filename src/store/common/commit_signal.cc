#include "store/common/commit_signal.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace wow::store {

CommitSignal::CommitSignal(int partitions)
    : slots_(std::make_unique<Slot[]>(static_cast<size_t>(std::max(partitions, 1)))),
      partitions_(static_cast<size_t>(std::max(partitions, 1))) {}

CommitSignal::Slot& CommitSignal::SlotOf(int partition) const {
  if (partition < 0 || static_cast<size_t>(partition) >= partitions_) {
    throw std::out_of_range("commit signal has no partition " + std::to_string(partition));
  }
  return slots_[static_cast<size_t>(partition)];
}

std::uint64_t CommitSignal::Generation(int partition) const {
  Slot& slot = SlotOf(partition);
  std::lock_guard lock(slot.mutex);
  return slot.generation;
}

void CommitSignal::Notify(int partition) {
  Slot& slot = SlotOf(partition);
  {
    std::lock_guard lock(slot.mutex);
    ++slot.generation;
  }
  slot.changed.notify_all();
}

bool CommitSignal::WaitFor(int partition, std::uint64_t seen, std::chrono::milliseconds timeout,
                           const std::stop_token& stop) {
  Slot& slot = SlotOf(partition);
  std::unique_lock lock(slot.mutex);
  return slot.changed.wait_for(lock, stop, timeout, [&] { return slot.generation != seen; });
}

std::vector<Entry> TailWithBackoff(CommitSignal& signal, int partition,
                                   std::chrono::milliseconds max_wait, const std::stop_token& stop,
                                   const TailPolicy& policy,
                                   const std::function<std::vector<Entry>()>& read_after) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + max_wait;
  auto interval = policy.poll_interval;
  while (true) {
    const std::uint64_t seen = signal.Generation(partition);
    std::vector<Entry> entries = read_after();
    const auto now = Clock::now();
    if (!entries.empty() || stop.stop_requested() || now >= deadline) return entries;
    // Rounded up: a remainder under a millisecond truncated to 0 would read again and again
    // without waiting until the deadline passed.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    const bool woken = signal.WaitFor(partition, seen, std::min(interval, left), stop);
    if (!woken) interval = std::min(interval * 2, policy.max_poll_interval);
  }
}

}  // namespace wow::store
