// MongoTimerStore against the MongoDB TEST SERVER (a test double), for what the contract suite
// cannot show: each error path of Settle through a fail point (a connection closed before the
// bulk write, once, answered by libmongoc's retry, and twice, an outcome left to the caller; a
// write-concern error; a refused update; a delete that fails after the updates applied), and a
// collection another node registered, read by the due read at once. Each test runs in a process
// of its own (ctest), so fail points touch no other test.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

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

TEST_F(MongoTimerStoreTest, OneSettleAppliesItsChangesInEachOwnerTypesCollection) {
  const Timer invoice = TimerOf("invoice", "i", 50);
  ASSERT_TRUE(store_->Put(invoice));
  const std::string counts = R"({"wowCommandCounts": 1, "reset": true})";
  testing_support::RunMongoCommand(uri_, counts);
  EXPECT_EQ(store_->Settle({{TimerChange::Kind::kClaim, a_, 5000},
                            {TimerChange::Kind::kClaim, invoice, 5000},
                            {TimerChange::Kind::kDone, b_, 0}}),
            3);
  // One bulk write per collection: order's claim and delete, invoice's claim.
  const nlohmann::json sent =
      nlohmann::json::parse(testing_support::RunMongoCommand(uri_, counts))["counts"];
  EXPECT_EQ(sent.value("update", 0), 2) << sent.dump();
  EXPECT_EQ(sent.value("delete", 0), 1) << sent.dump();
  EXPECT_EQ(StateOf(a_), TimerState::kFiring);
  EXPECT_EQ(StateOf(invoice), TimerState::kFiring);
  EXPECT_FALSE(store_->Find(b_.owner, b_.key).has_value());
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

// A timer collection of an earlier format (a database an older build wrote): the timers are a
// view of the log, so opening a store drops it, and the context's timer checkpoints before it.

class MongoTimerFormatTest : public MongoTimerStoreTest {
 protected:
  void SetUp() override {
    MongoTimerStoreTest::SetUp();
    if (IsSkipped()) return;
    database_ = Describe(*deployment_).database;
    log_ = NewMongoEventLog(deployment_, "shop", SystemClock::Instance());
    log_->Create(kPartitions);
    log_->CommitCheckpoint(0, "wow.timers", 5);
    log_->CommitCheckpoint(1, "wow.timers", 3);
    log_->CommitCheckpoint(0, "catalog", 7);
    billing_ = NewMongoEventLog(deployment_, "billing", SystemClock::Instance());
    billing_->Create(kPartitions);
    billing_->CommitCheckpoint(0, "wow.timers", 2);
  }
  // Sets the registry record of the order timers' collection: `set` is a $set document.
  void SetRecord(const std::string& set) {
    testing_support::RunMongoCommand(
        uri_,
        R"({"update": "wow_collections", "updates": [{"q": {"_id": "wow_timer__shop__order"}, )"
        R"("u": {"$set": )" + set + "}}]}",
        database_);
  }
  // A store opened as by a process started anew: a deployment of its own on the same database.
  std::unique_ptr<TimerStore> Reopen() {
    MongoOptions options;
    options.database = database_;
    return NewMongoTimerStore(OpenMongoDeployment(uri_, options), "shop", kPartitions);
  }
  std::string Record() {
    return testing_support::RunMongoCommand(
        uri_, R"({"find": "wow_collections", "filter": {"_id": "wow_timer__shop__order"}})",
        database_);
  }

  std::string database_;
  std::unique_ptr<EventLog> log_;
  std::unique_ptr<EventLog> billing_;
};

TEST_F(MongoTimerFormatTest, ACollectionOfAnEarlierFormatIsDroppedWithTheTimerCheckpointsOnOpen) {
  SetRecord(R"({"format": 4})");
  auto reopened = Reopen();
  EXPECT_EQ(Record().find("\"format\""), std::string::npos) << "the record is gone: " << Record();
  EXPECT_EQ(log_->Checkpoint(0, "wow.timers"), 0) << "the timers are put again from the start";
  EXPECT_EQ(log_->Checkpoint(1, "wow.timers"), 0);
  EXPECT_EQ(log_->Checkpoint(0, "catalog"), 7) << "another subscription's checkpoint stays";
  EXPECT_EQ(billing_->Checkpoint(0, "wow.timers"), 2) << "another context's too";
  EXPECT_FALSE(reopened->Find(a_.owner, a_.key).has_value()) << "dropped";
  ASSERT_TRUE(reopened->Put(a_)) << "made again at its first write";
  EXPECT_EQ(reopened->Find(a_.owner, a_.key), a_);
  EXPECT_NE(Record().find("\"format\" : 5"), std::string::npos) << Record();
  EXPECT_EQ(reopened->Due({0, 1, 2, 3}, 1000, 10).size(), 1u);
  Reopen();  // a current format: nothing more is dropped
  EXPECT_EQ(reopened->Find(a_.owner, a_.key), a_);
}

TEST_F(MongoTimerFormatTest, AnotherNodesRebuildIsWaitedForAndAStaleClaimIsTakenOver) {
  const EpochMillis now = SystemClock::Instance()->NowMillis();
  SetRecord(R"({"format": 4, "rebuild_since": )" + std::to_string(now) + "}");
  std::jthread other_node([&] {  // finishes its rebuild (here: only its record) in 600 ms
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    testing_support::RunMongoCommand(
        uri_,
        R"({"delete": "wow_collections", "deletes": [{"q": {"_id": "wow_timer__shop__order"}, )"
        R"("limit": 1}]})",
        database_);
  });
  const auto started = std::chrono::steady_clock::now();
  auto waited = Reopen();
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(500))
      << "it waited for the other node";
  EXPECT_TRUE(waited->Find(a_.owner, a_.key).has_value()) << "the claimant's to drop, not its";
  EXPECT_EQ(log_->Checkpoint(0, "wow.timers"), 5);
  other_node.join();

  SetRecord(R"({"format": 4, "rebuild_since": )" + std::to_string(now - 60'000) + "}");
  auto took_over = Reopen();
  EXPECT_FALSE(took_over->Find(a_.owner, a_.key).has_value()) << "a lapsed claim is taken over";
  EXPECT_EQ(log_->Checkpoint(0, "wow.timers"), 0);
}

TEST_F(MongoTimerFormatTest, ACollectionOfALaterFormatIsRefusedNotDropped) {
  SetRecord(R"({"format": 6})");
  auto reopened = Reopen();
  EXPECT_EQ(log_->Checkpoint(0, "wow.timers"), 5) << "nothing dropped";
  try {
    reopened->Put(b_);
    ADD_FAILURE() << "a collection of a later format was written";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << e.what();
    EXPECT_NE(std::string(e.what()).find("format 6"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store_->Find(a_.owner, a_.key).has_value());
  try {
    reopened->Due({0, 1, 2, 3}, 1000, 10);
    ADD_FAILURE() << "the due read read a collection of a later format";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << e.what();
    EXPECT_NE(std::string(e.what()).find("timer format 6"), std::string::npos) << e.what();
  }
}

TEST_F(MongoTimerFormatTest, WithDdlNoneAnEarlierFormatIsRefusedAndNothingDropped) {
  SetRecord(R"({"format": 4})");
  MongoOptions options;
  options.database = database_;
  options.ddl = MongoOptions::Ddl::kNone;
  try {
    NewMongoTimerStore(OpenMongoDeployment(uri_, options), "shop", kPartitions);
    ADD_FAILURE() << "opened with Ddl::kNone over a collection of an earlier format";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << e.what();
    EXPECT_NE(std::string(e.what()).find("Ddl::kAuto"), std::string::npos) << e.what();
  }
  EXPECT_EQ(log_->Checkpoint(0, "wow.timers"), 5) << "nothing dropped";
  EXPECT_NE(Record().find("\"format\" : 4"), std::string::npos) << Record();
}

// On a mongos (the test server in mongos mode, of 3 shards), a new timer collection is sharded by
// {partition: 1}, split into one chunk per partition and chunk p moved to shard p mod 3.
TEST(MongoTimerStoreOnAMongos, ANewCollectionHasOneChunkPerPartitionSpreadOverTheShards) {
  if (auto reason = MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
  MongoTestServer::Options mongos;
  mongos.mongos_shards = 3;
  MongoTestServer server(mongos);
  MongoOptions options;
  options.database = "sharded_" + NewId().substr(20);
  auto deployment = OpenMongoDeployment(server.uri(), options);
  EXPECT_TRUE(Describe(*deployment).mongos);
  auto timers = NewMongoTimerStore(deployment, "shop", kPartitions);
  const Timer timer = TimerOf("order", "a", 100);
  ASSERT_TRUE(timers->Put(timer));
  EXPECT_EQ(timers->Due({0, 1, 2, 3}, 1000, 10).size(), 1u);
  const nlohmann::json reply = nlohmann::json::parse(testing_support::RunMongoCommand(
      server.uri(),
      R"({"find": "chunks", "filter": {"ns": ")" + options.database +
          R"(.wow_timer__shop__order"}})",
      "config"));
  std::map<std::string, std::string> shard_of;  // a chunk's first partition -> its shard
  for (const nlohmann::json& chunk : reply["cursor"]["firstBatch"]) {
    const nlohmann::json& min = chunk["min"]["partition"];
    shard_of[min.is_object() ? "MinKey" : min.dump()] = chunk["shard"];
  }
  EXPECT_EQ(shard_of, (std::map<std::string, std::string>{
                          {"MinKey", "shard0"}, {"1", "shard1"}, {"2", "shard2"}, {"3", "shard0"}}))
      << reply.dump();
  // A store opened again finds it sharded: nothing is split twice.
  ASSERT_TRUE(NewMongoTimerStore(OpenMongoDeployment(server.uri(), options), "shop", kPartitions)
                  ->Put(TimerOf("order", "b", 200)));
}

}  // namespace
}  // namespace wow
