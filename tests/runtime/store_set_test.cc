// The store set (wow/store_set.h) and the node wired from it (wow/node.h): URIs, what each
// backend promises, wrappers, and one start and stop.
#include "wow/store_set.h"

#include <gtest/gtest.h>

#include <atomic>

#include "catalog.h"
#include "support/mongo_test_server.h"
#include "support/temp_dir.h"
#include "wow/error.h"
#include "wow/node.h"
#include "wow/store_wrappers.h"

namespace wow {
namespace {

// Succeeds when `call` throws Error(`code`) whose message contains `text`.
template <typename Call>
::testing::AssertionResult FailsWith(ErrorCode code, const std::string& text, Call call) {
  try {
    call();
  } catch (const Error& e) {
    if (e.code() == code && std::string(e.what()).find(text) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << ErrorCodeName(e.code()) << ": " << e.what();
  }
  return ::testing::AssertionFailure() << "no error";
}

StoreSetOptions WithPartitions(int partitions) {
  StoreSetOptions options;
  options.partitions = partitions;
  return options;
}

TEST(StoreUriTest, ParsesEachAcceptedForm) {
  EXPECT_EQ(ParseStoreUri("memory:").kind, StoreUri::Kind::kMemory);
  const StoreUri sqlite = ParseStoreUri("sqlite:var/shop.db");
  EXPECT_EQ(sqlite.kind, StoreUri::Kind::kSqlite);
  EXPECT_EQ(sqlite.location, "var/shop.db");
  const StoreUri bare = ParseStoreUri("/srv/shop.db");
  EXPECT_EQ(bare.kind, StoreUri::Kind::kSqlite);
  EXPECT_EQ(bare.location, "/srv/shop.db");
  EXPECT_EQ(ParseStoreUri("./odd:name.db").location, "./odd:name.db") << "no scheme before ':'";
  const StoreUri mongo = ParseStoreUri("mongodb://db1,db2/?replicaSet=rs0");
  EXPECT_EQ(mongo.kind, StoreUri::Kind::kMongo);
  EXPECT_EQ(mongo.location, "mongodb://db1,db2/?replicaSet=rs0");
  EXPECT_EQ(ParseStoreUri("mongodb+srv://cluster.example").kind, StoreUri::Kind::kMongo);
}

TEST(StoreUriTest, AMalformedOrUnknownUriIsInvalidNamingTheAcceptedForms) {
  for (const std::string uri : {"", "memory:extra", "sqlite:", "mongodb:", "mongodb://",
                                "postgres://db/shop", "redis:6379"}) {
    EXPECT_TRUE(FailsWith(ErrorCode::kInvalidArgument, "accepted: memory:, sqlite:PATH",
                          [&] { ParseStoreUri(uri); }))
        << "\"" << uri << "\"";
  }
}

TEST(OpenStoresTest, MemoryStoresConfirmKeysInTheAppendAndReportNoFigures) {
  const StoreSet stores = OpenStores("memory:", "shop");
  EXPECT_EQ(stores.context(), "shop");
  EXPECT_EQ(stores.partitions(), 16) << "a new log gets new_log_partitions";
  EXPECT_TRUE(stores.appends_confirm_keys());
  EXPECT_TRUE(stores.Metrics().empty());
  EXPECT_EQ(OpenStores("memory:", "shop", WithPartitions(4)).partitions(), 4);
}

TEST(OpenStoresTest, SqliteStoresShareAFileWhoseAppendsConfirmTheirKeys) {
#ifndef WOW_HAVE_SQLITE
  GTEST_SKIP() << "built without SQLite";
#endif
  testing_support::TempDir dir;
  const std::string path = dir.File("shop.db");
  {
    const StoreSet stores = OpenStores("sqlite:" + path, "shop", WithPartitions(8));
    EXPECT_TRUE(stores.appends_confirm_keys());
    EXPECT_EQ(stores.partitions(), 8);
    bool counted = false;
    for (const StoreMetric& metric : stores.Metrics()) {
      counted |= metric.name == "wow_sqlite_transactions_total" && metric.value >= 1;
    }
    EXPECT_TRUE(counted) << "creating the log committed a transaction";
  }
  EXPECT_EQ(OpenStores(path, "shop").partitions(), 8) << "a bare path; the log keeps its count";
  EXPECT_TRUE(FailsWith(ErrorCode::kFailedPrecondition, "8",
                        [&] { OpenStores("sqlite:" + path, "shop", WithPartitions(4)); }));
  EXPECT_EQ(OpenStores(path, "billing").partitions(), 16) << "another context of the file";
}

TEST(OpenStoresTest, AMongoUriOpensTheThreeMongoStoresOnOneDeploymentAfterCheckingIt) {
#ifdef WOW_HAVE_MONGO
  // Nothing listens on port 1: the deployment is unreachable, said as such.
  EXPECT_TRUE(FailsWith(ErrorCode::kUnavailable, "MongoDB", [] {
    OpenStores("mongodb://127.0.0.1:1/?replicaSet=rs0&serverSelectionTimeoutMS=200", "shop");
  }));
  if (auto reason = testing_support::MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
  testing_support::MongoTestServer server;
  {
    const StoreSet stores = OpenStores(server.uri(), "shop", WithPartitions(4));
    EXPECT_EQ(stores.partitions(), 4);
    EXPECT_FALSE(stores.appends_confirm_keys());
    Stream s;
    s.ref = {"shop", "brand", "t", "b"};
    s.version = 1;
    s.request_id = "r";
    s.events = {{"created", "{}"}};
    ASSERT_TRUE(stores.log()->Append(s).appended());
    Timer timer;
    timer.owner = s.ref;
    timer.key = "k";
    timer.partition = PartitionOf("t", "b", 4);
    timer.timer_id = "id";
    timer.version = 1;
    timer.target = s.ref;
    timer.command_type = "c";
    timer.body = "{}";
    EXPECT_TRUE(stores.timers()->Put(timer));
  }
  const StoreSet again = OpenStores(server.uri(), "shop");
  EXPECT_EQ(again.partitions(), 4) << "the log as it is";
  EXPECT_EQ(again.log()->Read({"shop", "brand", "t", "b"}, 1, kAnyVersion).size(), 1u);
  EXPECT_TRUE(again.timers()->Find({"shop", "brand", "t", "b"}, "k").has_value());
  EXPECT_TRUE(FailsWith(ErrorCode::kFailedPrecondition, "4",
                        [&] { OpenStores(server.uri(), "shop", WithPartitions(8)); }));
  testing_support::MongoTestServer::Options standalone_options;
  standalone_options.standalone = true;
  testing_support::MongoTestServer standalone(standalone_options);
  EXPECT_TRUE(FailsWith(ErrorCode::kFailedPrecondition, "standalone",
                        [&] { OpenStores(standalone.uri(), "shop"); }));
#else
  EXPECT_TRUE(FailsWith(ErrorCode::kFailedPrecondition, "WOW_WITH_MONGO=OFF",
                        [] { OpenStores("mongodb://127.0.0.1:1/?replicaSet=rs0", "shop"); }));
#endif
  EXPECT_TRUE(FailsWith(ErrorCode::kInvalidArgument, "context",
                        [] { OpenStores("memory:", "Not A Context"); }));
}

// Counts the appends that pass through.
class CountsAppends : public EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  AppendResult Append(const Stream& stream) override {
    ++appends;
    return EventLogWrapper::Append(stream);
  }
  std::atomic<int> appends{0};
};

TEST(OpenStoresTest, WithReplacesStoresByWrappersAndKeepsTheSetsPromise) {
#ifndef WOW_HAVE_SQLITE
  GTEST_SKIP() << "built without SQLite";
#endif
  testing_support::TempDir dir;
  const StoreSet stores = OpenStores("sqlite:" + dir.File("shop.db"), "eshop-catalog");
  auto counting = std::make_shared<CountsAppends>(stores.log());
  const StoreSet wrapped = stores.With(counting, nullptr);
  EXPECT_EQ(wrapped.log(), counting);
  EXPECT_EQ(wrapped.reservations(), stores.reservations());
  EXPECT_TRUE(wrapped.appends_confirm_keys());
  CommandProcessor processor(wrapped);
  processor.Register(eshop::BrandType());
  const AggregateRef brand{"eshop-catalog", "brand", "t1", "b1"};
  EXPECT_EQ(processor.Process(brand, CommandMessage::Of(eshop::CreateBrand{"Contoso"})).kind,
            CommandResult::Kind::kAccepted);
  EXPECT_EQ(counting->appends.load(), 1);
}

TEST(StoreSetTest, FactoriesAndTypesTakeStringViewConstants) {
  constexpr std::string_view kShop = "shop";
  constexpr std::string_view kBrand = "brand";
  auto clock = std::make_shared<ManualClock>();
  EXPECT_EQ(NewMemoryEventLog(kShop, clock)->context(), "shop");
  EXPECT_NO_THROW(NewMemoryTimerStore(kShop, 1));
  EXPECT_EQ(OpenStores("memory:", kShop).context(), "shop");
  EXPECT_EQ(AggregateType<int>(kBrand).name(), "brand");
}

TEST(NodeTest, WaitUntilCaughtUpNeedsTheNodesSubscriptions) {
  NodeOptions options;
  options.run_subscriptions = false;
  Node node(OpenStores("memory:", "eshop-catalog"), options);
  node.Start();
  EXPECT_TRUE(FailsWith(ErrorCode::kInvalidArgument, "no subscriptions",
                        [&] { node.WaitUntilCaughtUp(std::chrono::seconds(0)); }));
}

TEST(NodeTest, ANodeProcessesCommandsAndRunsItsSubscriptionsBetweenStartAndStop) {
  const StoreSet stores = OpenStores("memory:", "eshop-catalog", WithPartitions(2));
  NodeOptions options;
  options.name = "node-a";
  Node node(stores, options);
  node.Register(eshop::BrandType());
  node.Start();
  EXPECT_TRUE(FailsWith(ErrorCode::kInvalidArgument, "before the node starts",
                        [&] { node.Register(eshop::CategoryType()); }));
  const AggregateRef brand{"eshop-catalog", "brand", "t1", "b1"};
  EXPECT_EQ(node.processor().Process(brand, CommandMessage::Of(eshop::CreateBrand{"A"})).kind,
            CommandResult::Kind::kAccepted);
  // The node holds its partitions' leases under its name while started.
  bool leased = false;
  for (int attempt = 0; attempt < 500 && !leased; ++attempt) {
    const auto lease = stores.log()->LeaseOf(PartitionOf("t1", "b1", 2));
    leased = lease && lease->node == "node-a";
    if (!leased) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(leased);
  // A stream appended while the node runs is handled by every subscription it runs.
  const CommandResult second = node.processor().Process(
      AggregateRef{"eshop-catalog", "brand", "t1", "b2"}, eshop::CreateBrand{"B"});
  ASSERT_EQ(second.kind, CommandResult::Kind::kAccepted);
  EXPECT_TRUE(node.WaitUntilCaughtUp(std::chrono::seconds(5)));
  EXPECT_GE(stores.log()->Checkpoint(second.position.partition, "wow.timers"),
            second.position.sequence);
  node.Stop();
  node.Stop();  // idempotent
  const auto lease = stores.log()->LeaseOf(PartitionOf("t1", "b1", 2));
  EXPECT_TRUE(!lease || lease->expires_at <= stores.clock()->NowMillis())
      << "a stopped node gives its leases up";
}

}  // namespace
}  // namespace wow
