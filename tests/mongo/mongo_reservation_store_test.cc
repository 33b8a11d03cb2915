// MongoReservationStore against the MongoDB TEST SERVER (a test double), for what the contract
// suite cannot show: each error path through a fail point (a lost acknowledgement, a connection
// closed before the write, a write-concern error; once, answered by libmongoc's retry, and twice,
// an outcome left to the caller), the pool's wait-queue timeout, the format record, and the
// documents as seed 000 lays them out. Each test runs in a process of its own (ctest), with its
// own server, so fail points touch no other test.
#include <gtest/gtest.h>

#include <thread>

#include "support/mongo_test_deployment.h"
#include "wow/error.h"
#include "wow/mongo.h"

namespace wow {
namespace {

using std::chrono::milliseconds;
using testing_support::MongoTestServer;

const ReservationScope kScope{"shop", "user", "t1", "shop.user-name"};
const AggregateRef kAlice{"shop", "user", "t1", "alice"};
constexpr milliseconds kTtl{30'000};

class MongoReservationStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
    uri_ = testing_support::SharedMongoTestServer().uri();
    deployment_ = testing_support::FreshMongoDeployment(uri_);
    store_ = NewMongoReservationStore(deployment_, clock_);
    store_->Find(kScope, "warm-up");  // the collection and its format record, before fail points
  }
  void TearDown() override {
    if (!uri_.empty()) FailPoint(R"("off")", "{}");
  }

  std::string Command(const std::string& json, const std::string& database = "admin") {
    return testing_support::RunMongoCommand(uri_, json, database);
  }
  void FailPoint(const std::string& mode, const std::string& data) {
    testing_support::SetFailPoint(uri_, mode, data);
  }
  std::string Database() const { return Describe(*deployment_).database; }

