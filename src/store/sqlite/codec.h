// How the SQLite tables keep a reservation's holds and a timer's rule (private). The log's events
// and facts columns are core/stream_codec.h's binary encodings.
//
// The reservation and timer tables keep JSON text:
//   holds:  ["<attempt id>", ...]
//   rule:   the JSON of a TimerRule (wow/stream_json.h); its type "once" or "retry"
//
// The encoders throw Error(kInvalidArgument) for a string JSON cannot hold (not valid UTF-8); the
// decoders throw Error(kDataLoss) for text that is not what they wrote.
//
// Thread-safety: stateless functions.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "wow/stream.h"

namespace wow::sqlite {

std::string EncodeHolds(const std::set<std::string>& holds);
std::set<std::string> DecodeHolds(std::string_view text);

std::string EncodeRule(const TimerRule& rule);
// `text` decoded; Error(kDataLoss) naming `timer` (such as `timer "k" of ...`) when it is not what
// EncodeRule wrote, an unknown rule type included.
TimerRule DecodeRule(std::string_view text, std::string_view timer);

}  // namespace wow::sqlite
