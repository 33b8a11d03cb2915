// The binary encodings of a stream and of its parts (private): the transport bytes the runtime
// stores with every stream (EncodeTransport, wow/stream_json.h), and the SQLite log's events and
// facts columns.
//
// Little-endian; a string is [u32 size][bytes], kept byte for byte; a list is [u32 count] then its
// items.
//   events:    [u32 count] then per event [str type][str body]
//   facts:     nullopt (SQL NULL) when the stream has no reserved, released or timer fact, else
//                [u8 encoding = 1][list of KeyFact reserved][list of KeyFact released]
//                [list of TimerFact]
//              KeyFact:   [str ns][str key][u8 tenancy: 0 tenant, 1 system]
//              TimerFact: [u8 kind: 0 schedule, 1 cancel][str key], and for a schedule:
//                         [str timer_id][i64 due_at][str target context][str target aggregate]
//                         [str target tenant_id][str target id][str command_type]
//                         [str body (JSON)][str rule type][i64 max_attempts][i64 backoff_ms]
//                         [i64 max_backoff_ms]
//              The leading byte names the encoding, so a later one can be told apart.
//   stream:    [u8 encoding = 1][str context][str aggregate][str tenant_id][str id][i64 version]
//              [str request_id][i64 time][events][u8 0, or 1 then the facts]
//              Its leading byte is never '{', which JSON transports (written before this
//              encoding) begin with.
//
// The encoders throw Error(kInvalidArgument) for a string or list over 4 GiB; the decoders throw
// Error(kDataLoss), naming what they decoded, for bytes that are not what the encoders write
// (truncated, trailing bytes, an unknown encoding, kind or tenancy).
//
// Thread-safety: stateless functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wow/stream.h"

namespace wow::core {

std::string EncodeEvents(const std::vector<EventRecord>& events);
std::vector<EventRecord> DecodeEvents(std::string_view bytes);

// nullopt when the stream has no reserved, released or timer facts.
std::optional<std::string> EncodeFacts(const Stream& stream);
// Sets the facts of `stream` from `bytes` (empty, as SQL NULL reads: no facts).
void DecodeFacts(std::string_view bytes, Stream& stream);

// The whole stream but its transport.
std::string EncodeStream(const Stream& stream);
// The stream `bytes` encode, its transport left empty.
Stream DecodeStream(std::string_view bytes);
// The first byte of EncodeStream's bytes.
inline constexpr char kStreamEncoding = '\x01';

}  // namespace wow::core
