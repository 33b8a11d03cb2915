// AggregateSpec: specifies an aggregate's behaviour in a GoogleTest test, with no database.
//
//   wow::testing::AggregateSpec<eshop::Named> spec(eshop::BrandType(),
//                                                 {"eshop-catalog", "brand", "t1", "b1"});
//   spec.GivenReservation(eshop::kBrandNames, "contoso")      // another brand holds it
//       .When(eshop::CreateBrand{"Contoso"})
//       .ExpectRejection("NAME_TAKEN");
//   EXPECT_FALSE(spec.Holds(eshop::kBrandNames, "contoso"));
//
// Commands run through the real CommandProcessor over the in-memory log and reservation store, so
// reservations are reserved, confirmed, released and abandoned exactly as in production. Time is a
// ManualClock (clock()). Timers too: ExpectTimerScheduled and ExpectTimerCancelled check what the
// last command set, and AdvanceTime moves the clock and fires the timers then due through the
// real timer subscription and TimerService, so their commands run against the spec's aggregate:
//
//   spec.When(accounts::RegisterAccount{"ada@example.com"})
//       .ExpectTimerScheduled("verification", spec.clock().NowMillis() + 86'400'000,
//                             spec.self(), accounts::ExpireUnverified{});
//   spec.AdvanceTime(std::chrono::hours(24)).ExpectEvents(accounts::AccountExpired{});
//
// Expectations report failures through GoogleTest (ADD_FAILURE) and return the spec, so they
// chain.
//
// Thread-safety: not thread-safe; one spec per test.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wow/aggregate.h"
#include "wow/command_processor.h"
#include "wow/event_log.h"
#include "wow/reservation_store.h"
#include "wow/subscription.h"
#include "wow/timer_service.h"
#include "wow/timer_store.h"

namespace wow::testing {

// Forwards to an aggregate type, starting from a given state instead of the empty one.
template <typename State>
class GivenStateType final : public AggregateBehavior {
 public:
  GivenStateType(std::shared_ptr<const AggregateBehavior> inner, State initial)
      : inner_(std::move(inner)), initial_(std::move(initial)) {}
  const std::string& name() const override { return inner_->name(); }
  std::unique_ptr<AggregateState> NewState() const override {
    return std::make_unique<TypedState<State>>(initial_);
  }
  void Apply(AggregateState& state, const EventRecord& event) const override {
    inner_->Apply(state, event);
  }
  bool Handles(std::string_view command_type) const override {
    return inner_->Handles(command_type);
  }
  Decision Decide(const AggregateState& state, const CommandMessage& command,
                  DecideScope& scope) const override {
    return inner_->Decide(state, command, scope);
  }
  const NamespaceTenancies& tenancies() const override { return inner_->tenancies(); }

 private:
  std::shared_ptr<const AggregateBehavior> inner_;
  State initial_;
};

template <typename State>
class AggregateSpec {
 public:
  // A spec of aggregate `self`, of `type`. REQUIRES: self.aggregate == type->name().
  AggregateSpec(std::shared_ptr<const AggregateType<State>> type, AggregateRef self)
      : type_(std::move(type)),
        self_(std::move(self)),
        clock_(std::make_shared<ManualClock>()),
        log_(NewMemoryEventLog(self_.context, clock_)),
        reservations_(NewMemoryReservationStore(clock_)),
        timers_(NewMemoryTimerStore(self_.context, 1)) {
    Require(self_.aggregate == type_->name(), [&] {
      return "the spec's aggregate " + ToString(self_) + " is not of type " + type_->name();
    });
    log_->Create(1);
  }

  // The aggregate's state before any event is `state` (instead of State{}).
  // REQUIRES: before any command.
  AggregateSpec& GivenState(State state) {
    Require(processor_ == nullptr, "GivenState must come before the first command");
    initial_ = std::move(state);
    return *this;
  }

