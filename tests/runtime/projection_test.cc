// Projections over every store set that keeps read models: the rows' rules (versioned puts,
// paging, prefixes), an entry's writes kept together or not at all, exactly once on SQLite (the
// checkpoint commits with the rows, so a failure between the rows and the runner's own commit
// applies nothing twice) and at least once on memory and MongoDB (the test server, a test double),
// the lag, and the rebuild.
#include "wow/projection.h"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>

#include "durable_backends.h"
#include "support/temp_dir.h"
#ifdef WOW_HAVE_MONGO
#include "support/mongo_test_deployment.h"
#endif
#include "wow/error.h"
#include "wow/store_set.h"
#include "wow/store_wrappers.h"

namespace wow {
namespace {

constexpr const char* kContext = "shop";

struct Counted {
  static constexpr std::string_view kType = "test.Counted";
  int n = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Counted, n)

Stream StreamOf(const std::string& id, Version version, int n) {
  Stream stream;
  stream.ref = {kContext, "counter", "t1", id};
  stream.version = version;
  stream.request_id = id + "@" + std::to_string(version);
  stream.events = {{std::string(Counted::kType), nlohmann::json(Counted{n}).dump()}};
  return stream;
}

// A projection that is not idempotent on purpose: every application of an entry adds one to the
// row "applied", so the row counts applications; and a versioned row per aggregate.
std::shared_ptr<Projection> CountingProjection(std::atomic<int>* fail_next = nullptr) {
  auto projection =
      std::make_shared<Projection>("counting", std::vector<std::string>{"counters", "totals"});
  projection->On<Counted>([fail_next](const Counted& e, const Stream& s, ReadModelWriter& rows) {
    rows.Put({"counters", s.ref.tenant_id, s.ref.id, s.version, "k" + s.ref.id,
              nlohmann::json{{"n", e.n}}.dump()});
    const std::optional<ReadModelRow> total = rows.Find("totals", "", "applied");
    const Version applied = total ? total->version : 0;
    rows.Put({"totals", "", "applied", applied + 1, "", "{}"});
    if (fail_next != nullptr && fail_next->exchange(0) != 0) {
      throw Error(ErrorCode::kUnavailable, "injected: after the rows, before the commit");
    }
  });
  return projection;
}

// Fails every checkpoint commit of the runner: the crash between an entry's rows and the
// runner's checkpoint.
class NoCheckpointLog : public EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  void CommitCheckpoint(int, const std::string&, Sequence) override {
    throw Error(ErrorCode::kUnavailable, "injected: the checkpoint commit fails");
  }
};

class ProjectionTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string uri = GetParam() == "sqlite" ? "sqlite:" + dir_.File("p.db") : "memory:";
#ifdef WOW_HAVE_MONGO
    if (GetParam() == "mongo") {
      if (auto reason = testing_support::MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
      uri = testing_support::FreshMongoTestServerUri();
    }
#endif
    StoreSetOptions options;
    options.partitions = 2;
    options.clock = clock_;
    stores_ = std::make_unique<StoreSet>(OpenStores(uri, kContext, options));
  }
  int Append(int aggregates, int versions) {
    int appended = 0;
    for (Version v = 1; v <= versions; ++v) {
      for (int a = 0; a < aggregates; ++a) {
        EXPECT_TRUE(
            stores_->log()
                ->Append(StreamOf("a" + std::to_string(a), v, a * 100 + static_cast<int>(v)))
                .appended());
        ++appended;
      }
    }
    return appended;
  }
  ReadModelStore& rows() { return *stores_->read_models(); }
  Version Applied() {
    const std::optional<ReadModelRow> total = rows().Find("totals", "", "applied");
    return total ? total->version : 0;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  testing_support::TempDir dir_;
  std::unique_ptr<StoreSet> stores_;
};

TEST_P(ProjectionTest, APutReplacesOnlyAnEarlierVersionAndAListPagesByIdWithinATenant) {
  rows().Apply("projection.t", {0, 1}, [](ReadModelWriter& w) {
    EXPECT_TRUE(w.Put({"brands", "t1", "b2", 2, "beta", R"({"x":2})"}));
    EXPECT_TRUE(w.Put({"brands", "t1", "b1", 1, "alpha", "{}"}));
    EXPECT_TRUE(w.Put({"brands", "t1", "b3", 1, "alps", "{}"}));
    EXPECT_TRUE(w.Put({"brands", "t2", "b0", 1, "alpha", "{}"}));
    EXPECT_FALSE(w.Put({"brands", "t1", "b2", 2, "gamma", "{}"})) << "the same version again";
    EXPECT_EQ(w.Find("brands", "t1", "b2")->index_key, "beta") << "this entry's own write";
  });
  EXPECT_EQ(rows().Find("brands", "t1", "b2")->body, R"({"x":2})");
  EXPECT_FALSE(rows().Find("brands", "t1", "b9").has_value());

  auto ids = [](const std::vector<ReadModelRow>& page) {
    std::vector<std::string> out;
    for (const auto& row : page) out.push_back(row.id);
    return out;
  };
  EXPECT_EQ(ids(rows().List({"brands", "t1", "", "", 2})), (std::vector<std::string>{"b1", "b2"}));
  EXPECT_EQ(ids(rows().List({"brands", "t1", "b2", "", 2})), (std::vector<std::string>{"b3"}));
  EXPECT_EQ(ids(rows().List({"brands", "t1", "", "al", 10})),
            (std::vector<std::string>{"b1", "b3"}));
  EXPECT_EQ(ids(rows().List({"brands", "t1", "b1", "al", 10})), (std::vector<std::string>{"b3"}));
  EXPECT_TRUE(rows().List({"brands", "t3", "", "", 10}).empty());
  EXPECT_THROW(rows().List({"brands", "t1", "", "", 0}), Error);
  EXPECT_THROW(rows().List({"brands", "t1", "", "", kMaxReadModelPage + 1}), Error);
}

TEST_P(ProjectionTest, AnEntryWhoseWorkThrowsKeepsNoneOfItsWrites) {
  EXPECT_THROW(rows().Apply("projection.t", {0, 1},
                            [](ReadModelWriter& w) {
                              w.Put({"brands", "t1", "b1", 1, "alpha", "{}"});
                              throw Error(ErrorCode::kUnavailable, "injected");
                            }),
               Error);
  EXPECT_FALSE(rows().Find("brands", "t1", "b1").has_value());
  EXPECT_THROW(rows().Apply("projection.t", {0, 2},
                            [](ReadModelWriter& w) {
                              w.Put({"brands", "t1", "b1", 1, "", "{"});
                            }),
               Error)
      << "a body that is not JSON";
}

TEST_P(ProjectionTest, AFailureAfterTheRowsAppliesTheEntryAgainWholeAndOnce) {
  const int appended = Append(3, 4);
  std::atomic<int> fail_next{1};
  auto projection = CountingProjection(&fail_next);
  SubscriptionRunner runner(stores_->log(),
                            {NewProjectionSubscription(projection, stores_->read_models())});
  EXPECT_THROW(runner.CatchUp(), Error);
  EXPECT_EQ(Applied(), 0) << "the failed entry's rows are not kept";
  EXPECT_EQ(runner.CatchUp(), appended) << "every entry, the failed one again";
  EXPECT_EQ(Applied(), appended);
  EXPECT_EQ(nlohmann::json::parse(rows().Find("counters", "t1", "a2")->body)["n"], 204);
}

TEST_P(ProjectionTest, ACheckpointCommitThatFailsAppliesNothingTwiceOnSqliteAtLeastOnceElsewhere) {
  const int appended = Append(4, 3);
  auto projection = CountingProjection();
  const Sequence first = stores_->log()->Head(0);
  ASSERT_GT(first, 0);
  {
    // Handles partition 0, then its checkpoint commit fails: the crash between rows and commit.
    SubscriptionRunner crashed(std::make_shared<NoCheckpointLog>(stores_->log()),
                               {NewProjectionSubscription(projection, stores_->read_models())});
    EXPECT_THROW(crashed.CatchUp(), Error);
  }
  EXPECT_EQ(Applied(), first);
  const Sequence behind = SubscriptionLag(*stores_->log(), projection->subscription())[0];
  clock_->Advance(SubscriptionRunnerOptions{}.lease_ttl);  // the crashed runner's leases expire
  SubscriptionRunner restarted(stores_->log(),
                               {NewProjectionSubscription(projection, stores_->read_models())});
  const int redelivered = restarted.CatchUp();
  if (rows().transactional()) {
    EXPECT_EQ(behind, 0) << "the checkpoint committed with the rows";
    EXPECT_EQ(redelivered, appended - first);
    EXPECT_EQ(Applied(), appended) << "exactly once";
  } else {
    EXPECT_EQ(behind, first) << "no checkpoint was committed";
    EXPECT_EQ(redelivered, appended);
    EXPECT_EQ(Applied(), appended + first) << "at least once: the counter is not idempotent";
  }
  EXPECT_EQ(nlohmann::json::parse(rows().Find("counters", "t1", "a3")->body)["n"], 303)
      << "the versioned rows end right either way";
  for (const Sequence left : SubscriptionLag(*stores_->log(), projection->subscription())) {
    EXPECT_EQ(left, 0);
  }
}

TEST_P(ProjectionTest, ARebuildDropsTheRowsAndReplaysTheLogWithProgress) {
  const int appended = Append(5, 2);
  auto projection = CountingProjection();
  SubscriptionRunner runner(stores_->log(),
                            {NewProjectionSubscription(projection, stores_->read_models())});
  runner.CatchUp();
  for (int p = 0; p < stores_->partitions(); ++p) stores_->log()->ReleaseLease(p, runner.node());
  if (GetParam() == "memory") {
    EXPECT_THROW(RebuildProjection(*stores_, projection), Error) << "the log keeps checkpoints";
    EXPECT_EQ(Applied(), appended) << "nothing dropped";
    return;
  }
  std::int64_t last = 0;
  std::int64_t of = 0;
  EXPECT_EQ(RebuildProjection(*stores_, projection,
                              [&](std::int64_t done, std::int64_t total) {
                                EXPECT_GT(done, last);
                                last = done;
                                of = total;
                              }),
            appended);
  EXPECT_EQ(last, appended);
  EXPECT_EQ(of, appended);
  EXPECT_EQ(Applied(), appended) << "the counter started again from nothing";
}

std::vector<std::string> ProjectionBackends() {
  std::vector<std::string> backends = testing_support::DurableBackends();
  backends.insert(backends.begin(), "memory");
  return backends;
}

INSTANTIATE_TEST_SUITE_P(Backends, ProjectionTest, ::testing::ValuesIn(ProjectionBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace wow
