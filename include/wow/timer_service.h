// TimerService: fires the due timers of the partitions this node leases (DESIGN §7).
//
// One pass (FireDue) takes the lease of each partition it can (renewing it a third of the way
// through lease_ttl), reads the timers due by the clock,
// and for each: claims it (FIRING until now + claim_ttl, so a timer whose node dies is due again
// by itself), sends its command through the CommandProcessor with the request id
// "timer:<timer_id>:<attempt>" (a timer fired again after a lost claim is a duplicate, not a
// second command), then settles it:
//   accepted, duplicate, no-op        done: the timer is deleted;
//   rejected, or a command the        under rule "retry" with attempts left: due again after
//   processor refuses (bad input)     backoff_ms * 2^attempt (at most max_backoff_ms);
//                                     else parked on its target, with the target's version
//                                     that rejected it (the timer subscription re-arms it when
//                                     a later stream of the target's aggregate arrives);
//   unknown outcome, or a failure     left claimed: due again when the claim expires.
// A timer another node claimed or changed since it was read is skipped (Settle applies nothing).
//
// A timer whose target is of another bounded context fires through the processor of that context
// given to Route. With none, it is parked at once (retrying cannot help), counted in
// Stats().unroutable and logged as an error naming the context: it stays parked, since the
// target's changes are in another context's log, which this service's timer subscription does
// not read.
//
// Give it the node name of this process's SubscriptionRunner (runner.node()): a partition's lease
// is one per node, shared by everything the node runs on it. It never gives a lease up; the
// runner does, or the lease expires.
//
// Thread-safety: FireDue, Start and Stop are safe for concurrent use; do not mix FireDue with a
// started service in tests.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "wow/command_processor.h"
#include "wow/event_log.h"
#include "wow/timer_store.h"

namespace wow {

struct TimerServiceOptions {
  std::string node;  // this node's name in the leases; empty: a fresh id
  std::chrono::milliseconds lease_ttl{10'000};
  std::chrono::milliseconds claim_ttl{30'000};   // how long a fired timer stays claimed
  std::chrono::milliseconds poll_interval{100};  // between passes of a started service
  int batch = 64;                                // due timers read per pass
};

class TimerService {
 public:
  // Fires the timers of `timers`, which the timer subscription fills from `log` (created), with
  // `processor`, judging due times by `clock`. Throws Error(kInvalidArgument) for a null
  // argument, a ttl or interval <= 0 or a batch < 1.
  TimerService(std::shared_ptr<EventLog> log, std::shared_ptr<TimerStore> timers,
               std::shared_ptr<CommandProcessor> processor, std::shared_ptr<const Clock> clock,
               TimerServiceOptions options = {});
  ~TimerService();  // Stop()

  TimerService(const TimerService&) = delete;
  TimerService& operator=(const TimerService&) = delete;

  // Fires the timers whose target is of `processor`'s context through it. Throws
  // Error(kInvalidArgument) for a null processor or one of this service's own context. REQUIRES:
  // before Start and FireDue.
  void Route(std::shared_ptr<CommandProcessor> processor);

  // What the service did since it was made.
  struct Stats {
    std::uint64_t fired = 0;       // commands sent
    std::uint64_t parked = 0;      // timers parked (refused for good)
    std::uint64_t unroutable = 0;  // timers parked since no processor of their target's context
  };
  Stats stats() const;

  // One pass on the calling thread (see above); returns how many timers it fired (their commands
  // sent, whatever came of them). Throws Error when a store fails before any timer is fired.
  int FireDue();

  // Starts a thread that runs a pass every poll_interval; a pass that fails is logged and tried
  // again at the next. REQUIRES: not started.
  void Start();
  // Stops the thread after the pass in hand. Idempotent.
  void Stop();

  const std::string& node() const { return options_.node; }

 private:
  // A partition's lease as this service last took it.
  struct PartitionLease {
    bool held = false;
    EpochMillis renew_at = 0;  // by the clock
  };

  // The partitions whose lease this node holds, taking or renewing those due (a third of
  // lease_ttl after the last take: a pass does not write a lease every time).
  std::set<int> Leased();
  // Claims, fires and settles `timer`; true when its command was sent.
  bool Fire(const Timer& timer);

  std::shared_ptr<EventLog> log_;
  std::shared_ptr<TimerStore> timers_;
  // The processor of `context`, or null when this node has none.
  CommandProcessor* ProcessorFor(const std::string& context) const;

  std::shared_ptr<CommandProcessor> processor_;
  std::vector<std::shared_ptr<CommandProcessor>> routes_;  // other contexts' processors
  std::shared_ptr<const Clock> clock_;
  TimerServiceOptions options_;
  std::atomic<std::uint64_t> fired_{0}, parked_{0}, unroutable_{0};
  std::mutex leases_mutex_;
  std::vector<PartitionLease> leases_;  // by partition; guarded by leases_mutex_
  std::jthread thread_;
};

}  // namespace wow
