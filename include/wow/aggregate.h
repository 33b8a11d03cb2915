// Aggregates: state types that apply events, and decide functions that turn a command and the
// current state into a Decision (events, a rejection, or no-op).
//
// Commands, events and states are plain C++ types. Each command and event type names itself with
// a `static constexpr std::string_view kType` (stable forever: it is stored in the log) and has a
// JSON codec through nlohmann::json (to_json/from_json, e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE;
// WOW_DEFINE_EMPTY_MESSAGE for a type with no fields, which NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE
// cannot take).
// An AggregateType<State> binds them:
//
//   wow::AggregateType<Brand> brand("brand");
//   brand.Apply<BrandCreated>([](Brand& s, const BrandCreated& e) { s.name = e.name; })
//        .Decide<CreateBrand>([](const Brand& s, const CreateBrand& c, wow::DecideScope& scope) {
//          if (!scope.Reserve("eshop-catalog.brand-name", Key(c.name)))
//            return wow::Decision::Reject("NAME_TAKEN", "Another brand is named ...");
//          return wow::Decision::Events(BrandCreated{c.name});
//        });
//
// Every aggregate also takes the built-in commands DeleteAggregate and RestoreAggregate: a deleted
// aggregate refuses every other command (AGGREGATE_DELETED) and keeps every key it holds, so a
// restored aggregate still holds them.
//
// Thread-safety: an AggregateType is configured once, then immutable and safe to share; decide
// and apply functions must not keep state of their own between calls.
#pragma once

#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "wow/decide_scope.h"
#include "wow/error.h"
#include "wow/stream.h"

namespace wow {

// A command or event type: names itself and converts to and from JSON.
template <typename T>
concept Message = requires {
  { T::kType } -> std::convertible_to<std::string_view>;
}
&&requires(const T& value, nlohmann::json& json) {
  json = value;
  json.get<T>();
};

// A command on its way to an aggregate: its type name and its body.
struct CommandMessage {
  std::string type;
  nlohmann::json body;

  template <Message Command>
  static CommandMessage Of(const Command& command) {
    return {std::string(Command::kType), nlohmann::json(command)};
  }
};

// Defines the JSON codec of `Type`, a command or event with no fields: it is written as {} and
// read from any JSON value. Use it at namespace scope, in `Type`'s namespace, after the type:
//
//   struct ResendCode { static constexpr std::string_view kType = "accounts.ResendCode"; };
//   WOW_DEFINE_EMPTY_MESSAGE(ResendCode)
#define WOW_DEFINE_EMPTY_MESSAGE(Type)                                                        \
  inline void to_json(nlohmann::json& json, const Type&) { json = nlohmann::json::object(); } \
  inline void from_json(const nlohmann::json&, Type&) {}

// The built-in commands every aggregate takes, and the events they produce. They carry nothing.
struct DeleteAggregate {
  static constexpr std::string_view kType = "wow.DeleteAggregate";
};
struct RestoreAggregate {
  static constexpr std::string_view kType = "wow.RestoreAggregate";
};
struct AggregateDeleted {
  static constexpr std::string_view kType = "wow.AggregateDeleted";
};
struct AggregateRestored {
  static constexpr std::string_view kType = "wow.AggregateRestored";
};
WOW_DEFINE_EMPTY_MESSAGE(DeleteAggregate)
WOW_DEFINE_EMPTY_MESSAGE(RestoreAggregate)
WOW_DEFINE_EMPTY_MESSAGE(AggregateDeleted)
WOW_DEFINE_EMPTY_MESSAGE(AggregateRestored)

// The codes of the rejections the built-in rules give (CommandResult::code), stable forever:
// clients match on them.
namespace rejections {
// A DeleteAggregate or RestoreAggregate of an aggregate that has no stream.
inline constexpr std::string_view kAggregateNotFound = "AGGREGATE_NOT_FOUND";
// Any command but RestoreAggregate to a deleted aggregate, a DeleteAggregate again included.
inline constexpr std::string_view kAggregateDeleted = "AGGREGATE_DELETED";
// A RestoreAggregate of an aggregate that is not deleted.
inline constexpr std::string_view kAggregateNotDeleted = "AGGREGATE_NOT_DELETED";
}  // namespace rejections

// What a decide function returns.
class Decision {
 public:
  enum class Kind { kEvents, kRejected, kNoOp };

  // The decision to commit `events` (at least one), in order.
  template <Message... Event>
  static Decision Events(const Event&... events) {
    static_assert(sizeof...(Event) > 0, "a decision commits at least one event");
    Decision decision(Kind::kEvents);
    (decision.events_.push_back(
         EventRecord{std::string(Event::kType), nlohmann::json(events).dump()}),
     ...);
    return decision;
  }
  // The decision to refuse the command: `code` for programs (NAME_TAKEN), `message` for people.
  static Decision Reject(std::string code, std::string message) {
    Decision decision(Kind::kRejected);
    decision.code_ = std::move(code);
    decision.message_ = std::move(message);
    return decision;
  }
  // The decision to change nothing.
  static Decision NoOp() { return Decision(Kind::kNoOp); }

