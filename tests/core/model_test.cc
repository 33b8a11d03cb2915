#include "wow/model.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "wow/error.h"
#include "wow/event_log.h"
#include "wow/stream.h"

namespace wow {
namespace {

TEST(PartitionOf, IsFixedForeverForKnownInputs) {
  // These values place data on disk: if this test fails, existing stores would be misread.
  EXPECT_EQ(PartitionOf("", "brand-1", 1), 0);
  const int p16 = PartitionOf("tenant-a", "brand-1", 16);
  const int p16_again = PartitionOf("tenant-a", "brand-1", 16);
  EXPECT_EQ(p16, p16_again);
  EXPECT_EQ(PartitionOf("tenant-a", "brand-1", 1024) % 16, p16);
}

TEST(PartitionOf, SeparatesTenantFromIdWithAZeroByte) {
  // "ab" + "" and "a" + "b" must hash different inputs.
  std::set<int> seen;
  for (int i = 0; i < 64; ++i) {
    seen.insert(PartitionOf("a", "b" + std::to_string(i), 1 << 20) -
                PartitionOf("ab", std::to_string(i), 1 << 20));
  }
  EXPECT_GT(seen.size(), 1u);
}

TEST(PartitionOf, SpreadsIdsOverPartitions) {
  std::vector<int> counts(8, 0);
  for (int i = 0; i < 8000; ++i) ++counts[PartitionOf("t", "id-" + std::to_string(i), 8)];
  for (int count : counts) {
    EXPECT_GT(count, 800);
    EXPECT_LT(count, 1200);
  }
}

TEST(ValidateRef, RefusesBadNamesWithAClearMessage) {
  EXPECT_NO_THROW(ValidateRef({"eshop-catalog", "brand", "t1", "b1"}));
  try {
    ValidateRef({"eshop-catalog", "Brand!", "t1", "b1"});
    FAIL() << "an invalid aggregate type was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("aggregate type \"Brand!\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(ValidateRef({"eshop-catalog", "brand", "t1", ""}), Error);
  EXPECT_THROW(ValidateRef({"", "brand", "t1", "b1"}), Error);
}

TEST(NewId, IsThirtyTwoHexDigitsAndFresh) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewId();
    ASSERT_EQ(id.size(), 32u);
    ASSERT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 1000u);
}

TEST(NewId, AnIdMadeInALaterMillisecondSortsAfter) {
  const std::string first = NewId();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const std::string second = NewId();
  EXPECT_LT(first, second);
  EXPECT_NE(first.substr(12), second.substr(12)) << "the random part repeats";
}

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock clock(1000);
  EXPECT_EQ(clock.NowMillis(), 1000);
  clock.Advance(std::chrono::milliseconds(250));
  EXPECT_EQ(clock.NowMillis(), 1250);
}

TEST(InvalidStreamReason, NamesWhatIsWrong) {
  Stream stream;
  stream.ref = {"shop", "order", "t", "o1"};
  stream.version = 1;
  stream.request_id = "r1";
  stream.events = {{"OrderPlaced", R"({"total": 1.10})"}};
  EXPECT_EQ(InvalidStreamReason(stream, "shop"), std::nullopt);
  EXPECT_NE(InvalidStreamReason(stream, "other")->find("not this log's"), std::string::npos);
  Stream no_events = stream;
  no_events.events.clear();
  EXPECT_NE(InvalidStreamReason(no_events, "shop")->find("no events"), std::string::npos);
  Stream bad_json = stream;
  bad_json.events[0].body = "{not json";
  EXPECT_NE(InvalidStreamReason(bad_json, "shop")->find("not a JSON object"), std::string::npos);
  for (const char* not_object : {"[1]", "5", R"("text")", "null", " "}) {
    Stream scalar = stream;
    scalar.events[0].body = not_object;
    EXPECT_NE(InvalidStreamReason(scalar, "shop").value_or("").find("not a JSON object"),
              std::string::npos)
        << not_object;
  }
  Stream version_zero = stream;
  version_zero.version = 0;
  EXPECT_NE(InvalidStreamReason(version_zero, "shop")->find("versions start at 1"), std::string::npos);
}

}  // namespace
}  // namespace wow

namespace wow {
namespace {

TEST(AppendResult, KindsHaveTheirNames) {
  EXPECT_EQ(KindName(AppendResult::Appended({1, 2}).kind()), "appended");
  EXPECT_EQ(KindName(AppendResult::Conflict().kind()), "conflict");
  EXPECT_EQ(KindName(AppendResult::Duplicate({0, 1}, 3).kind()), "duplicate");
  EXPECT_EQ(KindName(AppendResult::Refused("r").kind()), "refused");
  EXPECT_EQ(KindName(AppendResult::Unknown("u").kind()), "unknown");
}

}  // namespace
}  // namespace wow
