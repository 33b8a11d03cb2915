// CatalogHttp in process, on the in-memory stores and a manual clock: what a handler reads to
// answer, and by which clock it judges a name's expiry. (service_test.cc drives the binary.)
#include "catalog_http.h"

#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <sstream>

#include "catalog.h"
#include "wow/incidents.h"
#include "wow/name_key.h"
#include "wow/projection.h"
#include "wow/store_wrappers.h"

namespace eshop {
namespace {

using nlohmann::json;

// The memory log, counting the lookups of request ids.
class CountsRequestIdLookups : public wow::EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  std::optional<wow::Entry> FindByRequestId(const std::string& aggregate,
                                            const std::string& tenant_id,
                                            const std::string& request_id) override {
    ++lookups;
    return EventLogWrapper::FindByRequestId(aggregate, tenant_id, request_id);
  }
  std::atomic<int> lookups{0};
};

class CatalogHttpInProcess : public ::testing::Test {
 protected:
  CatalogHttpInProcess()
      : clock_(std::make_shared<wow::ManualClock>()),
        log_(std::make_shared<CountsRequestIdLookups>(
            std::shared_ptr<wow::EventLog>(wow::NewMemoryEventLog(std::string(kContext), clock_)))),
        reservations_(wow::NewMemoryReservationStore(clock_)) {
    log_->Create(4);
    processor_ = std::make_unique<wow::CommandProcessor>(log_, reservations_, clock_);
    processor_->Register(BrandType());
    processor_->Register(CategoryType());
    http_ = std::make_unique<CatalogHttp>(*processor_, read_models_,
                                          std::make_shared<ServiceMetrics>());
  }

  HttpReply Post(const std::string& target, const std::string& body,
                 std::optional<std::string_view> key = std::nullopt) {
    return http_->Handle("POST", target, body, key);
  }

