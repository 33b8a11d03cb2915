// How the SQLite tables keep a stream's events and facts, a reservation's holds and a timer's rule
// (private).
//
// The log's two binary columns are little-endian; a string is [u32 size][bytes], kept byte for
// byte; a list is [u32 count] then its items.
//   events: [u32 count] then per event [str type][str body]
//   facts:  SQL NULL when the stream has no reserved, released or timer fact, else
//             [u8 encoding = 1][list of KeyFact reserved][list of KeyFact released]
//             [list of TimerFact]
//           KeyFact:   [str ns][str key][u8 tenancy: 0 tenant, 1 system]
//           TimerFact: [u8 kind: 0 schedule, 1 cancel][str key], and for a schedule:
//                      [str timer_id][i64 due_at][str target context][str target aggregate]
//                      [str target tenant_id][str target id][str command_type][str body (JSON)]
//                      [str rule type][i64 max_attempts][i64 backoff_ms][i64 max_backoff_ms]
//           The leading byte names the encoding, so a later one can be told apart.
// The reservation and timer tables keep JSON text:
//   holds:  ["<attempt id>", ...]
//   rule:   the JSON of a TimerRule (wow/stream_json.h)
//
// The encoders throw Error(kInvalidArgument) for a string JSON cannot hold (holds and rules: not
// valid UTF-8) or a string or list over 4 GiB; the decoders throw Error(kDataLoss) for bytes that
// are not what they wrote (truncated, trailing bytes, an unknown encoding, kind or tenancy).
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
// Sets the facts of `stream` from `bytes` (empty, as SQL NULL reads: no facts).
void DecodeFacts(std::string_view bytes, Stream& stream);

std::string EncodeHolds(const std::set<std::string>& holds);
std::set<std::string> DecodeHolds(std::string_view text);

std::string EncodeRule(const TimerRule& rule);
TimerRule DecodeRule(std::string_view text);

}  // namespace wow::sqlite
