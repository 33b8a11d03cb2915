// CommitSignal and TailWithBackoff: the blocking part of EventLog::Tail, shared by the backends.
//
// A log notifies its CommitSignal after each commit to a partition; a tail waiting on that
// partition wakes at once. Commits of other processes are found by polling: TailWithBackoff polls
// every TailPolicy::poll_interval while idle, doubling the wait after each empty poll up to
// max_poll_interval; a wake-up that finds nothing keeps the current backoff.
//
// Thread-safety: CommitSignal is safe for concurrent use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <vector>

#include "wow/stream.h"

namespace wow::store {

struct TailPolicy {
  std::chrono::milliseconds poll_interval{50};
  std::chrono::milliseconds max_poll_interval{1000};
};

class CommitSignal {
 public:
  // REQUIRES: partitions >= 1.
  explicit CommitSignal(int partitions);

  // A counter that grows with each Notify of `partition`.
  std::uint64_t Generation(int partition) const;

  // Wakes the tails waiting on `partition`.
  void Notify(int partition);

  // Waits until Generation(partition) != seen, `timeout` passes, or `stop` is requested.
  // Returns true when woken by a commit.
  bool WaitFor(int partition, std::uint64_t seen, std::chrono::milliseconds timeout,
               const std::stop_token& stop);

 private:
  // Each partition has its own, so a commit wakes only the tails of its partition.
  struct Slot {
    mutable std::mutex mutex;
    std::condition_variable_any changed;
    std::uint64_t generation = 0;
  };
  Slot& SlotOf(int partition) const;

  const std::unique_ptr<Slot[]> slots_;
  const size_t partitions_;
};

// Calls read_after() until it returns entries, `max_wait` passes, or `stop` is requested, waiting
// between calls as the policy says; returns the last result.
std::vector<Entry> TailWithBackoff(CommitSignal& signal, int partition,
                                   std::chrono::milliseconds max_wait, const std::stop_token& stop,
                                   const TailPolicy& policy,
                                   const std::function<std::vector<Entry>()>& read_after);

}  // namespace wow::store
