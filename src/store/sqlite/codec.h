// The JSON text the SQLite tables keep for a stream's events and facts, a reservation's holds and a
// timer's rule (private). Event and command bodies are kept as JSON strings holding the body's
// text, so they come back byte for byte.
//
//   events: [{"type": "...", "body": "<the body's JSON text>"}, ...]
//   facts:  {"reserved": [{"ns", "key", "tenancy": "tenant"|"system"}], "released": [...],
//            "timers": [{"kind": "schedule"|"cancel", "key", "timer_id", "due_at", "target":
//            {"context", "aggregate", "tenant_id", "id"}, "command_type", "body", "rule"}]}
//            or SQL NULL when the stream has no fact
//   holds:  ["<attempt id>", ...]
//   rule:   {"type", "max_attempts", "backoff_ms", "max_backoff_ms"}
//
// The encoders throw Error(kInvalidArgument) for a string that is not valid UTF-8 (JSON cannot
// hold it); the decoders throw Error(kDataLoss) for text that is not what they wrote.
//
// Thread-safety: stateless functions.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "wow/stream.h"

namespace wow::sqlite {

std::string EncodeEvents(const std::vector<EventRecord>& events);
std::vector<EventRecord> DecodeEvents(std::string_view text);

// nullopt when the stream has no reserved, released or timer facts.
std::optional<std::string> EncodeFacts(const Stream& stream);
// Fills the facts of `stream` from `text` (empty: no facts).
void DecodeFacts(std::string_view text, Stream& stream);

std::string EncodeHolds(const std::set<std::string>& holds);
std::set<std::string> DecodeHolds(std::string_view text);

std::string EncodeRule(const TimerRule& rule);
TimerRule DecodeRule(std::string_view text);

}  // namespace wow::sqlite
