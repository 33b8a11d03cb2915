// MongoTimerStore against the MongoDB TEST SERVER (a test double), for what the contract suite
// cannot show: each error path of Settle through a fail point (a connection closed before the
// bulk write, once, answered by libmongoc's retry, and twice, an outcome left to the caller; a
// write-concern error; a refused update; a delete that fails after the updates applied), and a
// collection another node registered, read by the due read at once. Each test runs in a process
// of its own (ctest), so fail points touch no other test.
#include <gtest/gtest.h>

#include "support/mongo_test_deployment.h"
#include "wow/error.h"
#include "wow/mongo.h"

namespace wow {
namespace {

using testing_support::MongoTestServer;

constexpr int kPartitions = 4;

Timer TimerOf(const std::string& aggregate, const std::string& id, EpochMillis due_at) {
  Timer t;
  t.owner = {"shop", aggregate, "t1", id};
  t.key = "expire";
  t.partition = PartitionOf("t1", id, kPartitions);
  t.timer_id = "tid-" + id;
  t.version = 1;
  t.due_at = due_at;
  t.target = t.owner;
  t.command_type = "expire";
  t.body = "{}";
  return t;
}

class MongoTimerStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
    uri_ = testing_support::SharedMongoTestServer().uri();
    deployment_ = testing_support::FreshMongoDeployment(uri_);
    store_ = NewMongoTimerStore(deployment_, "shop", kPartitions);
    a_ = TimerOf("order", "a", 100);
    b_ = TimerOf("order", "b", 200);
    ASSERT_TRUE(store_->Put(a_));
    ASSERT_TRUE(store_->Put(b_));
  }
  void TearDown() override {
    if (!uri_.empty()) testing_support::SetFailPoint(uri_, R"("off")", "{}");
  }
  void FailPoint(const std::string& mode, const std::string& data) {
    testing_support::SetFailPoint(uri_, mode, data);
  }
  std::optional<Error> SettleError(const std::vector<TimerChange>& changes) {
    try {
      store_->Settle(changes);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "no Error thrown";
    return std::nullopt;
  }
  TimerState StateOf(const Timer& t) { return store_->Find(t.owner, t.key).value().state; }

  std::string uri_;
  std::shared_ptr<MongoDeployment> deployment_;
  std::unique_ptr<TimerStore> store_;
  Timer a_, b_;
};

TEST_F(MongoTimerStoreTest, AConnectionClosedOnceIsRetriedAndTwiceLeavesTheOutcomeToTheCaller) {
  FailPoint(R"({"times": 1})", R"({"failCommands": ["update"], "closeConnection": true})");
  EXPECT_EQ(store_->Settle({{TimerChange::Kind::kClaim, a_, 5000}}), 1) << "libmongoc's retry";
  EXPECT_EQ(StateOf(a_), TimerState::kFiring);

  FailPoint(R"({"times": 2})", R"({"failCommands": ["update"], "closeConnection": true})");
  const auto error = SettleError({{TimerChange::Kind::kClaim, b_, 5000}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kUnavailable) << error->what();
  EXPECT_NE(std::string(error->what()).find("settling"), std::string::npos) << error->what();
  EXPECT_EQ(StateOf(b_), TimerState::kPending) << "closed before the write";
  EXPECT_EQ(store_->Settle({{TimerChange::Kind::kClaim, b_, 5000}}), 1) << "the caller's retry";
}

TEST_F(MongoTimerStoreTest, AWriteConcernErrorIsAnUnknownOutcomeThatApplied) {
  FailPoint(R"({"times": 1})", R"({"failCommands": ["update"], "writeConcernError": {"code": 64, "errmsg": "waiting for replication timed out"}})");
  const auto error = SettleError({{TimerChange::Kind::kClaim, a_, 5000}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kUnavailable) << error->what();
  EXPECT_EQ(StateOf(a_), TimerState::kFiring) << "applied on the primary";
  EXPECT_EQ(store_->Settle({{TimerChange::Kind::kClaim, a_, 5000}}), 0)
      << "a retry of the same change applies to nothing: the timer is no longer as loaded";
}

TEST_F(MongoTimerStoreTest, ARefusedUpdateIsAnErrorAndChangesNothing) {
  FailPoint(R"({"times": 1})", R"({"failCommands": ["update"], "errorCode": 2})");
  const auto error = SettleError({{TimerChange::Kind::kClaim, a_, 5000}});
  ASSERT_TRUE(error);
  EXPECT_NE(std::string(error->what()).find("wow_timer__shop__order"), std::string::npos)
      << error->what();
  EXPECT_EQ(StateOf(a_), TimerState::kPending);
}

TEST_F(MongoTimerStoreTest, ADeleteThatFailsAfterTheUpdatesLeavesTheUpdatesApplied) {
  FailPoint(R"({"times": 2})", R"({"failCommands": ["delete"], "closeConnection": true})");
  const auto error =
      SettleError({{TimerChange::Kind::kClaim, a_, 5000}, {TimerChange::Kind::kDone, b_, 0}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kUnavailable) << error->what();
  EXPECT_EQ(StateOf(a_), TimerState::kFiring) << "the update went first and applied";
  EXPECT_TRUE(store_->Find(b_.owner, b_.key).has_value()) << "the delete did not";
  EXPECT_EQ(store_->Settle({{TimerChange::Kind::kClaim, a_, 5000},
                            {TimerChange::Kind::kDone, b_, 0}}),
            1)
      << "reloaded and settled again, only the delete applies";
}

TEST_F(MongoTimerStoreTest, ACollectionAnotherNodeRegisteredIsReadByTheNextDueReadAtOnce) {
  EXPECT_EQ(store_->Due({0, 1, 2, 3}, 1000, 10).size(), 2u) << "the registry read: order";
  MongoOptions options;
  options.database = Describe(*deployment_).database;
  auto other = NewMongoTimerStore(OpenMongoDeployment(uri_, options), "shop", kPartitions);
  const Timer invoice = TimerOf("invoice", "i", 50);
  ASSERT_TRUE(other->Put(invoice));
  const std::vector<Timer> due = store_->Due({0, 1, 2, 3}, 1000, 10);
  ASSERT_EQ(due.size(), 3u) << "the count of collections differed, so the registry was read again";
  EXPECT_EQ(due.front(), invoice) << "merged by due time";
}

}  // namespace
}  // namespace wow
