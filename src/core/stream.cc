#include "wow/stream.h"

#include <nlohmann/json.hpp>
#include <ostream>

#include "wow/error.h"

namespace wow {
namespace {

std::optional<std::string> InvalidKeyFact(const KeyFact& fact) {
  if (fact.ns.empty() || fact.ns.size() > 512) return "a key fact's namespace must be 1 to 512 bytes";
  if (fact.key.empty() || fact.key.size() > 512) return "a key fact's key must be 1 to 512 bytes";
  return std::nullopt;
}

std::optional<std::string> InvalidTimerFact(const TimerFact& fact) {
  if (fact.key.empty()) return "a timer fact has an empty key";
  if (fact.kind == TimerFact::Kind::kCancel) return std::nullopt;
  if (fact.timer_id.empty()) return "timer \"" + fact.key + "\" has no timer id";
  if (fact.command_type.empty()) return "timer \"" + fact.key + "\" has no command type";
  if (!nlohmann::json::accept(fact.body)) return "timer \"" + fact.key + "\" has a body that is not JSON";
  try {
    ValidateRef(fact.target);
  } catch (const Error& e) {
    return "timer \"" + fact.key + "\" has a bad target: " + e.what();
  }
  if (fact.rule.max_attempts < 1) return "timer \"" + fact.key + "\" allows fewer than 1 attempt";
  return std::nullopt;
}

}  // namespace

std::string_view TimerRuleKindName(TimerRule::Kind kind) {
  switch (kind) {
    case TimerRule::Kind::kOnce:
      return "once";
    case TimerRule::Kind::kRetry:
      return "retry";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, TimerRule::Kind kind) {
  return out << TimerRuleKindName(kind);
}

std::optional<TimerRule::Kind> TimerRuleKindNamed(std::string_view name) {
  for (const TimerRule::Kind kind : {TimerRule::Kind::kOnce, TimerRule::Kind::kRetry}) {
    if (TimerRuleKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

std::optional<std::string> InvalidStreamReason(const Stream& stream, const std::string& context) {
  try {
    ValidateRef(stream.ref);
  } catch (const Error& e) {
    return e.what();
  }
  if (stream.ref.context != context) {
    return "stream of " + ToString(stream.ref) + " is of context \"" + stream.ref.context +
           "\", not this log's \"" + context + "\"";
  }
  if (stream.version < 1) {
    return "stream of " + ToString(stream.ref) + " has version " + std::to_string(stream.version) +
           "; versions start at 1";
  }
  if (stream.events.empty()) return "stream of " + ToString(stream.ref) + " has no events";
  if (stream.request_id.empty() || stream.request_id.size() > 256) {
    return "stream of " + ToString(stream.ref) + " needs a request id of 1 to 256 bytes";
  }
  for (const EventRecord& event : stream.events) {
    if (event.type.empty()) return "stream of " + ToString(stream.ref) + " has an event of no type";
    const std::size_t start = event.body.find_first_not_of(" \t\r\n");
    if (start == std::string::npos || event.body[start] != '{' ||
        !nlohmann::json::accept(event.body)) {
      return "event \"" + event.type + "\" of " + ToString(stream.ref) +
             " has a body that is not a JSON object";
    }
  }
  for (const auto* facts : {&stream.reserved, &stream.released}) {
    for (const KeyFact& fact : *facts) {
      if (auto reason = InvalidKeyFact(fact)) return *reason;
    }
  }
  for (const TimerFact& fact : stream.timers) {
    if (auto reason = InvalidTimerFact(fact)) return *reason;
  }
  return std::nullopt;
}

}  // namespace wow
