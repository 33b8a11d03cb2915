#include "store/sqlite/codec.h"

#include <nlohmann/json.hpp>

#include "wow/error.h"

namespace wow::sqlite {
namespace {

using nlohmann::json;

std::string Dump(const json& value) {
  try {
    return value.dump();
  } catch (const json::type_error& e) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("a string cannot be stored: it is not valid UTF-8 (") + e.what() + ")");
  }
}

json Parse(std::string_view text, std::string_view what) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kDataLoss, "stored " + std::string(what) + " is not valid JSON (" +
                                          e.what() + "); the database is damaged");
  }
}

// Reads field `key` of `object` as T, or throws kDataLoss.
template <typename T>
T Field(const json& object, const char* key, std::string_view what) {
  try {
    return object.at(key).get<T>();
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kDataLoss, "stored " + std::string(what) + " lacks a valid \"" + key +
                                          "\" (" + e.what() + "); the database is damaged");
  }
}

json RefJson(const AggregateRef& ref) {
  return {{"context", ref.context}, {"aggregate", ref.aggregate}, {"tenant_id", ref.tenant_id},
          {"id", ref.id}};
}

AggregateRef RefFrom(const json& value) {
  return {Field<std::string>(value, "context", "timer target"),
          Field<std::string>(value, "aggregate", "timer target"),
          Field<std::string>(value, "tenant_id", "timer target"),
          Field<std::string>(value, "id", "timer target")};
}

json RuleJson(const TimerRule& rule) {
  return {{"type", rule.type},
          {"max_attempts", rule.max_attempts},
          {"backoff_ms", rule.backoff_ms},
          {"max_backoff_ms", rule.max_backoff_ms}};
}

TimerRule RuleFrom(const json& value) {
  return {Field<std::string>(value, "type", "timer rule"),
          Field<int>(value, "max_attempts", "timer rule"),
          Field<std::int64_t>(value, "backoff_ms", "timer rule"),
          Field<std::int64_t>(value, "max_backoff_ms", "timer rule")};
}

json KeyFactsJson(const std::vector<KeyFact>& facts) {
  json array = json::array();
  for (const KeyFact& fact : facts) {
    array.push_back({{"ns", fact.ns},
                     {"key", fact.key},
                     {"tenancy", fact.tenancy == ReservationTenancy::kSystem ? "system" : "tenant"}});
  }
  return array;
}

std::vector<KeyFact> KeyFactsFrom(const json& facts, const char* key) {
  std::vector<KeyFact> result;
  auto it = facts.find(key);
  if (it == facts.end()) return result;
  for (const json& fact : *it) {
    result.push_back({Field<std::string>(fact, "ns", "key fact"),
                      Field<std::string>(fact, "key", "key fact"),
                      Field<std::string>(fact, "tenancy", "key fact") == "system"
                          ? ReservationTenancy::kSystem
                          : ReservationTenancy::kTenant});
  }
  return result;
}

}  // namespace

std::string EncodeEvents(const std::vector<EventRecord>& events) {
  json array = json::array();
  for (const EventRecord& event : events) array.push_back({{"type", event.type}, {"body", event.body}});
  return Dump(array);
}

std::vector<EventRecord> DecodeEvents(std::string_view text) {
  const json array = Parse(text, "events");
  std::vector<EventRecord> events;
  events.reserve(array.size());
  for (const json& event : array) {
    events.push_back({Field<std::string>(event, "type", "event"),
                      Field<std::string>(event, "body", "event")});
  }
  return events;
}

std::optional<std::string> EncodeFacts(const Stream& stream) {
  if (stream.reserved.empty() && stream.released.empty() && stream.timers.empty()) {
    return std::nullopt;
  }
  json facts = json::object();
  if (!stream.reserved.empty()) facts["reserved"] = KeyFactsJson(stream.reserved);
  if (!stream.released.empty()) facts["released"] = KeyFactsJson(stream.released);
  if (!stream.timers.empty()) {
    json timers = json::array();
    for (const TimerFact& fact : stream.timers) {
      if (fact.kind == TimerFact::Kind::kCancel) {
        timers.push_back({{"kind", "cancel"}, {"key", fact.key}});
      } else {
        timers.push_back({{"kind", "schedule"},
                          {"key", fact.key},
                          {"timer_id", fact.timer_id},
                          {"due_at", fact.due_at},
                          {"target", RefJson(fact.target)},
                          {"command_type", fact.command_type},
                          {"body", fact.body},
                          {"rule", RuleJson(fact.rule)}});
      }
    }
    facts["timers"] = std::move(timers);
  }
  return Dump(facts);
}

void DecodeFacts(std::string_view text, Stream& stream) {
  if (text.empty()) return;
  const json facts = Parse(text, "facts");
  stream.reserved = KeyFactsFrom(facts, "reserved");
  stream.released = KeyFactsFrom(facts, "released");
  if (auto it = facts.find("timers"); it != facts.end()) {
    for (const json& timer : *it) {
      TimerFact fact;
      fact.key = Field<std::string>(timer, "key", "timer fact");
      if (Field<std::string>(timer, "kind", "timer fact") == "cancel") {
        fact.kind = TimerFact::Kind::kCancel;
      } else {
        fact.timer_id = Field<std::string>(timer, "timer_id", "timer fact");
        fact.due_at = Field<EpochMillis>(timer, "due_at", "timer fact");
        fact.target = RefFrom(Field<json>(timer, "target", "timer fact"));
        fact.command_type = Field<std::string>(timer, "command_type", "timer fact");
        fact.body = Field<std::string>(timer, "body", "timer fact");
        fact.rule = RuleFrom(Field<json>(timer, "rule", "timer fact"));
      }
      stream.timers.push_back(std::move(fact));
    }
  }
}

std::string EncodeHolds(const std::set<std::string>& holds) {
  return Dump(json(holds));
}

std::set<std::string> DecodeHolds(std::string_view text) {
  const json array = Parse(text, "reservation holds");
  try {
    return array.get<std::set<std::string>>();
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kDataLoss, std::string("stored reservation holds are not a list of "
                                                  "strings (") +
                                          e.what() + "); the database is damaged");
  }
}

std::string EncodeRule(const TimerRule& rule) { return Dump(RuleJson(rule)); }

TimerRule DecodeRule(std::string_view text) { return RuleFrom(Parse(text, "timer rule")); }

}  // namespace wow::sqlite