  // The aggregate's history holds `events`, committed as one stream with no key facts.
  template <Message... Event>
  AggregateSpec& Given(const Event&... events) {
    const Decision decision = Decision::Events(events...);
    Stream stream;
    stream.ref = self_;
    stream.version = Processor().Load(self_).version + 1;
    stream.request_id = NewId();
    stream.events = decision.events();
    stream.time = clock_->NowMillis();
    const AppendResult result = log_->Append(stream);
    if (!result.appended()) ADD_FAILURE() << "Given events were not appended: " << result.reason();
    return *this;
  }

  // The aggregate ran `command`; the spec fails unless it was accepted.
  template <Message Command>
  AggregateSpec& GivenCommand(const Command& command) {
    const CommandResult result = Processor().Process(self_, CommandMessage::Of(command));
    if (result.kind != CommandResult::Kind::kAccepted) {
      ADD_FAILURE() << "given command " << Command::kType << " was " << KindName(result.kind) << " "
                    << result.code << ": " << result.message;
    }
    return *this;
  }

  // Another aggregate of this type and tenant holds `key` in `ns`, confirmed. The tenancy is the
  // one the type declared for `ns` (DecideScope::TenancyOf), as in the decide functions.
  AggregateSpec& GivenReservation(std::string_view ns, std::string_view key,
                                  std::optional<ReservationTenancy> tenancy = std::nullopt) {
    AggregateRef other = self_;
    other.id = "another-" + self_.id;
    return GivenReservation(ns, key, other, tenancy);
  }

  // `owner` holds `key` in `ns`, confirmed: an aggregate of another tenant, say, for a kSystem
  // key. REQUIRES: `owner` is in the spec's context.
  AggregateSpec& GivenReservation(std::string_view ns, std::string_view key,
                                  const AggregateRef& owner,
                                  std::optional<ReservationTenancy> tenancy = std::nullopt) {
    reservations_->Confirm(DecideScope::ScopeOf(owner, ns, TenancyOf(ns, tenancy)),
                           std::string(key), owner, 1);
    return *this;
  }

  // Sends `command` to the aggregate under test; the outcome is what the Expect calls check.
  template <Message Command>
  AggregateSpec& When(const Command& command, std::string request_id = {}) {
    thrown_.reset();
    const Version before = version();
    try {
      result_ = Processor().Process(self_, command, std::move(request_id));
    } catch (const std::exception& e) {
      result_.reset();
      thrown_ = e.what();
    }
    appended_ = {before, version()};
    return *this;
  }

  // Moves the clock on by `by`, then fires every timer due by then (and those their commands set
  // that are due too) through the timer subscription and a TimerService, as a node would. The
  // outcome the Expect calls check is then what the fired commands appended to the aggregate
  // under test: accepted with their events, in order, or a no-op when they appended none (a
  // timer whose command was rejected is parked, see timers()). The spec fails when timers keep
  // firing after 100 rounds.
  AggregateSpec& AdvanceTime(std::chrono::milliseconds by) {
    thrown_.reset();
    clock_->Advance(by);
    const Version before = version();
    try {
      int rounds = 0;
      for (;; ++rounds) {
        Timers().CatchUp();  // the timer facts of the streams appended so far
        if (rounds == 100) {
          ADD_FAILURE() << "timers were still firing after 100 rounds of AdvanceTime";
          break;
        }
        if (TimerFiring().FireDue() == 0) break;
      }
    } catch (const std::exception& e) {
      thrown_ = e.what();
    }
    appended_ = {before, version()};
    CommandResult outcome;
    outcome.target = self_;
    outcome.version = appended_.second;
    for (const Stream& stream : AppendedStreams()) {
      outcome.kind = CommandResult::Kind::kAccepted;
      outcome.events.insert(outcome.events.end(), stream.events.begin(), stream.events.end());
    }
    if (thrown_) {
      result_.reset();
    } else {
      result_ = std::move(outcome);
    }
    return *this;
  }

  // Sends `command` to another aggregate `target` sharing this spec's stores; returns its outcome.
  template <Message Command>
  CommandResult Send(const AggregateRef& target, const Command& command) {
    return Processor().Process(target, CommandMessage::Of(command));
  }

