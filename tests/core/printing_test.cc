// The enums a test meets in a failure message print their names (operator<<, which GoogleTest
// uses), not their bytes.
#include <gtest/gtest.h>
#include <wow/command_processor.h>
#include <wow/error.h>
#include <wow/event_log.h>
#include <wow/reservation_store.h>
#include <wow/stream.h>
#include <wow/timer_store.h>

namespace {

TEST(Printing, EnumsPrintTheirNames) {
  EXPECT_EQ(::testing::PrintToString(wow::CommandResult::Kind::kAccepted), "accepted");
  EXPECT_EQ(::testing::PrintToString(wow::CommandResult::Kind::kDuplicate), "duplicate");
  EXPECT_EQ(::testing::PrintToString(wow::AppendResult::Kind::kConflict), "conflict");
  EXPECT_EQ(::testing::PrintToString(wow::ErrorCode::kUnavailable), "UNAVAILABLE");
  EXPECT_EQ(::testing::PrintToString(wow::ReservationState::kConfirmed), "CONFIRMED");
  EXPECT_EQ(::testing::PrintToString(wow::TimerState::kParked), "PARKED");
  EXPECT_EQ(::testing::PrintToString(wow::TimerRule::Kind::kRetry), "retry");
}

}  // namespace
