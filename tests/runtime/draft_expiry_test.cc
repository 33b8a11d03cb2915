// The catalog's drafts on a SQLite file and on MongoDB (the test server, a test double), through
// nodes as the service runs them, with an injected
// clock: the expiry timer the creating decision scheduled fires once, also when the node that
// stored it stopped and another starts while it is due; the name is free afterwards and the list
// shows the brand expired; a published draft is never expired.
#include <gtest/gtest.h>

#include <thread>

#include "catalog.h"
#include "durable_backends.h"
#include "support/temp_dir.h"
#ifdef WOW_HAVE_MONGO
#include "support/mongo_test_deployment.h"
#endif
#include "wow/node.h"
#include "wow/projection.h"
#include "wow/store_set.h"

namespace eshop {
namespace {

using std::chrono::milliseconds;

constexpr std::int64_t kDraftMs = 7LL * 24 * 3600 * 1000;

class DraftExpiry : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    uri_ = "sqlite:" + dir_.File("c.db");
#ifdef WOW_HAVE_MONGO
    if (GetParam() == "mongo") {
      if (auto reason = wow::testing_support::MongoTestServer::Unavailable()) {
        GTEST_SKIP() << *reason;
      }
      uri_ = wow::testing_support::FreshMongoTestServerUri();
    }
#endif
  }
  // A node on the file, started: the catalog's types, its projection, the timers.
  std::unique_ptr<wow::Node> StartNode() {
    wow::StoreSetOptions options;
    options.clock = clock_;
    options.partitions = 2;
    const wow::StoreSet stores = wow::OpenStores(uri_, kContext, options);
    wow::NodeOptions node_options;
    node_options.subscriptions.checkpoint_interval = milliseconds(1);
    node_options.timers.poll_interval = milliseconds(5);
    auto node = std::make_unique<wow::Node>(stores, node_options);
    node->Register(BrandType());
    node->Register(CategoryType());
    node->AddSubscription(
        wow::NewProjectionSubscription(CatalogProjection(), stores.read_models()));
    node->Start();
    return node;
  }
  static wow::AggregateRef Brand(const std::string& id) {
    return {std::string(kContext), "brand", "acme", id};
  }
  // The events of `ref` in the log, by type.
  static std::vector<std::string> EventTypes(wow::Node& node, const wow::AggregateRef& ref) {
    std::vector<std::string> types;
    for (const wow::Stream& stream : node.stores().log()->Read(ref, 1, 1000)) {
      for (const wow::EventRecord& event : stream.events) types.push_back(event.type);
    }
    return types;
  }
  // Waits until `ref`'s log holds `n` streams, for at most 10 s.
  static bool AwaitVersion(wow::Node& node, const wow::AggregateRef& ref, wow::Version n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (static_cast<wow::Version>(node.stores().log()->Read(ref, 1, 1000).size()) >= n) {
        return true;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    return false;
  }

  std::shared_ptr<wow::ManualClock> clock_ = std::make_shared<wow::ManualClock>();
  wow::testing_support::TempDir dir_;
  std::string uri_;
};

TEST_P(DraftExpiry, ADraftDueWhileNoNodeRunsExpiresOnceAfterARestartAndItsNameIsFree) {
  {
    auto node = StartNode();
    const wow::CommandResult created = node->processor().Process(
        Brand("d1"), wow::CommandMessage::Of(CreateBrand{"Contoso", true, kDraftMs}));
    ASSERT_EQ(created.kind, wow::CommandResult::Kind::kAccepted) << created.message;
    const wow::CommandResult published_draft = node->processor().Process(
        Brand("p1"), wow::CommandMessage::Of(CreateBrand{"Fabrikam", true, kDraftMs}));
    ASSERT_EQ(published_draft.kind, wow::CommandResult::Kind::kAccepted);
    ASSERT_EQ(node->processor().Process(Brand("p1"), wow::CommandMessage::Of(PublishBrand{})).kind,
              wow::CommandResult::Kind::kAccepted);
    ASSERT_TRUE(node->WaitUntilCaughtUp(std::chrono::seconds(10)));
    clock_->Advance(milliseconds(kDraftMs - 1));
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_EQ(EventTypes(*node, Brand("d1")).size(), 1u) << "not due yet";
  }  // the node stops; the draft falls due with no node running
  clock_->Advance(milliseconds(1 + 60'000));  // due, and every lease of the node expired
  {
    auto node = StartNode();
    ASSERT_TRUE(AwaitVersion(*node, Brand("d1"), 2));
    ASSERT_TRUE(node->WaitUntilCaughtUp(std::chrono::seconds(10)));
  }
  clock_->Advance(milliseconds(10 * kDraftMs));
  auto node = StartNode();
  std::this_thread::sleep_for(milliseconds(100));  // a second node, long past due: nothing fires
  ASSERT_TRUE(node->WaitUntilCaughtUp(std::chrono::seconds(10)));
  EXPECT_EQ(EventTypes(*node, Brand("d1")),
            (std::vector<std::string>{std::string(BrandCreated::kType),
                                      std::string(BrandDraftExpired::kType)}))
      << "expired once";
  EXPECT_EQ(EventTypes(*node, Brand("p1")).size(), 2u) << "the published draft is not expired";

  const wow::CommandResult taken =
      node->processor().Process(Brand("n1"), wow::CommandMessage::Of(CreateBrand{"CONTOSO"}));
  EXPECT_EQ(taken.kind, wow::CommandResult::Kind::kAccepted)
      << "the name is free: " << taken.message;
  const wow::CommandResult kept =
      node->processor().Process(Brand("n2"), wow::CommandMessage::Of(CreateBrand{"fabrikam"}));
  EXPECT_EQ(kept.code, rejections::kNameTaken);

  ASSERT_TRUE(node->WaitUntilCaughtUp(std::chrono::seconds(10)));
  const auto row = node->stores().read_models()->Find(std::string(kBrandRows), "acme", "d1");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(nlohmann::json::parse(row->body)["status"], "expired");
  EXPECT_EQ(nlohmann::json::parse(node->stores()
                                      .read_models()
                                      ->Find(std::string(kBrandRows), "acme", "p1")
                                      ->body)["status"],
            "published");
}

INSTANTIATE_TEST_SUITE_P(Backends, DraftExpiry, ::testing::ValuesIn(wow::testing_support::DurableBackends()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DraftExpiry);  // a build with neither

}  // namespace
}  // namespace eshop
