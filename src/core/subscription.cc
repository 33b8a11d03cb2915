#include "wow/subscription.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "core/background_thread.h"
#include "core/key_facts.h"
#include "wow/error.h"

namespace wow {
namespace {

class ReservationSubscription final : public Subscription {
 public:
  ReservationSubscription(std::shared_ptr<ReservationStore> reservations,
                          std::shared_ptr<EventLog> log)
      : reservations_(std::move(reservations)), log_(std::move(log)) {
    Require(reservations_ != nullptr && log_ != nullptr,
            "the reservation subscription needs its reservation store and its log");
  }
  const std::string& name() const override { return name_; }
  void Handle(const Entry& entry) override {
    core::ApplyKeyFacts(*reservations_, *log_, entry.stream, core::KeyFactsOrigin::kFromLog);
  }

 private:
  const std::string name_ = "wow.reservations";
  std::shared_ptr<ReservationStore> reservations_;
  std::shared_ptr<EventLog> log_;
};

class TimerSubscription final : public Subscription {
 public:
  TimerSubscription(std::shared_ptr<TimerStore> timers, int partitions)
      : timers_(std::move(timers)), partitions_(partitions) {
    Require(timers_ != nullptr, "the timer subscription needs a store");
  }
  const std::string& name() const override { return name_; }
  void Handle(const Entry& entry) override {
    const Stream& stream = entry.stream;
    for (const TimerFact& fact : stream.timers) {
      if (fact.kind == TimerFact::Kind::kCancel) {
        timers_->Cancel(stream.ref, fact.key, stream.version);
        continue;
      }
      Timer timer;
      timer.owner = stream.ref;
      timer.key = fact.key;
      timer.partition = PartitionOf(stream.ref.tenant_id, stream.ref.id, partitions_);
      timer.timer_id = fact.timer_id;
      timer.version = stream.version;
      timer.due_at = fact.due_at;
      timer.target = fact.target;
      timer.command_type = fact.command_type;
      timer.body = fact.body;
      timer.rule = fact.rule;
      timers_->Put(timer);
    }
    // The stream changed its aggregate: the timers parked on it are due again at once, but for
    // those an aggregate later than this stream refused (a late stream of a partition read behind
    // the others: firing again would meet the same refusal).
    std::vector<TimerChange> rearm;
    for (const Timer& parked : timers_->Parked(stream.ref)) {
      if (parked.parked_version >= stream.version) continue;
      rearm.push_back({TimerChange::Kind::kRearm, parked, stream.time});
    }
    if (!rearm.empty()) timers_->Settle(rearm);
  }

