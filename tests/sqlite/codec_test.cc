// The encodings the SQLite tables keep: they round-trip, and damaged bytes are DataLoss.
#include "store/sqlite/codec.h"

#include <gtest/gtest.h>

#include "wow/error.h"

namespace wow::sqlite {
namespace {

TEST(SqliteCodec, EventsRoundTripByteForByte) {
  const std::vector<EventRecord> events = {
      {"a.Created", R"({"name": "Ä \u0000 x", "n": 1.10})"}, {"a.Renamed", "{}"}, {"", ""}};
  EXPECT_EQ(DecodeEvents(EncodeEvents(events)), events);
  EXPECT_TRUE(DecodeEvents(EncodeEvents({})).empty());
}

TEST(SqliteCodec, TruncatedOrPaddedEventsAreDataLoss) {
  const std::string bytes = EncodeEvents({{"a.Created", R"({"name": "x"})"}});
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    try {
      DecodeEvents(std::string_view(bytes).substr(0, cut));
      FAIL() << "decoded " << cut << " of " << bytes.size() << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kDataLoss);
    }
  }
  try {
    DecodeEvents(bytes + "x");
    FAIL() << "decoded trailing bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kDataLoss);
  }
}

TEST(SqliteCodec, FactsRoundTripAndAreNullWhenThereAreNone) {
  Stream stream;
  EXPECT_EQ(EncodeFacts(stream), std::nullopt);
  stream.reserved = {{"ns", "k1", ReservationTenancy::kSystem}};
  stream.released = {{"ns", "k0", ReservationTenancy::kTenant}};
  TimerFact schedule;
  schedule.key = "t";
  schedule.timer_id = "id";
  schedule.due_at = 42;
  schedule.target = {"c", "a", "", "x"};
  schedule.command_type = "c.Do";
  schedule.body = "{}";
  TimerFact cancel;
  cancel.kind = TimerFact::Kind::kCancel;
  cancel.key = "u";
  stream.timers = {schedule, cancel};
  Stream decoded;
  DecodeFacts(*EncodeFacts(stream), decoded);
  EXPECT_EQ(decoded.reserved, stream.reserved);
  EXPECT_EQ(decoded.released, stream.released);
  EXPECT_EQ(decoded.timers, stream.timers);
}

TEST(SqliteCodec, DamagedJsonIsDataLossAndBadUtf8IsInvalidArgument) {
  Stream stream;
  EXPECT_THROW(DecodeFacts("{not json", stream), Error);
  EXPECT_THROW(DecodeHolds("[1, 2]"), Error);
  EXPECT_THROW(DecodeRule("{}"), Error);
  try {
    EncodeHolds({std::string("\xff\xfe")});
    FAIL() << "invalid UTF-8 was encoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace wow::sqlite