  std::shared_ptr<wow::ManualClock> clock_;
  std::shared_ptr<CountsRequestIdLookups> log_;
  std::shared_ptr<wow::ReservationStore> reservations_;
  std::unique_ptr<wow::CommandProcessor> processor_;
  std::shared_ptr<wow::ReadModelStore> read_models_ = wow::NewMemoryReadModelStore();
  std::unique_ptr<CatalogHttp> http_;
};

TEST_F(CatalogHttpInProcess, ARepeatIsAnsweredFromTheOriginalTheProcessorFoundWithoutReadingAgain) {
  const HttpReply first = Post("/tenants/acme/brands", R"({"name": "Contoso"})", "key-1");
  ASSERT_EQ(first.status, 201) << first.body;
  const int before = log_->lookups.load();
  const HttpReply again = Post("/tenants/acme/brands", R"({"name": "Contoso"})", "key-1");
  EXPECT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(json::parse(again.body), json::parse(first.body));
  // The processor's own lookup found the original; the handler read nothing more.
  EXPECT_EQ(log_->lookups.load() - before, 1);

  // The same key for another name is refused from the same read.
  const HttpReply reused = Post("/tenants/acme/brands", R"({"name": "Fabrikam"})", "key-1");
  EXPECT_EQ(reused.status, 422) << reused.body;
  EXPECT_EQ(json::parse(reused.body).value("code", ""), "IDEMPOTENCY_KEY_REUSED");
}

TEST_F(CatalogHttpInProcess, ARepeatedRenameAnswersTheVersionItMadeEvenAfterLaterChanges) {
  const HttpReply created = Post("/tenants/acme/brands", R"({"name": "Contoso"})");
  const std::string id = json::parse(created.body).value("id", "");
  const std::string name = "/tenants/acme/brands/" + id + "/name";
  const HttpReply renamed = http_->Handle("PUT", name, R"({"name": "Northwind"})", "rename-1");
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  ASSERT_EQ(http_->Handle("PUT", name, R"({"name": "Tailspin"})", std::nullopt).status, 200);
  const HttpReply again = http_->Handle("PUT", name, R"({"name": "Northwind"})", "rename-1");
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(json::parse(again.body), (json{{"id", id}, {"name", "Northwind"}, {"version", 2}}));
}

TEST_F(CatalogHttpInProcess, ANameLookupJudgesExpiryByTheProcessorsClock) {
  // A pending hold as a process that stopped before confirming would leave it, on a clock far
  // behind the system's: held by the injected clock, expired by the system's.
  const wow::ReservationScope scope{std::string(kContext), "brand", "acme",
                                    std::string(kBrandNames)};
  const wow::AggregateRef owner{std::string(kContext), "brand", "acme", "b1"};
  ASSERT_TRUE(reservations_->Reserve(scope, wow::MakeNameKey("Contoso").key, owner, "attempt-1",
                                     std::chrono::seconds(30)));
  const HttpReply held = http_->Handle("GET", "/tenants/acme/brand-names/Contoso", "", {});
  EXPECT_EQ(held.status, 200) << held.body;
  EXPECT_EQ(json::parse(held.body).value("state", ""), "pending");

  clock_->Advance(std::chrono::seconds(31));
  const HttpReply expired = http_->Handle("GET", "/tenants/acme/brand-names/Contoso", "", {});
  EXPECT_EQ(expired.status, 404) << expired.body;
}

TEST_F(CatalogHttpInProcess, ANameLookupFindsABrandNamedBeforeByItsOldKey) {
  // A brand named "Straße" before the catalog used wow::MakeNameKey holds "straße"; the name's
  // key is now "strasse".
  const wow::ReservationScope scope{std::string(kContext), "brand", "acme",
                                    std::string(kBrandNames)};
  const wow::AggregateRef owner{std::string(kContext), "brand", "acme", "b1"};
  reservations_->Confirm(scope, LegacyNameKey("Stra\u00DFe"), owner, 1);
  const HttpReply held = http_->Handle("GET", "/tenants/acme/brand-names/Stra%C3%9Fe", "", {});
  ASSERT_EQ(held.status, 200) << held.body;
  EXPECT_EQ(json::parse(held.body).value("key", ""), "stra\u00DFe");
  EXPECT_EQ(json::parse(held.body).value("owner", ""), "b1");
  // The new key, once held, is found first.
  const wow::AggregateRef other{std::string(kContext), "brand", "acme", "b2"};
  reservations_->Confirm(scope, "strasse", other, 1);
  const HttpReply now = http_->Handle("GET", "/tenants/acme/brand-names/Stra%C3%9Fe", "", {});
  EXPECT_EQ(json::parse(now.body).value("owner", ""), "b2") << now.body;
}

TEST_F(CatalogHttpInProcess, ACharacterNotAllowedInANameIs400InvalidNameNamingIt) {
  const HttpReply refused = Post("/tenants/acme/brands", R"({"name": "\u202Eosotnoc"})");
  EXPECT_EQ(refused.status, 400) << refused.body;
  const json body = json::parse(refused.body);
  EXPECT_EQ(body.value("code", ""), "INVALID_NAME");
  EXPECT_EQ(body.value("message", ""),
            "A brand name cannot contain U+202E RIGHT-TO-LEFT OVERRIDE.");
  const HttpReply lookup = http_->Handle("GET", "/tenants/acme/brand-names/a%E2%80%AEb", "", {});
  EXPECT_EQ(lookup.status, 400) << lookup.body;
  EXPECT_EQ(json::parse(lookup.body).value("code", ""), "INVALID_NAME");
}

// (ctest runs each test in a process of its own, so the incident reported here stays here.)
TEST_F(CatalogHttpInProcess, HealthzSaysSoOnceAKeyIncidentHappened) {
  const HttpReply healthy = http_->Handle("GET", "/healthz", "", std::nullopt);
  ASSERT_EQ(healthy.status, 200) << healthy.body;
  const wow::AggregateRef claimant{std::string(kContext), "brand", "acme", "b1"};
  const wow::AggregateRef holder{std::string(kContext), "brand", "acme", "b2"};
  wow::ReportKeyIncident({{std::string(kContext), "brand", "acme", std::string(kBrandNames)},
                          "contoso",
                          claimant,
                          3,
                          holder});
  const HttpReply sick = http_->Handle("GET", "/healthz", "", std::nullopt);
  EXPECT_EQ(sick.status, 503) << sick.body;
  const json body = json::parse(sick.body);
  EXPECT_EQ(body.value("status", ""), "key_incident");
  EXPECT_GE(body.value("key_incidents", 0), 1);
  const std::string last = body.value("last", "");
  EXPECT_NE(last.find("contoso"), std::string::npos) << last;
  EXPECT_NE(last.find(wow::ToString(claimant)), std::string::npos) << last;
  EXPECT_NE(last.find(wow::ToString(holder)), std::string::npos) << last;
  const HttpReply metrics = http_->Handle("GET", "/metrics", "", std::nullopt);
  EXPECT_NE(metrics.body.find("\nwow_key_incidents_total "), std::string::npos);
  EXPECT_EQ(metrics.body.find("\nwow_key_incidents_total 0\n"), std::string::npos);
}

// The memory log, its appends failing as on a full disk.
class FullDisk : public wow::EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  wow::AppendResult Append(const wow::Stream&) override {
    throw wow::Error(wow::ErrorCode::kResourceExhausted, "the disk is full");
  }
  std::vector<wow::AppendResult> AppendAll(const std::vector<wow::Stream>&) override {
    throw wow::Error(wow::ErrorCode::kResourceExhausted, "the disk is full");
  }
};

