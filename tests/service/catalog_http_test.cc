// CatalogHttp in process, on the in-memory stores and a manual clock: what a handler reads to
// answer, and by which clock it judges a name's expiry. (service_test.cc drives the binary.)
#include "catalog_http.h"

#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <sstream>

#include "catalog.h"
#include "wow/incidents.h"
#include "wow/name_key.h"
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
    http_ = std::make_unique<CatalogHttp>(*processor_, std::make_shared<ServiceMetrics>());
  }

  HttpReply Post(const std::string& target, const std::string& body,
                 std::optional<std::string_view> key = std::nullopt) {
    return http_->Handle("POST", target, body, key);
  }

  std::shared_ptr<wow::ManualClock> clock_;
  std::shared_ptr<CountsRequestIdLookups> log_;
  std::shared_ptr<wow::ReservationStore> reservations_;
  std::unique_ptr<wow::CommandProcessor> processor_;
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
  CatalogHttp http(processor, std::make_shared<ServiceMetrics>());
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

}  // namespace
}  // namespace eshop
