#include "wow/stream_json.h"

#include "core/stream_codec.h"
#include "wow/error.h"

namespace wow {

using nlohmann::json;

void to_json(json& j, const AggregateRef& ref) {
  j = json{{"context", ref.context},
           {"aggregate", ref.aggregate},
           {"tenant_id", ref.tenant_id},
           {"id", ref.id}};
}
void from_json(const json& j, AggregateRef& ref) {
  j.at("context").get_to(ref.context);
  j.at("aggregate").get_to(ref.aggregate);
  j.at("tenant_id").get_to(ref.tenant_id);
  j.at("id").get_to(ref.id);
}

void to_json(json& j, const EventRecord& event) {
  j = json{{"type", event.type}, {"body", event.body}};
}
void from_json(const json& j, EventRecord& event) {
  j.at("type").get_to(event.type);
  j.at("body").get_to(event.body);
}

void to_json(json& j, const KeyFact& fact) {
  j = json{
      {"ns", fact.ns}, {"key", fact.key}, {"system", fact.tenancy == ReservationTenancy::kSystem}};
}
void from_json(const json& j, KeyFact& fact) {
  j.at("ns").get_to(fact.ns);
  j.at("key").get_to(fact.key);
  fact.tenancy =
      j.value("system", false) ? ReservationTenancy::kSystem : ReservationTenancy::kTenant;
}

void to_json(json& j, const TimerRule& rule) {
  j = json{{"type", TimerRuleKindName(rule.kind)},
           {"max_attempts", rule.max_attempts},
           {"backoff_ms", rule.backoff_ms},
           {"max_backoff_ms", rule.max_backoff_ms}};
}
void from_json(const json& j, TimerRule& rule) {
  const std::string type = j.at("type").get<std::string>();
  const std::optional<TimerRule::Kind> kind = TimerRuleKindNamed(type);
  if (!kind) {
    throw Error(ErrorCode::kInvalidArgument,
                "timer rule type \"" + type + "\" is unknown; it is \"once\" or \"retry\"");
  }
  rule.kind = *kind;
  j.at("max_attempts").get_to(rule.max_attempts);
  j.at("backoff_ms").get_to(rule.backoff_ms);
  j.at("max_backoff_ms").get_to(rule.max_backoff_ms);
}

void to_json(json& j, const TimerFact& fact) {
  if (fact.kind == TimerFact::Kind::kCancel) {
    j = json{{"kind", "cancel"}, {"key", fact.key}};
    return;
  }
  j = json{{"kind", "schedule"},    {"key", fact.key},       {"timer_id", fact.timer_id},
           {"due_at", fact.due_at}, {"target", fact.target}, {"command_type", fact.command_type},
           {"body", fact.body},     {"rule", fact.rule}};
}
void from_json(const json& j, TimerFact& fact) {
  j.at("key").get_to(fact.key);
  if (j.at("kind").get<std::string>() == "cancel") {
    fact.kind = TimerFact::Kind::kCancel;
    return;
  }
  fact.kind = TimerFact::Kind::kSchedule;
  j.at("timer_id").get_to(fact.timer_id);
  j.at("due_at").get_to(fact.due_at);
  j.at("target").get_to(fact.target);
  j.at("command_type").get_to(fact.command_type);
  j.at("body").get_to(fact.body);
  j.at("rule").get_to(fact.rule);
}

void to_json(json& j, const Stream& stream) {
  j = json{
      {"ref", stream.ref},       {"version", stream.version},   {"request_id", stream.request_id},
      {"events", stream.events}, {"reserved", stream.reserved}, {"released", stream.released},
      {"timers", stream.timers}, {"time", stream.time}};
}
void from_json(const json& j, Stream& stream) {
  j.at("ref").get_to(stream.ref);
  j.at("version").get_to(stream.version);
  j.at("request_id").get_to(stream.request_id);
  j.at("events").get_to(stream.events);
  j.at("reserved").get_to(stream.reserved);
  j.at("released").get_to(stream.released);
  j.at("timers").get_to(stream.timers);
  j.at("time").get_to(stream.time);
}

std::string EncodeTransport(const Stream& stream) { return core::EncodeStream(stream); }

Stream DecodeTransport(std::string_view transport) {
  Stream stream;
  if (!transport.empty() && transport.front() == '{') {  // the JSON of earlier builds
    try {
      stream = json::parse(transport).get<Stream>();
    } catch (const json::exception& e) {
      throw Error(ErrorCode::kDataLoss,
                  std::string("transport bytes are not a stream's JSON: ") + e.what());
    } catch (const Error& e) {  // a value out of its set, such as an unknown timer rule type
      throw Error(ErrorCode::kDataLoss,
                  std::string("transport bytes are not a stream's JSON: ") + e.what());
    }
  } else {
    stream = core::DecodeStream(transport);
  }
  stream.transport = std::string(transport);
  return stream;
}

}  // namespace wow
