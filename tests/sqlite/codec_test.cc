// The JSON the SQLite tables keep for holds and rules: damaged text is DataLoss, a string JSON
// cannot hold is InvalidArgument. (The log's binary columns: tests/core/stream_codec_test.cc.)
#include "store/sqlite/codec.h"

#include <gtest/gtest.h>

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

TEST(SqliteCodec, DamagedJsonIsDataLossAndBadUtf8IsInvalidArgument) {
  EXPECT_EQ(CodeOf([] { DecodeHolds("[1, 2]"); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([] { DecodeRule("{}", "timer \"t\""); }), ErrorCode::kDataLoss);
  EXPECT_EQ(CodeOf([] { EncodeHolds({std::string("\xff\xfe")}); }), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace wow::sqlite
