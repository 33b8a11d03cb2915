// The ReservationStore contract (seed 001, DESIGN §5.1): every rule has a test named after it.
#include <gtest/gtest.h>

#include "contract/backends.h"
#include "wow/error.h"

namespace wow::contract {
namespace {

using std::chrono::milliseconds;

const ReservationScope kScope{"shop", "user", "t1", "shop.user-name"};
const AggregateRef kAlice{"shop", "user", "t1", "alice"};
const AggregateRef kBob{"shop", "user", "t1", "bob"};
constexpr milliseconds kTtl{10'000};

TEST_P(ReservationStoreContract, ReserveOfAFreeKeyTakesItPendingWithItsHold) {
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  auto r = store_->Find(kScope, "ann");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->owner, kAlice);
  EXPECT_EQ(r->state, ReservationState::kPending);
  EXPECT_EQ(r->holds, std::set<std::string>{"h1"});
  EXPECT_EQ(r->expires_at, clock_->NowMillis() + kTtl.count());
}

}  // namespace
}  // namespace wow::contract