  Kind kind() const { return kind_; }
  const std::vector<EventRecord>& events() const { return events_; }
  const std::string& code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  explicit Decision(Kind kind) : kind_(kind) {}
  Kind kind_;
  std::vector<EventRecord> events_;
  std::string code_;
  std::string message_;
};

// An aggregate's state behind a type-erased handle.
class AggregateState {
 public:
  virtual ~AggregateState() = default;
  virtual std::unique_ptr<AggregateState> Clone() const = 0;
  // The state as JSON, for tools and tests.
  virtual nlohmann::json ToJson() const = 0;
};

template <typename State>
class TypedState final : public AggregateState {
 public:
  TypedState() = default;
  explicit TypedState(State initial) : state(std::move(initial)) {}
  std::unique_ptr<AggregateState> Clone() const override {
    return std::make_unique<TypedState>(state);
  }
  nlohmann::json ToJson() const override {
    if constexpr (requires(nlohmann::json & json) { json = state; }) {
      return nlohmann::json(state);
    } else {
      return nlohmann::json::object();
    }
  }
  State state;
};

// What the runtime needs of an aggregate type; AggregateType<State> implements it.
class AggregateBehavior {
 public:
  virtual ~AggregateBehavior() = default;
  // The aggregate type's name, such as "brand" (ValidateTypeName's rule).
  virtual const std::string& name() const = 0;
  // The state of an aggregate that has no streams yet.
  virtual std::unique_ptr<AggregateState> NewState() const = 0;
  // Applies one event. Throws Error(kFailedPrecondition) for an event type it does not know,
  // Error(kDataLoss) for a body it cannot decode.
  virtual void Apply(AggregateState& state, const EventRecord& event) const = 0;
  // Whether Decide takes commands of `command_type`.
  virtual bool Handles(std::string_view command_type) const = 0;
  // Decides `command` on `state`. Throws Error(kInvalidArgument) for a command type it does not
  // take or a body that does not decode; whatever the decide function throws passes through.
  virtual Decision Decide(const AggregateState& state, const CommandMessage& command,
                          DecideScope& scope) const = 0;
  // The namespaces the type declared with their tenancy (empty: it declared none, and each call
  // names its own, kTenant by default).
  virtual const NamespaceTenancies& tenancies() const {
    static const NamespaceTenancies kNone;
    return kNone;
  }
};

template <typename State>
class AggregateType final : public AggregateBehavior {
 public:
  using ApplyFn = std::function<void(State&, const nlohmann::json&)>;
  using DecideFn = std::function<Decision(const State&, const nlohmann::json&, DecideScope&)>;

  // REQUIRES: `name` passes ValidateTypeName (else Error(kInvalidArgument)).
  explicit AggregateType(std::string_view name) : name_(name) {
    ValidateTypeName(name_, "aggregate type");
  }

  // Registers how `Event` changes the state.
  template <Message Event>
  AggregateType& Apply(std::function<void(State&, const Event&)> apply) {
    appliers_[std::string(Event::kType)] = [apply = std::move(apply)](State& state,
                                                                      const nlohmann::json& body) {
      apply(state, body.get<Event>());
    };
    return *this;
  }

  // Declares that the type's decisions reserve keys in `ns`, unique within an aggregate's tenant
  // (kTenant) or across the context's tenants (kSystem). Once a type declares a namespace, its
  // DecideScope's Reserve and Release take the declared tenancy, and a namespace it did not
  // declare, or another tenancy named on a call, is Error(kInvalidArgument). Throws
  // Error(kInvalidArgument) for an empty or over-long (512 bytes) namespace, or one declared
  // before with the other tenancy.
  AggregateType& Reserves(std::string_view ns,
                          ReservationTenancy tenancy = ReservationTenancy::kTenant) {
    Require(!ns.empty() && ns.size() <= 512, "a reserved namespace must be 1 to 512 bytes");
    const auto [it, added] = tenancies_.emplace(std::string(ns), tenancy);
    Require(added || it->second == tenancy, [&] {
      return "namespace \"" + it->first + "\" of aggregate type " + name_ +
             " is declared twice with different tenancies";
    });
    return *this;
  }

  // Registers the decide function of `Command`.
  template <Message Command>
  AggregateType& Decide(
      std::function<Decision(const State&, const Command&, DecideScope&)> decide) {
    deciders_[std::string(Command::kType)] = [decide = std::move(decide)](
                                                 const State& state, const nlohmann::json& body,
                                                 DecideScope& scope) {
      Command command;
      try {
        command = body.get<Command>();
      } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorCode::kInvalidArgument,
                    "command " + std::string(Command::kType) + " does not decode: " + e.what());
      }
      return decide(state, command, scope);
    };
    return *this;
  }

  const std::string& name() const override { return name_; }

  const NamespaceTenancies& tenancies() const override { return tenancies_; }

  std::unique_ptr<AggregateState> NewState() const override {
    return std::make_unique<TypedState<State>>();
  }

  void Apply(AggregateState& state, const EventRecord& event) const override {
    auto it = appliers_.find(event.type);
    if (it == appliers_.end()) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "aggregate type " + name_ + " has no Apply for event type " + event.type);
    }
    try {
      it->second(static_cast<TypedState<State>&>(state).state, nlohmann::json::parse(event.body));
    } catch (const nlohmann::json::exception& e) {
      throw Error(ErrorCode::kDataLoss,
                  "event " + event.type + " of type " + name_ + " does not decode: " + e.what());
    }
  }

  bool Handles(std::string_view command_type) const override {
    return deciders_.find(std::string(command_type)) != deciders_.end();
  }

  Decision Decide(const AggregateState& state, const CommandMessage& command,
                  DecideScope& scope) const override {
    auto it = deciders_.find(command.type);
    Require(it != deciders_.end(), [&] {
      return "aggregate type " + name_ + " takes no command of type \"" + command.type + "\"";
    });
    return it->second(static_cast<const TypedState<State>&>(state).state, command.body, scope);
  }

 private:
  std::string name_;
  std::map<std::string, ApplyFn, std::less<>> appliers_;
  NamespaceTenancies tenancies_;
  std::map<std::string, DecideFn, std::less<>> deciders_;
};

}  // namespace wow