  // The command appended exactly `events`, in order, types and bodies.
  template <Message... Event>
  AggregateSpec& ExpectEvents(const Event&... events) {
    if (!Accepted()) return *this;
    const std::vector<EventRecord> expected = Decision::Events(events...).events();
    if (result_->events.size() != expected.size()) {
      ADD_FAILURE() << "expected " << expected.size() << " event(s), got "
                    << result_->events.size();
      return *this;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(result_->events[i].type, expected[i].type) << "event " << i;
      EXPECT_EQ(nlohmann::json::parse(result_->events[i].body),
                nlohmann::json::parse(expected[i].body))
          << "event " << i << " of type " << expected[i].type;
    }
    return *this;
  }

  // The command was rejected with `code`.
  AggregateSpec& ExpectRejection(std::string_view code) {
    if (!Ran()) return *this;
    if (result_->kind != CommandResult::Kind::kRejected) {
      ADD_FAILURE() << "expected rejection " << code << ", got " << KindName(result_->kind);
    } else {
      EXPECT_EQ(result_->code, code) << result_->message;
    }
    return *this;
  }

  // The last command (or the timers AdvanceTime fired) set the aggregate's timer `key`.
  AggregateSpec& ExpectTimerScheduled(std::string_view key) {
    LastTimerFact(key, TimerFact::Kind::kSchedule);
    return *this;
  }

  // The last command (or the timers AdvanceTime fired) set the aggregate's timer `key` due at
  // `due_at` (epoch milliseconds) to send `command` to `target`.
  template <Message Command>
  AggregateSpec& ExpectTimerScheduled(std::string_view key, EpochMillis due_at,
                                      const AggregateRef& target, const Command& command) {
    const std::optional<TimerFact> fact = LastTimerFact(key, TimerFact::Kind::kSchedule);
    if (!fact) return *this;
    EXPECT_EQ(fact->due_at, due_at) << "timer " << key << "'s due time";
    EXPECT_EQ(fact->target, target) << "timer " << key << "'s target";
    EXPECT_EQ(fact->command_type, Command::kType) << "timer " << key << "'s command";
    EXPECT_EQ(nlohmann::json::parse(fact->body), nlohmann::json(command))
        << "timer " << key << "'s command " << Command::kType;
    return *this;
  }

  // The last command (or the timers AdvanceTime fired) cancelled the aggregate's timer `key`.
  AggregateSpec& ExpectTimerCancelled(std::string_view key) {
    LastTimerFact(key, TimerFact::Kind::kCancel);
    return *this;
  }

  // The command changed nothing.
  AggregateSpec& ExpectNoOp() {
    if (Ran() && result_->kind != CommandResult::Kind::kNoOp) {
      ADD_FAILURE() << "expected no-op, got " << KindName(result_->kind) << " " << result_->code;
    }
    return *this;
  }

  // The command threw an error whose message contains `text`.
  AggregateSpec& ExpectError(std::string_view text) {
    if (!thrown_) {
      ADD_FAILURE() << "expected an error containing \"" << text << "\", none was thrown";
    } else {
      EXPECT_NE(thrown_->find(text), std::string::npos) << *thrown_;
    }
    return *this;
  }

  // The aggregate's state now equals `expected`.
  AggregateSpec& ExpectState(const State& expected) {
    EXPECT_EQ(state(), expected);
    return *this;
  }

  // The aggregate's state now satisfies `check` (which uses EXPECT_* itself).
  AggregateSpec& ExpectState(const std::function<void(const State&)>& check) {
    check(state());
    return *this;
  }

  // Whether the aggregate under test holds `key` in `ns` (pending and live, or confirmed).
  bool Holds(std::string_view ns, std::string_view key,
             std::optional<ReservationTenancy> tenancy = std::nullopt) {
    const auto r = reservations_->Find(DecideScope::ScopeOf(self_, ns, TenancyOf(ns, tenancy)),
                                       std::string(key));
    return r && r->owner == self_ &&
           (r->state == ReservationState::kConfirmed || r->expires_at > clock_->NowMillis());
  }

