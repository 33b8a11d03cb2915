// Subscriptions: named consumers of the log that see every committed entry of a partition, in
// sequence order, at least once; and the runner that feeds them.
//
// For each partition, the node holding the partition's lease reads from the subscription's
// checkpoint, hands each entry to the subscription, then commits the checkpoint. A Handle that
// throws stops the partition's delivery at that entry; the runner tries it again after a delay,
// so nothing is ever skipped. Handlers must be idempotent: after a crash, the entries after the
// last checkpoint are delivered again.
//
// Built in: the reservation subscription (confirms and releases the keys of every stream, so a
// process that stopped between an append and its confirmation loses no key) and the timer
// subscription (applies timer facts to the TimerStore; TimerService fires them).
//
// Thread-safety: a Subscription's Handle is called for one partition at a time per runner, but
// different partitions concurrently: implementations must be safe for concurrent use.
// SubscriptionRunner is safe for concurrent use.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "wow/event_log.h"
#include "wow/reservation_store.h"
#include "wow/timer_store.h"

namespace wow {

class Subscription {
 public:
  virtual ~Subscription() = default;
  // The name its checkpoints are kept under; stable across restarts.
  virtual const std::string& name() const = 0;
  // Handles one entry. Throwing makes the runner deliver this entry again later.
  virtual void Handle(const Entry& entry) = 0;
};

// Applies every stream's key facts to `reservations` (confirm at version, release at version). A
// confirmation that finds another owner is a key incident (wow/incidents.h) unless a later stream
// of the aggregate in `log` released the key (an old fact replayed).
std::shared_ptr<Subscription> NewReservationSubscription(
    std::shared_ptr<ReservationStore> reservations, std::shared_ptr<EventLog> log);

// Applies every stream's timer facts to `timers` (put or cancel at the stream's version) for a
// log of `partitions` partitions, and re-arms the timers parked on the stream's aggregate (due at
// the stream's time: the target changed, so their command may now be taken). A timer is re-armed
// only by a stream later than the target's version that refused it (Timer::parked_version), so a
// late, older stream of the target leaves it parked; a target in another context is not re-armed.
std::shared_ptr<Subscription> NewTimerSubscription(std::shared_ptr<TimerStore> timers,
                                                   int partitions);

struct SubscriptionRunnerOptions {
  std::string node;  // this node's name in the leases; empty: a fresh id
  std::chrono::milliseconds lease_ttl{10'000};
  std::chrono::milliseconds retry_delay{1'000};  // after a Handle or store failure
  int batch = 256;                               // entries read at a time
  // How often a started runner commits a partition's checkpoints while it delivers (0: after
  // every batch); a partition gone idle commits its last entries within this interval too.
  // Entries handled since the last commit are delivered again after a crash, so a longer
  // interval means fewer writes and more redelivery. Stop commits what was handled.
  std::chrono::milliseconds checkpoint_interval{200};
  // The least time between two passes over a partition that caught up with its log: commits
  // landing meanwhile are delivered together, one read for many. Delivery lags the log by up to
  // this much more; a pass that read a full batch is followed at once.
  std::chrono::milliseconds pass_interval{10};
};

// Waits until the checkpoint of each of `subscriptions` in each partition p of `log` has reached
// heads[p] (0 for a partition to pass over), or `deadline` passes, polling the log. Returns true
// when they have, false at the deadline. REQUIRES: heads has at most the log's partitions.
bool WaitForCheckpoints(EventLog& log, const std::vector<std::string>& subscriptions,
                        const std::vector<Sequence>& heads,
                        std::chrono::steady_clock::time_point deadline);

class SubscriptionRunner {
 public:
  // Feeds `subscriptions` from `log`, which must be created.
  SubscriptionRunner(std::shared_ptr<EventLog> log,
                     std::vector<std::shared_ptr<Subscription>> subscriptions,
                     SubscriptionRunnerOptions options = {});
  ~SubscriptionRunner();  // Stop()

  SubscriptionRunner(const SubscriptionRunner&) = delete;
  SubscriptionRunner& operator=(const SubscriptionRunner&) = delete;

  // Starts one thread per partition that, while this node holds the partition's lease, tails it
  // and delivers its entries. REQUIRES: not started.
  void Start();

  // Stops the threads after the entries in hand, and gives the leases up. Idempotent.
  void Stop();

  // On the calling thread, delivers every entry now in the log to every subscription, for the
  // partitions whose lease this node can take; returns how many entries were handled, calling
  // `progress` (when set) with that count so far after each batch read. Throws what a Handle
  // throws. For tests and tools; do not mix with Start.
  int CatchUp(const std::function<void(int handled)>& progress = {});

  // Waits until every subscription's checkpoint in `position`'s partition has reached
  // `position` (a command's CommandResult::position, say), or `timeout` passes. Returns true when
  // it has, false at the deadline. The checkpoints are read from the log, so they count whichever
  // node holds the lease; a started runner commits them within checkpoint_interval of handling.
  // REQUIRES: 0 <= position.partition < the log's partitions (else Error(kInvalidArgument)).
  bool WaitUntilCaughtUp(Position position, std::chrono::milliseconds timeout);

  // Waits until every subscription has reached the head every partition had at the call (its
  // committed entries then, all of them handled), or `timeout` passes. Returns true when it has,
  // false at the deadline.
  bool WaitUntilCaughtUp(std::chrono::milliseconds timeout);

  const std::string& node() const { return options_.node; }

 private:
  // What a started runner's thread knows of its partition between passes.
  struct PartitionState {
    std::chrono::steady_clock::time_point renew_lease_at;  // the lease is ours until then
    std::vector<Sequence> delivered;  // per subscription; empty until read from the log
    std::vector<Sequence> committed;  // per subscription: the checkpoints in the log
    std::chrono::steady_clock::time_point commit_at;  // when the next checkpoint commit is due
  };

  // One pass over `partition`: lease, read (waiting up to `wait`), deliver, commit the checkpoints
  // (when due). Returns the entries handled. Without `state` (CatchUp), everything is done now.
  int Pump(int partition, std::chrono::milliseconds wait, std::stop_token stop,
           PartitionState* state);
  // Commits the checkpoints of `state` that moved since their last commit.
  void CommitCheckpoints(int partition, PartitionState& state);
  void Run(int partition, std::stop_token stop);
  // The names of the subscriptions.
  std::vector<std::string> Names() const;

  std::shared_ptr<EventLog> log_;
  std::vector<std::shared_ptr<Subscription>> subscriptions_;
  SubscriptionRunnerOptions options_;
  std::vector<std::jthread> threads_;
};

}  // namespace wow