TEST(CatalogHttpFailures, FailedRequestsAreLoggedAtMostOnceASecond) {
  std::ostringstream out;
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(out)));
  auto clock = std::make_shared<wow::ManualClock>();
  auto log = std::make_shared<FullDisk>(
      std::shared_ptr<wow::EventLog>(wow::NewMemoryEventLog(std::string(kContext), clock)));
  log->Create(4);
  wow::CommandProcessor processor(log, wow::NewMemoryReservationStore(clock), clock);
  processor.Register(BrandType());
  CatalogHttp http(processor, wow::NewMemoryReadModelStore(), std::make_shared<ServiceMetrics>());
  const auto start = std::chrono::steady_clock::now();
  constexpr int kRequests = 200;
  for (int i = 0; i < kRequests; ++i) {
    const HttpReply reply = http.Handle(
        "POST", "/tenants/acme/brands", R"({"name": "N)" + std::to_string(i) + "\"}", std::nullopt);
    ASSERT_EQ(reply.status, 507) << reply.body;
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  spdlog::set_default_logger(previous);
  const std::string text = out.str();
  std::size_t lines = 0;
  for (std::size_t at = text.find("request failed"); at != std::string::npos;
       at = text.find("request failed", at + 1)) {
    ++lines;
  }
  EXPECT_GE(lines, 1u);
  EXPECT_LE(lines, static_cast<std::size_t>(seconds + 2)) << text;
}

// Lists read the projection's rows: what the runner has not applied yet is not listed.
TEST_F(CatalogHttpInProcess, AListPagesTheProjectedBrandsInIdOrderAndFindsThemByNamePrefix) {
  wow::SubscriptionRunner runner(
      log_, {wow::NewProjectionSubscription(CatalogProjection(), read_models_)});
  std::vector<std::string> ids;
  for (const char* name : {"Contoso", "Fabrikam", "Con\u00ADtour", "Northwind", "CONSOLE"}) {
    const HttpReply created = Post("/tenants/acme/brands", json{{"name", name}}.dump());
    ASSERT_EQ(created.status, 201) << created.body;
    ids.push_back(json::parse(created.body).value("id", ""));
  }
  ASSERT_EQ(Post("/tenants/other/brands", R"({"name": "Contoso"})").status, 201);
  EXPECT_EQ(json::parse(http_->Handle("GET", "/tenants/acme/brands", "", {}).body)["items"].size(),
            0u)
      << "nothing projected yet";
  runner.CatchUp();
  ASSERT_EQ(http_->Handle("DELETE", "/tenants/acme/brands/" + ids[1], "", {}).status, 200);
  runner.CatchUp();

  std::vector<std::string> listed;
  std::string after;
  for (int page = 0; page < 10; ++page) {
    const HttpReply reply = http_->Handle(
        "GET", "/tenants/acme/brands?limit=2" + (after.empty() ? "" : "&after=" + after), "", {});
    ASSERT_EQ(reply.status, 200) << reply.body;
    const json body = json::parse(reply.body);
    for (const json& item : body["items"]) {
      listed.push_back(item["id"]);
      if (item["id"] == ids[1]) {
        EXPECT_TRUE(item["deleted"].get<bool>());
        EXPECT_EQ(item["version"], 2);
        EXPECT_EQ(item["name"], "Fabrikam");
      }
    }
    if (body["next"].is_null()) break;
    after = body["next"];
  }
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(listed, sorted) << "every brand of the tenant once, by id";

  const json cons =
      json::parse(http_->Handle("GET", "/tenants/acme/brands?prefix=%20CON", "", {}).body);
  std::vector<std::string> names;
  for (const json& item : cons["items"]) names.push_back(item["name"]);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"CONSOLE", "Contoso", "Con\u00ADtour"}));
  EXPECT_EQ(json::parse(http_->Handle("GET", "/tenants/acme/categories", "", {}).body)["items"],
            json::array());
}

