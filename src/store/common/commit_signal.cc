#include "store/common/commit_signal.h"

#include <algorithm>

namespace wow::store {

CommitSignal::CommitSignal(int partitions) : generations_(static_cast<size_t>(partitions), 0) {}

std::uint64_t CommitSignal::Generation(int partition) const {
  std::lock_guard lock(mutex_);
  return generations_.at(static_cast<size_t>(partition));
}

void CommitSignal::Notify(int partition) {
  {
    std::lock_guard lock(mutex_);
    ++generations_.at(static_cast<size_t>(partition));
  }
  changed_.notify_all();
}

bool CommitSignal::WaitFor(int partition, std::uint64_t seen, std::chrono::milliseconds timeout,
                           const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  const auto index = static_cast<size_t>(partition);
  return changed_.wait_for(lock, stop, timeout, [&] { return generations_[index] != seen; });
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
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    const bool woken = signal.WaitFor(partition, seen, std::min(interval, left), stop);
    if (!woken) interval = std::min(interval * 2, policy.max_poll_interval);
  }
}

}  // namespace wow::store
