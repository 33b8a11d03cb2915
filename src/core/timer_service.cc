#include "wow/timer_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "core/background_thread.h"
#include "wow/error.h"

namespace wow {
namespace {

// How a fired timer's command ended, for its settlement.
enum class Outcome {
  kDone,     // the command was taken (accepted, duplicate, no-op)
  kRefused,  // rejected, or refused as bad input: retry per the rule, or park
  kOpen,     // unknown, or the infrastructure failed: leave it claimed
};

Outcome OutcomeOf(const CommandResult& result) {
  switch (result.kind) {
    case CommandResult::Kind::kAccepted:
    case CommandResult::Kind::kDuplicate:
    case CommandResult::Kind::kNoOp:
      return Outcome::kDone;
    case CommandResult::Kind::kRejected:
      return Outcome::kRefused;
    case CommandResult::Kind::kUnknown:
      return Outcome::kOpen;
  }
  return Outcome::kOpen;
}

// The backoff before attempt `attempt` + 1 under `rule`: backoff_ms doubled per attempt made,
// at most max_backoff_ms.
std::int64_t BackoffMillis(const TimerRule& rule, int attempt) {
  std::int64_t backoff = std::max<std::int64_t>(rule.backoff_ms, 0);
  for (int i = 0; i < attempt && backoff < rule.max_backoff_ms; ++i) backoff *= 2;
  return std::min(backoff, std::max<std::int64_t>(rule.max_backoff_ms, 0));
}

}  // namespace

TimerService::TimerService(std::shared_ptr<EventLog> log, std::shared_ptr<TimerStore> timers,
                           std::shared_ptr<CommandProcessor> processor,
                           std::shared_ptr<const Clock> clock, TimerServiceOptions options)
    : log_(std::move(log)),
      timers_(std::move(timers)),
      processor_(std::move(processor)),
      clock_(std::move(clock)),
      options_(std::move(options)) {
  Require(log_ && timers_ && processor_ && clock_,
          "a timer service needs a log, a timer store, a command processor and a clock");
  Require(options_.lease_ttl.count() > 0 && options_.claim_ttl.count() > 0 &&
              options_.poll_interval.count() > 0,
          "a timer service's lease_ttl, claim_ttl and poll_interval must be positive");
  Require(options_.batch >= 1, "a timer service's batch must be at least 1");
  if (options_.node.empty()) options_.node = NewId();
}

TimerService::~TimerService() { Stop(); }

void TimerService::Route(std::shared_ptr<CommandProcessor> processor) {
  Require(processor != nullptr, "a timer route needs a processor");
  Require(processor->context() != log_->context(), [&] {
    return "context \"" + processor->context() + "\" is the timer service's own";
  });
  routes_.push_back(std::move(processor));
}

TimerService::Stats TimerService::stats() const {
  return {fired_.load(), parked_.load(), unroutable_.load()};
}

CommandProcessor* TimerService::ProcessorFor(const std::string& context) const {
  if (context == log_->context()) return processor_.get();
  for (const auto& route : routes_) {
    if (route->context() == context) return route.get();
  }
  return nullptr;
}

std::set<int> TimerService::Leased() {
  std::lock_guard lock(leases_mutex_);
  const int partitions = log_->partitions();
  leases_.resize(static_cast<size_t>(partitions));
  std::set<int> leased;
  const EpochMillis now = clock_->NowMillis();
  for (int p = 0; p < partitions; ++p) {
    PartitionLease& lease = leases_[static_cast<size_t>(p)];
    if (now >= lease.renew_at) {
      lease.held = log_->AcquireLease(p, options_.node, options_.lease_ttl);
      // Renewed a third of the way through; one not held is tried again at the next pass.
      lease.renew_at = lease.held ? now + options_.lease_ttl.count() / 3 : now;
    }
    if (lease.held) leased.insert(p);
  }
  return leased;
}

int TimerService::FireDue() {
  const std::set<int> leased = Leased();
  if (leased.empty()) return 0;
  int fired = 0;
  for (const Timer& timer : timers_->Due(leased, clock_->NowMillis(), options_.batch)) {
    if (Fire(timer)) ++fired;
  }
  return fired;
}

bool TimerService::Fire(const Timer& due) {
  const EpochMillis now = clock_->NowMillis();
  if (timers_->Settle({{TimerChange::Kind::kClaim, due, now + options_.claim_ttl.count()}}) != 1) {
    return false;  // another node claimed or changed it since it was read
  }
  Timer claimed = due;
  claimed.state = TimerState::kFiring;
  claimed.due_at = now + options_.claim_ttl.count();

  CommandProcessor* processor = ProcessorFor(due.target.context);
  if (processor == nullptr) {
    ++unroutable_;
    ++parked_;
    spdlog::error(
        "timer {} of {} targets {}, of context \"{}\", which no processor of this node serves: "
        "parked; give the node a processor of that context (TimerService::Route, Node::RouteTimers)",
        due.key, ToString(due.owner), ToString(due.target), due.target.context);
    timers_->Settle({{TimerChange::Kind::kPark, claimed, 0}});
    return false;
  }
  const std::string request_id = "timer:" + due.timer_id + ":" + std::to_string(due.attempt);
  Outcome outcome = Outcome::kOpen;
  std::string why;
  Version refused_at = kUnversioned;  // the target's version that rejected it, when known
  ++fired_;
  try {
    const CommandResult result = processor->Process(
        due.target, CommandMessage{due.command_type, nlohmann::json::parse(due.body)}, request_id);
    outcome = OutcomeOf(result);
    if (result.kind == CommandResult::Kind::kRejected) refused_at = result.version;
    why = result.code.empty() ? result.message : result.code + ": " + result.message;
  } catch (const Error& e) {
    outcome = e.code() == ErrorCode::kInvalidArgument ? Outcome::kRefused : Outcome::kOpen;
    why = e.what();
  } catch (const std::exception& e) {  // a decide function or the body's JSON
    outcome = Outcome::kRefused;
    why = e.what();
  }

  TimerChange change{TimerChange::Kind::kDone, claimed, 0};
  switch (outcome) {
    case Outcome::kDone:
      break;
    case Outcome::kOpen:
      spdlog::warn(
          "timer {} of {} fired {} with no known outcome; it fires again once its claim "
          "expires: {}",
          due.key, ToString(due.owner), due.command_type, why);
      return true;
    case Outcome::kRefused:
      if (due.rule.kind == TimerRule::Kind::kRetry && due.attempt + 1 < due.rule.max_attempts) {
        change.kind = TimerChange::Kind::kRetry;
        change.new_due_at = clock_->NowMillis() + BackoffMillis(due.rule, due.attempt);
      } else {
        change.kind = TimerChange::Kind::kPark;
        change.target_version = refused_at;
        ++parked_;
        spdlog::warn("timer {} of {} is parked on {} after {} attempt(s): {}", due.key,
                     ToString(due.owner), ToString(due.target), due.attempt + 1, why);
      }
      break;
  }
  timers_->Settle({change});  // none applied: a later fact replaced or cancelled the timer
  return true;
}

void TimerService::Start() {
  Require(!thread_.joinable(), "the timer service is started already");
  thread_ = core::StartBackgroundThread([this](std::stop_token stop) {
    while (!stop.stop_requested()) {
      try {
        FireDue();
      } catch (const std::exception& e) {
        spdlog::warn("a pass of the timer service failed; it runs again in {} ms: {}",
                     options_.poll_interval.count(), e.what());
      }
      core::SleepFor(options_.poll_interval, stop);
    }
  });
}

void TimerService::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

}  // namespace wow
