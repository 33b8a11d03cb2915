// The binary encodings of a stream and its parts (the transport, the SQLite log's columns): they
// round-trip, their bytes are the documented layout, and damaged bytes are DataLoss.
#include "core/stream_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "wow/error.h"
#include "wow/stream_json.h"

namespace wow::core {
namespace {

// The ErrorCode `call` throws; nullopt when it throws none.
std::optional<ErrorCode> CodeOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

// `value` as the little-endian u32 the encodings use.
std::string U32(std::uint32_t value) {
  return {static_cast<char>(value), static_cast<char>(value >> 8), static_cast<char>(value >> 16),
          static_cast<char>(value >> 24)};
}

std::string I64(std::int64_t value) {
  std::string bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<char>(static_cast<std::uint64_t>(value) >> (8 * i)));
  return bytes;
}

std::string Str(const std::string& value) {
  return U32(static_cast<std::uint32_t>(value.size())) + value;
}

// A stream with every kind of fact, every field set to something other than its default.
Stream EveryFact() {
  Stream stream;
  stream.reserved = {{"ns", "k1", ReservationTenancy::kSystem},
                     {"ns", std::string("k\0\xff", 3), ReservationTenancy::kTenant}};
  stream.released = {{"ns2", "k0", ReservationTenancy::kTenant}};
  TimerFact schedule;
  schedule.key = "t";
  schedule.timer_id = "id";
  schedule.due_at = -42;
  schedule.target = {"c", "a", "", "x"};
  schedule.command_type = "c.Do";
  schedule.body = R"({"n": 1.10, "s": "Ä"})";
  schedule.rule = {TimerRule::Kind::kRetry, 7, std::int64_t{1} << 40, -1};
  TimerFact cancel;
  cancel.kind = TimerFact::Kind::kCancel;
  cancel.key = "u";
  stream.timers = {schedule, cancel, schedule};
  return stream;
}

TEST(StreamCodec, EventsRoundTripByteForByte) {
  const std::vector<EventRecord> events = {
      {"a.Created", R"({"name": "Ä \u0000 x", "n": 1.10})"}, {"a.Renamed", "{}"}, {"", ""}};
  EXPECT_EQ(DecodeEvents(EncodeEvents(events)), events);
  EXPECT_TRUE(DecodeEvents(EncodeEvents({})).empty());
}

TEST(StreamCodec, EventsAreTheDocumentedBytes) {
  EXPECT_EQ(EncodeEvents({{"T", "{}"}}), U32(1) + Str("T") + Str("{}"));
}

TEST(StreamCodec, TruncatedOrPaddedEventsAreDataLoss) {
  const std::string bytes = EncodeEvents({{"a.Created", R"({"name": "x"})"}});
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_EQ(CodeOf([&] { DecodeEvents(std::string_view(bytes).substr(0, cut)); }),
              ErrorCode::kDataLoss)
        << "decoded " << cut << " of " << bytes.size() << " bytes";
  }
  EXPECT_EQ(CodeOf([&] { DecodeEvents(bytes + "x"); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([&] { DecodeEvents(U32(0xffffffff)); }), ErrorCode::kDataLoss)
      << "a count the bytes cannot hold";
}

TEST(StreamCodec, FactsRoundTripAndAreNullWhenThereAreNone) {
  Stream stream;
  EXPECT_EQ(EncodeFacts(stream), std::nullopt);
  const Stream every = EveryFact();
  Stream decoded;
  DecodeFacts(*EncodeFacts(every), decoded);
  EXPECT_EQ(decoded.reserved, every.reserved);
  EXPECT_EQ(decoded.released, every.released);
  EXPECT_EQ(decoded.timers, every.timers);
  // Each kind alone, so no list's count leans on another's.
  for (int kind = 0; kind < 3; ++kind) {
    Stream one;
    if (kind == 0) one.reserved = every.reserved;
    if (kind == 1) one.released = every.released;
    if (kind == 2) one.timers = every.timers;
    Stream back = every;  // decoding sets every list, the absent ones to empty
    DecodeFacts(*EncodeFacts(one), back);
    EXPECT_EQ(back.reserved, one.reserved) << kind;
    EXPECT_EQ(back.released, one.released) << kind;
    EXPECT_EQ(back.timers, one.timers) << kind;
  }
  DecodeFacts("", decoded);
  EXPECT_TRUE(decoded.reserved.empty() && decoded.released.empty() && decoded.timers.empty());
}

TEST(StreamCodec, FactsAreTheDocumentedBytes) {
  Stream stream;
  stream.reserved = {{"n", "k", ReservationTenancy::kSystem}};
  TimerFact cancel;
  cancel.kind = TimerFact::Kind::kCancel;
  cancel.key = "u";
  stream.timers = {cancel};
  EXPECT_EQ(*EncodeFacts(stream), std::string(1, '\x01') + U32(1) + Str("n") + Str("k") +
                                      std::string(1, '\x01') + U32(0) + U32(1) +
                                      std::string(1, '\x01') + Str("u"));
}

TEST(StreamCodec, TruncatedPaddedOrUnknownFactsAreDataLoss) {
  const std::string bytes = *EncodeFacts(EveryFact());
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    Stream stream;
    EXPECT_EQ(CodeOf([&] { DecodeFacts(std::string_view(bytes).substr(0, cut), stream); }),
              ErrorCode::kDataLoss)
        << "decoded " << cut << " of " << bytes.size() << " bytes";
  }
  Stream stream;
  EXPECT_EQ(CodeOf([&] { DecodeFacts(bytes + "x", stream); }), ErrorCode::kDataLoss);
  // Another encoding, such as format 2's JSON.
  EXPECT_EQ(CodeOf([&] { DecodeFacts(R"({"reserved":[]})", stream); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([&] { DecodeFacts("\x02" + bytes.substr(1), stream); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([&] { DecodeFacts("\x01" + U32(0xffffffff), stream); }), ErrorCode::kDataLoss);

  // One reserved key of tenancy 2: [1][count 1][str n][str k][tenancy][0][0].
  const std::string tenancy = "\x01" + U32(1) + Str("n") + Str("k") + "\x02" + U32(0) + U32(0);
  EXPECT_EQ(CodeOf([&] { DecodeFacts(tenancy, stream); }), ErrorCode::kDataLoss);
  // One timer fact of kind 2: [1][0][0][count 1][kind][str u].
  const std::string kind = "\x01" + U32(0) + U32(0) + U32(1) + "\x02" + Str("u");
  EXPECT_EQ(CodeOf([&] { DecodeFacts(kind, stream); }), ErrorCode::kDataLoss);
}

TEST(StreamCodec, ATimerRuleOfMoreAttemptsThanAnIntIsDataLoss) {
  Stream stream;
  TimerFact schedule = EveryFact().timers.front();
  stream.timers = {schedule};
  std::string bytes = *EncodeFacts(stream);
  // max_attempts is the i64 before the last two.
  const size_t at = bytes.size() - 24;
  ASSERT_EQ(bytes[at], '\x07');
  bytes[at + 4] = '\x01';  // 7 + 2^32
  EXPECT_EQ(CodeOf([&] { DecodeFacts(bytes, stream); }), ErrorCode::kDataLoss);
}

TEST(StreamCodec, ATimerRuleOfAnUnknownTypeIsDataLoss) {
  Stream stream;
  stream.timers = {EveryFact().timers.front()};
  std::string bytes = *EncodeFacts(stream);
  const size_t at = bytes.find(Str("retry"));
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, Str("retry").size(), Str("retrx"));
  EXPECT_EQ(CodeOf([&] { DecodeFacts(bytes, stream); }), ErrorCode::kDataLoss);
}

// EveryFact with every other field set too.
Stream EveryField() {
  Stream stream = EveryFact();
  stream.ref = {"ctx", "agg", "", std::string("i\0d", 3)};
  stream.version = 7;
  stream.request_id = "req";
  stream.time = -3;
  stream.events = {{"a.Created", R"({"name": "Ä"})"}, {"a.Renamed", "{}"}};
  return stream;
}

TEST(StreamJson, ATimerRuleRoundTripsByItsTypeName) {
  const TimerRule retry{TimerRule::Kind::kRetry, 3, 100, 1'000};
  EXPECT_EQ(nlohmann::json(retry).at("type"), "retry");
  EXPECT_EQ(nlohmann::json(TimerRule{}).at("type"), "once");
  EXPECT_EQ(nlohmann::json(retry).get<TimerRule>(), retry);
}

TEST(StreamJson, ATimerRuleOfAnUnknownTypeIsInvalidArgumentNamingIt) {
  nlohmann::json rule = TimerRule{};
  rule["type"] = "sometimes";
  try {
    rule.get<TimerRule>();
    ADD_FAILURE() << "an unknown timer rule type was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("\"sometimes\""), std::string::npos) << e.what();
  }
}

TEST(StreamJson, AnEarlierJsonTransportOfAnUnknownTimerRuleTypeIsDataLoss) {
  Stream timed;
  timed.ref = {"ctx", "agg", "", "id"};
  timed.version = 1;
  timed.request_id = "req";
  timed.events = {{"a.Created", "{}"}};
  timed.timers = {EveryFact().timers.front()};
  ASSERT_EQ(DecodeTransport(nlohmann::json(timed).dump()).timers, timed.timers);
  nlohmann::json stream = timed;
  stream["timers"][0]["rule"]["type"] = "sometimes";
  EXPECT_EQ(CodeOf([&] { DecodeTransport(stream.dump()); }), ErrorCode::kDataLoss);
}

TEST(StreamCodec, StreamsRoundTripWithAndWithoutFacts) {
  const Stream every = EveryField();
  EXPECT_EQ(DecodeStream(EncodeStream(every)), every);
  Stream bare = every;
  bare.reserved.clear();
  bare.released.clear();
  bare.timers.clear();
  EXPECT_EQ(DecodeStream(EncodeStream(bare)), bare);
  EXPECT_EQ(DecodeStream(EncodeStream(Stream{})), Stream{});
}

TEST(StreamCodec, AStreamIsTheDocumentedBytes) {
  Stream stream;
  stream.ref = {"c", "a", "t", "i"};
  stream.version = 2;
  stream.request_id = "r";
  stream.time = 5;
  stream.events = {{"T", "{}"}};
  const std::string bare = std::string(1, kStreamEncoding) + Str("c") + Str("a") + Str("t") +
                           Str("i") + I64(2) + Str("r") + I64(5) + U32(1) + Str("T") + Str("{}");
  EXPECT_EQ(EncodeStream(stream), bare + std::string(1, '\0'));
  stream.released = {{"n", "k", ReservationTenancy::kTenant}};
  EXPECT_EQ(EncodeStream(stream), bare + std::string(1, '\x01') + *EncodeFacts(stream));
  EXPECT_NE(kStreamEncoding, '{') << "JSON transports must stay distinguishable";
}

TEST(StreamCodec, TruncatedPaddedOrUnknownStreamsAreDataLoss) {
  const std::string bytes = EncodeStream(EveryField());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_EQ(CodeOf([&] { DecodeStream(std::string_view(bytes).substr(0, cut)); }),
              ErrorCode::kDataLoss)
        << "decoded " << cut << " of " << bytes.size() << " bytes";
  }
  EXPECT_EQ(CodeOf([&] { DecodeStream(bytes + "x"); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([&] { DecodeStream("\x02" + bytes.substr(1)); }), ErrorCode::kDataLoss);
  Stream bare;
  std::string flag = EncodeStream(bare);
  flag.back() = '\x02';  // the facts flag
  EXPECT_EQ(CodeOf([&] { DecodeStream(flag); }), ErrorCode::kDataLoss);
}

TEST(StreamCodec, TheTransportIsTheStreamEncodingAndDecodesEarlierJsonToo) {
  const Stream every = EveryField();
  const std::string transport = EncodeTransport(every);
  EXPECT_EQ(transport, EncodeStream(every));
  Stream expected = every;
  expected.transport = transport;
  EXPECT_EQ(DecodeTransport(transport), expected);

  // Builds before the binary encoding stored the stream's JSON.
  Stream ascii = every;
  ascii.ref.id = "id";
  ascii.reserved[1].key = "k2";
  const std::string json_transport = nlohmann::json(ascii).dump();
  expected = ascii;
  expected.transport = json_transport;
  EXPECT_EQ(DecodeTransport(json_transport), expected);

  EXPECT_EQ(CodeOf([&] { DecodeTransport("{\"ref\": 1}"); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([&] { DecodeTransport(""); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([&] { DecodeTransport("x"); }), ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace wow::core