  // The aggregate's state, loaded from the log.
  State state() { return Processor().Load(self_).template As<State>(); }
  bool deleted() { return Processor().Load(self_).deleted; }
  Version version() { return Processor().Load(self_).version; }

  // The last command's outcome; nullopt when it threw.
  const std::optional<CommandResult>& result() const { return result_; }

  ManualClock& clock() { return *clock_; }
  EventLog& log() { return *log_; }
  ReservationStore& reservations() { return *reservations_; }
  // The timers the timer subscription applied, as of the last AdvanceTime.
  TimerStore& timers() { return *timers_; }
  const AggregateRef& self() const { return self_; }

 private:
  CommandProcessor& Processor() {
    if (!processor_) {
      processor_ = std::make_shared<CommandProcessor>(log_, reservations_, clock_,
                                                      CommandProcessorOptions{.workers = 1});
      if (initial_) {
        processor_->Register(std::make_shared<GivenStateType<State>>(type_, *initial_));
      } else {
        processor_->Register(type_);
      }
    }
    return *processor_;
  }

  // The timer subscription, fed on this thread by CatchUp.
  SubscriptionRunner& Timers() {
    if (!runner_) {
      runner_ = std::make_unique<SubscriptionRunner>(
          log_, std::vector<std::shared_ptr<Subscription>>{NewTimerSubscription(timers_, 1)});
    }
    return *runner_;
  }

  // The timer service, on the runner's node (one lease per node and partition).
  TimerService& TimerFiring() {
    if (!timer_service_) {
      Processor();
      timer_service_ = std::make_unique<TimerService>(log_, timers_, processor_, clock_,
                                                      TimerServiceOptions{.node = Timers().node()});
    }
    return *timer_service_;
  }

  // The streams the last When or AdvanceTime appended to the aggregate under test.
  std::vector<Stream> AppendedStreams() {
    return log_->Read(self_, appended_.first + 1, appended_.second);
  }

  // The last fact about timer `key` of `kind` in AppendedStreams(); fails the spec when none.
  std::optional<TimerFact> LastTimerFact(std::string_view key, TimerFact::Kind kind) {
    std::optional<TimerFact> found;
    for (const Stream& stream : AppendedStreams()) {
      for (const TimerFact& fact : stream.timers) {
        if (fact.key == key) found = fact.kind == kind ? std::optional(fact) : std::nullopt;
      }
    }
    if (!found) {
      ADD_FAILURE() << "expected timer " << key << " to be "
                    << (kind == TimerFact::Kind::kSchedule ? "scheduled" : "cancelled")
                    << " by the last command; it was not";
    }
    return found;
  }

  bool Ran() {
    if (!result_) ADD_FAILURE() << "the command threw: " << thrown_.value_or("no command sent");
    return result_.has_value();
  }

  bool Accepted() {
    if (!Ran()) return false;
    if (result_->kind != CommandResult::Kind::kAccepted) {
      ADD_FAILURE() << "expected events, got " << KindName(result_->kind) << " " << result_->code
                    << ": " << result_->message;
      return false;
    }
    return true;
  }

  ReservationTenancy TenancyOf(std::string_view ns,
                               std::optional<ReservationTenancy> given) const {
    return DecideScope::TenancyOf(&type_->tenancies(), type_->name(), ns, given);
  }

  std::shared_ptr<const AggregateType<State>> type_;
  AggregateRef self_;
  std::shared_ptr<ManualClock> clock_;
  std::shared_ptr<EventLog> log_;
  std::shared_ptr<ReservationStore> reservations_;
  std::shared_ptr<TimerStore> timers_;
  std::optional<State> initial_;
  std::shared_ptr<CommandProcessor> processor_;
  std::unique_ptr<SubscriptionRunner> runner_;
  std::unique_ptr<TimerService> timer_service_;
  // The aggregate's versions before and after the last When or AdvanceTime.
  std::pair<Version, Version> appended_;
  std::optional<CommandResult> result_;
  std::optional<std::string> thrown_;
};

}  // namespace wow::testing