 private:
  const std::string name_{kTimerSubscriptionName};
  std::shared_ptr<TimerStore> timers_;
  int partitions_;
};

}  // namespace

std::shared_ptr<Subscription> NewReservationSubscription(
    std::shared_ptr<ReservationStore> reservations, std::shared_ptr<EventLog> log) {
  return std::make_shared<ReservationSubscription>(std::move(reservations), std::move(log));
}

std::shared_ptr<Subscription> NewTimerSubscription(std::shared_ptr<TimerStore> timers,
                                                   int partitions) {
  return std::make_shared<TimerSubscription>(std::move(timers), partitions);
}

SubscriptionRunner::SubscriptionRunner(std::shared_ptr<EventLog> log,
                                       std::vector<std::shared_ptr<Subscription>> subscriptions,
                                       SubscriptionRunnerOptions options)
    : log_(std::move(log)), subscriptions_(std::move(subscriptions)), options_(std::move(options)) {
  Require(log_ != nullptr, "a subscription runner needs a log");
  Require(!subscriptions_.empty(), "a subscription runner needs a subscription");
  Require(options_.batch > 0, "the runner's batch must be positive");
  Require(options_.lease_ttl.count() > 0, "the runner's lease ttl must be positive");
  Require(options_.checkpoint_interval.count() >= 0,
          "the runner's checkpoint interval must not be negative");
  Require(options_.pass_interval.count() >= 0, "the runner's pass interval must not be negative");
  if (options_.node.empty()) options_.node = NewId();
}

SubscriptionRunner::~SubscriptionRunner() { Stop(); }

void SubscriptionRunner::Start() {
  Require(threads_.empty(), "the subscription runner is started already");
  for (int p = 0; p < log_->partitions(); ++p) {
    threads_.push_back(
        core::StartBackgroundThread([this, p](std::stop_token stop) { Run(p, stop); }));
  }
}

void SubscriptionRunner::Stop() {
  for (auto& thread : threads_) thread.request_stop();
  threads_.clear();  // joins
}

int SubscriptionRunner::CatchUp(const std::function<void(int handled)>& progress) {
  int handled = 0;
  for (int p = 0; p < log_->partitions(); ++p) {
    for (int n; (n = Pump(p, std::chrono::milliseconds(0), {}, nullptr)) > 0;) {
      handled += n;
      if (progress) progress(handled);
    }
  }
  return handled;
}

int SubscriptionRunner::Pump(int partition, std::chrono::milliseconds wait, std::stop_token stop,
                             PartitionState* state) {
  using SteadyClock = std::chrono::steady_clock;
  PartitionState once;  // CatchUp's: everything read and committed in this pass
  PartitionState& s = state != nullptr ? *state : once;
  // The lease is renewed once a third of its time to live has passed, not on every pass.
  if (SteadyClock::now() >= s.renew_lease_at) {
    if (!log_->AcquireLease(partition, options_.node, options_.lease_ttl)) {
      CommitCheckpoints(partition, s);  // what was handled under the lease that ended
      s.delivered.clear();              // another node may move them on: read them again
      return 0;
    }
    s.renew_lease_at = SteadyClock::now() + options_.lease_ttl / 3;
  }
  if (s.delivered.empty()) {
    for (const auto& subscription : subscriptions_) {
      s.delivered.push_back(log_->Checkpoint(partition, subscription->name()));
    }
    s.committed = s.delivered;
  }
  if (state != nullptr && s.delivered != s.committed) {
    // Handled entries wait for their commit: read no longer than until it is due, so that an idle
    // partition commits its last checkpoints within checkpoint_interval.
    wait = std::min(
        wait, std::max(std::chrono::milliseconds(0), std::chrono::ceil<std::chrono::milliseconds>(
                                                         s.commit_at - SteadyClock::now())));
  }
  const Sequence from = *std::min_element(s.delivered.begin(), s.delivered.end());
  const std::vector<Entry> entries = wait.count() > 0
                                         ? log_->Tail(partition, from, options_.batch, wait, stop)
                                         : log_->ReadAfter(partition, from, options_.batch);
  for (size_t i = 0; i < subscriptions_.size(); ++i) {
    try {
      for (const Entry& entry : entries) {
        if (entry.position.sequence <= s.delivered[i]) continue;
        subscriptions_[i]->Handle(entry);
        s.delivered[i] = entry.position.sequence;
      }
    } catch (...) {
      CommitCheckpoints(partition, s);
      throw;
    }
  }
  if (state == nullptr || options_.checkpoint_interval.count() == 0 ||
      SteadyClock::now() >= s.commit_at) {
    CommitCheckpoints(partition, s);
    s.commit_at = SteadyClock::now() + options_.checkpoint_interval;
  }
  return static_cast<int>(entries.size());
}

bool SubscriptionRunner::WaitUntilCaughtUp(Position position, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Require(position.partition >= 0 && position.partition < log_->partitions(), [&] {
    return "partition " + std::to_string(position.partition) + " is not in the log's " +
           std::to_string(log_->partitions());
  });
  std::vector<Sequence> heads(static_cast<size_t>(log_->partitions()), 0);
  heads[static_cast<size_t>(position.partition)] = position.sequence;
  return WaitForCheckpoints(*log_, Names(), heads, deadline);
}

bool SubscriptionRunner::WaitUntilCaughtUp(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<Sequence> heads;
  for (int p = 0; p < log_->partitions(); ++p) heads.push_back(log_->Head(p));
  return WaitForCheckpoints(*log_, Names(), heads, deadline);
}

std::vector<std::string> SubscriptionRunner::Names() const {
  std::vector<std::string> names;
  for (const auto& subscription : subscriptions_) names.push_back(subscription->name());
  return names;
}

bool WaitForCheckpoints(EventLog& log, const std::vector<std::string>& subscriptions,
                        const std::vector<Sequence>& heads,
                        std::chrono::steady_clock::time_point deadline) {
  size_t p = 0;  // the first partition not known to be caught up
  for (;;) {
    for (; p < heads.size(); ++p) {
      const bool caught_up =
          heads[p] == 0 ||
          std::all_of(subscriptions.begin(), subscriptions.end(), [&](const std::string& name) {
            return log.Checkpoint(static_cast<int>(p), name) >= heads[p];
          });
      if (!caught_up) break;
    }
    if (p == heads.size()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void SubscriptionRunner::CommitCheckpoints(int partition, PartitionState& state) {
  for (size_t i = 0; i < state.delivered.size(); ++i) {
    if (state.delivered[i] > state.committed[i]) {
      log_->CommitCheckpoint(partition, subscriptions_[i]->name(), state.delivered[i]);
      state.committed[i] = state.delivered[i];
    }
  }
}

void SubscriptionRunner::Run(int partition, std::stop_token stop) {
  const auto wait = std::max(std::chrono::milliseconds(1), options_.lease_ttl / 3);
  PartitionState state;
  while (!stop.stop_requested()) {
    try {
      const auto started = std::chrono::steady_clock::now();
      const int handled = Pump(partition, wait, stop, &state);
      if (handled == 0 && !stop.stop_requested()) {
        // Not leased here or idle: Tail already waited when leased; otherwise wait for the lease.
        if (state.delivered.empty()) core::SleepFor(wait, stop);
      } else if (handled < options_.batch) {
        // Caught up: let a few commits gather before the next pass rather than wake for each.
        core::SleepFor(std::chrono::duration_cast<std::chrono::milliseconds>(
                           started + options_.pass_interval - std::chrono::steady_clock::now()),
                       stop);
      }
    } catch (const std::exception& e) {
      spdlog::warn("subscription delivery on partition {} failed; retrying in {} ms: {}", partition,
                   options_.retry_delay.count(), e.what());
      state.renew_lease_at = {};  // ask for the lease again before the next pass
      core::SleepFor(options_.retry_delay, stop);
    }
  }
  try {
    CommitCheckpoints(partition, state);
    log_->ReleaseLease(partition, options_.node);
  } catch (const std::exception& e) {
    spdlog::warn("committing the checkpoints and releasing the lease of partition {} failed: {}",
                 partition, e.what());
  }
}

}  // namespace wow
