// The encodings the SQLite tables keep: they round-trip, their bytes are the documented layout,
// and damaged bytes are DataLoss.
#include "store/sqlite/codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "wow/error.h"

namespace wow::sqlite {
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
  schedule.rule = {"retry", 7, std::int64_t{1} << 40, -1};
  TimerFact cancel;
  cancel.kind = TimerFact::Kind::kCancel;
  cancel.key = "u";
  stream.timers = {schedule, cancel, schedule};
  return stream;
}

TEST(SqliteCodec, EventsRoundTripByteForByte) {
  const std::vector<EventRecord> events = {
      {"a.Created", R"({"name": "Ä \u0000 x", "n": 1.10})"}, {"a.Renamed", "{}"}, {"", ""}};
  EXPECT_EQ(DecodeEvents(EncodeEvents(events)), events);
  EXPECT_TRUE(DecodeEvents(EncodeEvents({})).empty());
}

TEST(SqliteCodec, EventsAreTheDocumentedBytes) {
  EXPECT_EQ(EncodeEvents({{"T", "{}"}}), U32(1) + Str("T") + Str("{}"));
}

TEST(SqliteCodec, TruncatedOrPaddedEventsAreDataLoss) {
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

TEST(SqliteCodec, FactsRoundTripAndAreNullWhenThereAreNone) {
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

TEST(SqliteCodec, FactsAreTheDocumentedBytes) {
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

TEST(SqliteCodec, TruncatedPaddedOrUnknownFactsAreDataLoss) {
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

TEST(SqliteCodec, ATimerRuleOfMoreAttemptsThanAnIntIsDataLoss) {
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

TEST(SqliteCodec, DamagedJsonIsDataLossAndBadUtf8IsInvalidArgument) {
  EXPECT_EQ(CodeOf([] { DecodeHolds("[1, 2]"); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([] { DecodeRule("{}"); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([] { EncodeHolds({std::string("\xff\xfe")}); }), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace wow::sqlite