  // The call's Error code, failing the test when it throws none.
  template <typename Call>
  std::optional<Error> ErrorOf(Call call) {
    try {
      call();
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "no Error thrown";
    return std::nullopt;
  }

  std::string uri_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::shared_ptr<MongoDeployment> deployment_;
  std::unique_ptr<ReservationStore> store_;
};

TEST_F(MongoReservationStoreTest, ALostAcknowledgementIsAnsweredByTheRetryAsTheWriteLanded) {
  FailPoint(R"({"times": 1})", R"({"failCommands": ["update"], "closeConnectionAfterReply": true})");
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  const auto held = store_->Find(kScope, "ann");
  ASSERT_TRUE(held);
  EXPECT_EQ(held->holds, std::set<std::string>{"h1"});
}

TEST_F(MongoReservationStoreTest, TwoLostAcknowledgementsAreAnUnknownOutcomeThatRepeatingSettles) {
  FailPoint(R"({"times": 2})", R"({"failCommands": ["update"], "closeConnectionAfterReply": true})");
  const auto error = ErrorOf([&] { store_->Reserve(kScope, "ann", kAlice, "h1", kTtl); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(error->what()).find("may or may not have been applied"), std::string::npos)
      << error->what();
  ASSERT_TRUE(store_->Find(kScope, "ann")) << "the write landed";
  EXPECT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl)) << "repeating is safe";
  EXPECT_EQ(store_->Find(kScope, "ann")->holds, std::set<std::string>{"h1"});
}

TEST_F(MongoReservationStoreTest, AConnectionClosedBeforeTheWriteIsRetriedOnceThenUnavailable) {
  FailPoint(R"({"times": 1})", R"({"failCommands": ["update"], "closeConnection": true})");
  EXPECT_TRUE(store_->Confirm(kScope, "ann", kAlice, 3));
  EXPECT_EQ(store_->Find(kScope, "ann")->version, 3);

  FailPoint(R"({"times": 2})", R"({"failCommands": ["update"], "closeConnection": true})");
  const auto error = ErrorOf([&] { store_->Reserve(kScope, "bea", kAlice, "h1", kTtl); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kUnavailable);
  EXPECT_FALSE(store_->Find(kScope, "bea")) << "the write never ran";
}

TEST_F(MongoReservationStoreTest, AWriteConcernErrorIsAnUnknownOutcome) {
  FailPoint(R"({"times": 1})", R"({"failCommands": ["update"], "writeConcernError": {"code": 64, "errmsg": "waiting for replication timed out"}})");
  const auto error = ErrorOf([&] { store_->Confirm(kScope, "ann", kAlice, 2); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(error->what()).find("may or may not have been applied"), std::string::npos);
  EXPECT_EQ(store_->Find(kScope, "ann")->state, ReservationState::kConfirmed) << "applied on the primary";

  // A retryable code is retried by libmongoc, and the retry answered as the first write.
  FailPoint(R"({"times": 1})", R"({"failCommands": ["delete"], "writeConcernError": {"code": 91, "errmsg": "shutting down"}})");
  EXPECT_TRUE(store_->Release(kScope, "ann", kAlice, 2));
  EXPECT_FALSE(store_->Find(kScope, "ann"));
}

TEST_F(MongoReservationStoreTest, AnAbandonWhosePullWasLostIsAnsweredByTheRetry) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  FailPoint(R"({"times": 1})", R"({"failCommands": ["update"], "closeConnectionAfterReply": true})");
  EXPECT_TRUE(store_->Abandon(kScope, "ann", kAlice, "h1"));
  EXPECT_FALSE(store_->Find(kScope, "ann"));
}

TEST_F(MongoReservationStoreTest, AServerErrorOfAStateChangeIsUnavailable) {
  FailPoint(R"({"times": 4})", R"({"failCommands": ["find"], "errorCode": 10107})");
  const auto error = ErrorOf([&] { store_->Find(kScope, "ann"); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kUnavailable) << error->what();
}

TEST_F(MongoReservationStoreTest, APoolWithNoFreeClientWithinTheWaitQueueTimeoutIsUnavailable) {
  MongoOptions options;
  options.database = Database();
  auto deployment = OpenMongoDeployment(uri_ + "&maxPoolSize=1&waitQueueTimeoutMS=200", options);
  auto store = NewMongoReservationStore(deployment, clock_);
  store->Find(kScope, "warm-up");
  FailPoint(R"({"times": 1})", R"({"failCommands": ["find"], "blockConnection": true, "blockTimeMS": 1500})");
  std::thread blocked([&] { store->Find(kScope, "ann"); });
  std::this_thread::sleep_for(milliseconds(300));
  const auto error = ErrorOf([&] { store->Find(kScope, "bea"); });
  blocked.join();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(error->what()).find("waitQueueTimeoutMS"), std::string::npos);
}

TEST_F(MongoReservationStoreTest, ACollectionOfAnotherFormatIsRefusedAndLeftAsItIs) {
  Command(R"({"insert": "wow_collections", "documents": [{"_id": "wow_reservation__shop__admin", )"
          R"("kind": "reservation", "context": "shop", "aggregate": "admin", "format": 99}]})",
          Database());
  const ReservationScope admins{"shop", "admin", "t1", "shop.user-name"};
  const auto error = ErrorOf(
      [&] { store_->Reserve(admins, "ann", {"shop", "admin", "t1", "a"}, "h1", kTtl); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(std::string(error->what()).find("format 99"), std::string::npos) << error->what();
  EXPECT_NE(Command(R"({"count": "wow_reservation__shop__admin"})", Database()).find(R"("n" : 0)"),
            std::string::npos);
}

TEST_F(MongoReservationStoreTest, WithDdlNoneAMissingCollectionIsAFailedPrecondition) {
  MongoOptions options;
  options.ddl = MongoOptions::Ddl::kNone;
  auto store = NewMongoReservationStore(testing_support::FreshMongoDeployment(uri_, options), clock_);
  const auto error = ErrorOf([&] { store->Reserve(kScope, "ann", kAlice, "h1", kTtl); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(std::string(error->what()).find("Ddl::kNone"), std::string::npos);
}

TEST_F(MongoReservationStoreTest, TheDocumentsAreLaidOutAsSeed000Says) {
  ASSERT_TRUE(store_->Reserve(kScope, "ann", kAlice, "h1", kTtl));
  const std::string find = R"({"find": "wow_reservation__shop__user", "filter": {"key": "ann"}})";
  const std::string pending = Command(find, Database());
  EXPECT_NE(pending.find(R"({ "_id" : { "t" : "t1", "n" : "shop.user-name", "k" : "ann" }, "tenant_id" : "t1", )"
                         R"("key" : "ann", "owner" : { "tenant_id" : "t1", "id" : "alice" }, "expires_at" : )" +
                         std::to_string(clock_->NowMillis() + kTtl.count()) +
                         R"(, "holds" : [ "h1" ], "version" : null })"),
            std::string::npos)
      << pending;
  ASSERT_TRUE(store_->Confirm(kScope, "ann", kAlice, 4));
  const std::string confirmed = Command(find, Database());
  EXPECT_NE(confirmed.find(R"("owner" : { "tenant_id" : "t1", "id" : "alice" }, "expires_at" : null, )"
                             R"("holds" : [  ], "version" : 4 })"),
            std::string::npos)
      << confirmed;
}

}  // namespace
}  // namespace wow
