#include "wow/node.h"

#include "wow/error.h"

namespace wow {

Node::Node(StoreSet stores, NodeOptions options)
    : stores_(std::move(stores)), options_(std::move(options)) {
  if (options_.name.empty()) options_.name = NewId();
  options_.subscriptions.node = options_.name;
  options_.timers.node = options_.name;
  processor_ = std::make_shared<CommandProcessor>(stores_, options_.processor);
}

Node::~Node() { Stop(); }

void Node::Register(std::shared_ptr<const AggregateBehavior> type) {
  Require(!started_, "register aggregate types before the node starts");
  processor_->Register(std::move(type));
}

void Node::AddSubscription(std::shared_ptr<Subscription> subscription) {
  Require(!started_, "add subscriptions before the node starts");
  Require(subscription != nullptr, "a node cannot run a null subscription");
  subscriptions_.push_back(std::move(subscription));
}

void Node::RouteTimers(std::shared_ptr<CommandProcessor> processor) {
  Require(!started_, "timers are routed before the node starts");
  Require(processor != nullptr, "a timer route needs a processor");
  timer_routes_.push_back(std::move(processor));
}

TimerService::Stats Node::timer_stats() const {
  return timer_service_ ? timer_service_->stats() : TimerService::Stats{};
}

void Node::Start() {
  Require(!started_, "the node is started already");
  started_ = true;
  if (!options_.run_subscriptions) return;
  std::vector<std::shared_ptr<Subscription>> subscriptions{
      NewTimerSubscription(stores_.timers(), stores_.partitions())};
  // Where the appends confirm their keys themselves, the reservation subscription would have
  // nothing to repair.
  if (!stores_.appends_confirm_keys()) {
    subscriptions.push_back(NewReservationSubscription(stores_.reservations(), stores_.log()));
  }
  subscriptions.insert(subscriptions.end(), subscriptions_.begin(), subscriptions_.end());
  runner_ = std::make_unique<SubscriptionRunner>(stores_.log(), std::move(subscriptions),
                                                 options_.subscriptions);
  runner_->Start();
  timer_service_ = std::make_unique<TimerService>(stores_.log(), stores_.timers(), processor_,
                                                  stores_.clock(), options_.timers);
  for (const auto& route : timer_routes_) timer_service_->Route(route);
  timer_service_->Start();
}

bool Node::WaitUntilCaughtUp(std::chrono::milliseconds timeout) {
  Require(runner_ != nullptr, "the node runs no subscriptions to wait for");
  return runner_->WaitUntilCaughtUp(timeout);
}

void Node::Stop() {
  if (timer_service_) timer_service_->Stop();
  if (runner_) runner_->Stop();
}

}  // namespace wow
