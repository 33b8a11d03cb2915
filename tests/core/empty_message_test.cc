// WOW_DEFINE_EMPTY_MESSAGE: a command or event with no fields is written as {} and read back.
#include <gtest/gtest.h>
#include <wow/aggregate.h>

namespace {

struct Ping {
  static constexpr std::string_view kType = "test.Ping";
};
WOW_DEFINE_EMPTY_MESSAGE(Ping)

static_assert(wow::Message<Ping>);
static_assert(wow::Message<wow::DeleteAggregate>);

TEST(EmptyMessage, WritesAnEmptyObjectAndReadsItBack) {
  EXPECT_EQ(nlohmann::json(Ping{}), nlohmann::json::object());
  EXPECT_NO_THROW(nlohmann::json::object().get<Ping>());
  const wow::Decision decision = wow::Decision::Events(Ping{});
  ASSERT_EQ(decision.events().size(), 1u);
  EXPECT_EQ(decision.events()[0].type, "test.Ping");
  EXPECT_EQ(decision.events()[0].body, "{}");
}

}  // namespace
