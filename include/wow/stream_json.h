// JSON codecs (nlohmann::json) of the model and stream types, and the transport encoding.
//
// The JSON encodings are stored (SQLite columns) and shown (the wow tool): their field names are
// fixed. Decoding throws nlohmann::json::exception on a malformed document, and
// Error(kInvalidArgument) naming the value on a value outside its set (a timer rule type other than
// "once" or "retry").
//
// Thread-safety: stateless functions; safe for concurrent use.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "wow/model.h"
#include "wow/stream.h"

namespace wow {

void to_json(nlohmann::json& json, const AggregateRef& ref);
void from_json(const nlohmann::json& json, AggregateRef& ref);
void to_json(nlohmann::json& json, const EventRecord& event);
void from_json(const nlohmann::json& json, EventRecord& event);
void to_json(nlohmann::json& json, const KeyFact& fact);
void from_json(const nlohmann::json& json, KeyFact& fact);
void to_json(nlohmann::json& json, const TimerRule& rule);
void from_json(const nlohmann::json& json, TimerRule& rule);
void to_json(nlohmann::json& json, const TimerFact& fact);
void from_json(const nlohmann::json& json, TimerFact& fact);
// A stream without its transport.
void to_json(nlohmann::json& json, const Stream& stream);
void from_json(const nlohmann::json& json, Stream& stream);

// The runtime's transport encoding of a stream, transport left out: compact binary, its layout
// (src/core/stream_codec.h) fixed, since logs store it. Throws Error(kInvalidArgument) for a
// string or list over 4 GiB.
std::string EncodeTransport(const Stream& stream);
// The stream a transport encodes (the binary encoding, or the JSON text that builds before
// 2026-12 wrote); its transport is `transport` itself. Throws Error(kDataLoss) when the bytes are
// neither.
Stream DecodeTransport(std::string_view transport);

}  // namespace wow
