// Node: one process's share of a service, wired from a StoreSet: the CommandProcessor, the
// SubscriptionRunner (the timer subscription, the reservation subscription when the store set's
// appends leave keys to confirm, and the subscriptions a program adds) and the TimerService,
// started and stopped together in the right order.
//
//   wow::Node node(wow::OpenStores("sqlite:var/shop.db", "shop"));
//   node.Register(MyAggregateType());
//   node.Start();
//   node.processor().Process(ref, command);
//   node.Stop();  // also in ~Node
//
// Stop stops the timer service (no new command from a timer), then the subscriptions (their
// checkpoints committed); the processor finishes the commands queued on its workers when the node
// is destroyed, and the stores close after the last of their users.
//
// Thread-safety: Register, AddSubscription, Start and Stop from one thread; processor() is safe
// for concurrent use once started.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "wow/command_processor.h"
#include "wow/store_set.h"
#include "wow/subscription.h"
#include "wow/timer_service.h"

namespace wow {

struct NodeOptions {
  // This node's name in the partitions' leases; empty: a fresh id. Overrides the names in
  // `subscriptions` and `timers`.
  std::string name;
  CommandProcessorOptions processor;
  SubscriptionRunnerOptions subscriptions;
  TimerServiceOptions timers;
  // Whether Start runs the subscriptions and the timer service (a node that only processes
  // commands, beside nodes that run them, sets false).
  bool run_subscriptions = true;
};

class Node {
 public:
  // A node over `stores`. Throws Error(kInvalidArgument) for bad options (see the parts').
  explicit Node(StoreSet stores, NodeOptions options = {});
  ~Node();  // Stop()

  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Adds an aggregate type to the processor. REQUIRES: before Start.
  void Register(std::shared_ptr<const AggregateBehavior> type);

  // Adds a subscription (a projection, say) the node runs beside its own. REQUIRES: before Start.
  void AddSubscription(std::shared_ptr<Subscription> subscription);

  // Fires this node's timers whose target is of `processor`'s context through it (another
  // context's, such as another Node's shared_processor()); see TimerService::Route. REQUIRES:
  // before Start.
  void RouteTimers(std::shared_ptr<CommandProcessor> processor);

  // What the node's timer service did (zeros before Start).
  TimerService::Stats timer_stats() const;

  // Starts the subscriptions and the timer service (unless run_subscriptions is false).
  // REQUIRES: not started.
  void Start();

  // Stops the timer service, then the subscriptions. Idempotent.
  void Stop();

  // Waits until the node's subscriptions have handled every entry the log held at the call, or
  // `timeout` passes: true when they have, false at the deadline (SubscriptionRunner's).
  // REQUIRES: started, with run_subscriptions (else Error(kInvalidArgument)).
  bool WaitUntilCaughtUp(std::chrono::milliseconds timeout);

  CommandProcessor& processor() { return *processor_; }
  const std::shared_ptr<CommandProcessor>& shared_processor() const { return processor_; }
  const StoreSet& stores() const { return stores_; }
  const std::string& name() const { return options_.name; }

 private:
  StoreSet stores_;
  NodeOptions options_;
  std::shared_ptr<CommandProcessor> processor_;
  std::vector<std::shared_ptr<Subscription>> subscriptions_;
  std::vector<std::shared_ptr<CommandProcessor>> timer_routes_;
  std::unique_ptr<SubscriptionRunner> runner_;
  std::unique_ptr<TimerService> timer_service_;
  bool started_ = false;
};

}  // namespace wow