TEST_F(CatalogHttpInProcess, BadListParametersAre400AndNameTheParameter) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"limit=0", "INVALID_LIMIT"},           {"limit=501", "INVALID_LIMIT"},
      {"limit=ten", "INVALID_LIMIT"},         {"limit=5x", "INVALID_LIMIT"},
      {"after=a%2Fb", "INVALID_AFTER"},       {"after=", "INVALID_AFTER"},
      {"prefix=%E2%80%8B", "INVALID_PREFIX"}, {"prefix=a%00", "INVALID_PREFIX"},
      {"sort=name", "INVALID_PARAMETER"},     {"limit=1&limit=2", "INVALID_PARAMETER"},
      {"after=%zz", "INVALID_QUERY"},
  };
  for (const auto& [query, code] : cases) {
    const HttpReply reply = http_->Handle("GET", "/tenants/acme/brands?" + query, "", {});
    EXPECT_EQ(reply.status, 400) << query << ": " << reply.body;
    EXPECT_EQ(json::parse(reply.body).value("code", ""), code) << query;
  }
  EXPECT_EQ(http_->Handle("GET", "/tenants/acme/brands?limit=500", "", {}).status, 200);
  EXPECT_EQ(Post("/tenants/acme/brands?wait=soon", R"({"name": "Contoso"})").status, 400);
}

TEST_F(CatalogHttpInProcess, ACommandThatWaitsIsListedWhenAnsweredOr202WithItsPosition) {
  CatalogHttpOptions options;
  options.projection_wait = std::chrono::milliseconds(50);
  CatalogHttp http(*processor_, read_models_, std::make_shared<ServiceMetrics>(), options);
  const HttpReply unprojected =
      http.Handle("POST", "/tenants/acme/brands?wait=projected", R"({"name": "Contoso"})", "k1");
  ASSERT_EQ(unprojected.status, 202) << unprojected.body;
  const json body = json::parse(unprojected.body);
  EXPECT_FALSE(body["projected"].get<bool>());
  EXPECT_GE(body["position"]["sequence"].get<int>(), 1);

  wow::SubscriptionRunnerOptions fast;
  fast.checkpoint_interval = std::chrono::milliseconds(1);
  wow::SubscriptionRunner runner(
      log_, {wow::NewProjectionSubscription(CatalogProjection(), read_models_)}, fast);
  runner.Start();
  const HttpReply again =
      http.Handle("POST", "/tenants/acme/brands?wait=projected", R"({"name": "Contoso"})", "k1");
  EXPECT_EQ(again.status, 201) << "the repeat of its key waits again: " << again.body;
  for (int i = 0; i < 20; ++i) {
    const HttpReply created = http.Handle("POST", "/tenants/acme/brands?wait=projected",
                                          json{{"name", "Brand " + std::to_string(i)}}.dump(), {});
    ASSERT_EQ(created.status, 201) << created.body;
    const std::string id = json::parse(created.body)["id"];
    const json listed = json::parse(
        http.Handle("GET", "/tenants/acme/brands?after=" + id.substr(0, id.size() - 1) + "&limit=1",
                    "", {})
            .body);
    ASSERT_EQ(listed["items"].size(), 1u);
    EXPECT_EQ(listed["items"][0]["id"], id);
  }
}

TEST_F(CatalogHttpInProcess, ADraftIsCreatedWithDraftTrueAndPublishedByItsRoute) {
  const HttpReply draft = Post("/tenants/acme/brands", R"({"name": "Contoso", "draft": true})");
  ASSERT_EQ(draft.status, 201) << draft.body;
  EXPECT_EQ(json::parse(draft.body)["status"], "draft");
  const std::string id = json::parse(draft.body)["id"];
  EXPECT_EQ(json::parse(http_->Handle("GET", "/tenants/acme/brands/" + id, "", {}).body)["status"],
            "draft");
  EXPECT_EQ(Post("/tenants/acme/brands", R"({"name": "Contoso"})").status, 409)
      << "a draft holds its name";
  EXPECT_EQ(Post("/tenants/acme/brands", R"({"name": "X", "draft": "yes"})").status, 400);

  const HttpReply published = Post("/tenants/acme/brands/" + id + "/publish", "");
  ASSERT_EQ(published.status, 200) << published.body;
  EXPECT_EQ(json::parse(published.body),
            (json{{"id", id}, {"version", 2}, {"status", "published"}}));
  const HttpReply again = Post("/tenants/acme/brands/" + id + "/publish", "");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(json::parse(again.body)["code"], "NOT_DRAFT");
  EXPECT_EQ(Post("/tenants/acme/brands/nobody/publish", "").status, 404);
}

}  // namespace
}  // namespace eshop
