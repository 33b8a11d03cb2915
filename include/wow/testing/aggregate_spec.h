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
// ManualClock (clock()). Expectations report failures through GoogleTest (ADD_FAILURE) and return
// the spec, so they chain.
//
// Thread-safety: not thread-safe; one spec per test.
#pragma once

#include <gtest/gtest.h>

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
        reservations_(NewMemoryReservationStore(clock_)) {
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

  // Another aggregate of this type and tenant holds `key` in `ns`, confirmed.
  AggregateSpec& GivenReservation(std::string_view ns, std::string_view key,
                                  ReservationTenancy tenancy = ReservationTenancy::kTenant) {
    AggregateRef other = self_;
    other.id = "another-" + self_.id;
    reservations_->Confirm(DecideScope::ScopeOf(other, ns, tenancy), std::string(key), other, 1);
    return *this;
  }

  // Sends `command` to the aggregate under test; the outcome is what the Expect calls check.
  template <Message Command>
  AggregateSpec& When(const Command& command, std::string request_id = {}) {
    thrown_.reset();
    try {
      result_ = Processor().Process(self_, CommandMessage::Of(command), std::move(request_id));
    } catch (const std::exception& e) {
      result_.reset();
      thrown_ = e.what();
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
             ReservationTenancy tenancy = ReservationTenancy::kTenant) {
    const auto r = reservations_->Find(DecideScope::ScopeOf(self_, ns, tenancy), std::string(key));
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
  const AggregateRef& self() const { return self_; }

 private:
  CommandProcessor& Processor() {
    if (!processor_) {
      processor_ = std::make_unique<CommandProcessor>(log_, reservations_, clock_,
                                                      CommandProcessorOptions{.workers = 1});
      if (initial_) {
        processor_->Register(std::make_shared<GivenStateType<State>>(type_, *initial_));
      } else {
        processor_->Register(type_);
      }
    }
    return *processor_;
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

  std::shared_ptr<const AggregateType<State>> type_;
  AggregateRef self_;
  std::shared_ptr<ManualClock> clock_;
  std::shared_ptr<EventLog> log_;
  std::shared_ptr<ReservationStore> reservations_;
  std::optional<State> initial_;
  std::unique_ptr<CommandProcessor> processor_;
  std::optional<CommandResult> result_;
  std::optional<std::string> thrown_;
};

}  // namespace wow::testing
