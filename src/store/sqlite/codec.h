// How the SQLite tables keep a stream's events and facts, a reservation's holds and a timer's rule
// (private).
//
//   events: a BLOB of length-prefixed strings, fast to read back on a tail:
//             [u32 count] then per event [u32 size][type bytes][u32 size][body bytes]
//           (little-endian); bodies come back byte for byte.
//   facts:  the JSON of wow/stream_json.h: {"reserved": [KeyFact], "released": [KeyFact],
//           "timers": [TimerFact]} with empty lists left out, or SQL NULL when there is no fact
//   holds:  ["<attempt id>", ...]
//   rule:   the JSON of a TimerRule (wow/stream_json.h)
//
// The encoders throw Error(kInvalidArgument) for a string JSON cannot hold (not valid UTF-8) or
// an event over 4 GiB; the decoders throw Error(kDataLoss) for bytes that are not what they wrote.
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
std::vector<EventRecord> DecodeEvents(std::string_view bytes);

// nullopt when the stream has no reserved, released or timer facts.
std::optional<std::string> EncodeFacts(const Stream& stream);
// Fills the facts of `stream` from `text` (empty: no facts).
void DecodeFacts(std::string_view text, Stream& stream);

std::string EncodeHolds(const std::set<std::string>& holds);
std::set<std::string> DecodeHolds(std::string_view text);

std::string EncodeRule(const TimerRule& rule);
TimerRule DecodeRule(std::string_view text);

}  // namespace wow::sqlite
