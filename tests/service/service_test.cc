// The catalog service over real HTTP on loopback: the wow-catalog binary started on a free port
// and driven by concurrent HTTP/1.1 clients (service_process.h), on a SQLite file and on the
// project's MongoDB TEST SERVER (a test double; skipped with the reason where Node.js or its
// packages are missing). The tests of a file's own behaviour (its partition count kept, the
// write-ahead log folded at exit, sqlite:PATH and --db) run on SQLite alone.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "catalog.h"
#include "service_process.h"
#include "support/damage.h"
#include "support/mongo_test_server.h"
#include "support/temp_dir.h"
#include "wow/name_key.h"

namespace wow::service_test {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

std::string Repeat(char c, size_t n) { return std::string(n, c); }

json NameBody(const std::string& name) { return json{{"name", name}}; }

// The store a test's services run on: "Sqlite" or "MongoTestServer".
using StoreKind = std::string;

// The test binary's MongoDB test server, started on first use and stopped at exit; nullptr with
// `reason` set when it cannot run here.
testing_support::MongoTestServer* SharedServer(std::string* reason) {
  static std::once_flag once;
  static std::unique_ptr<testing_support::MongoTestServer> server;
  static std::optional<std::string> unavailable;
  std::call_once(once, [] {
    unavailable = testing_support::MongoTestServer::Unavailable();
    if (!unavailable) server = std::make_unique<testing_support::MongoTestServer>();
  });
  if (unavailable) *reason = *unavailable;
  return server.get();
}

// A fresh store of `kind`: a file `name` in `dir`, or a database of its own on the test server.
// Empty, with `skip` set, when the test server cannot run here.
std::string FreshStore(const StoreKind& kind, const testing_support::TempDir& dir,
                       const std::string& name, std::string* skip) {
  if (kind == "Sqlite") return dir.File(name);
  testing_support::MongoTestServer* server = SharedServer(skip);
  if (server == nullptr) return "";
  std::string uri = server->uri();
  return uri.insert(uri.find("/?") + 1, "wow_service_" + NewId().substr(12));
}

class CatalogService : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    std::string skip;
    db_ = FreshStore(GetParam(), dir_, "catalog.db", &skip);
    if (db_.empty()) GTEST_SKIP() << skip;
    service_ =
        std::make_unique<ServiceProcess>(db(), std::vector<std::string>{"--synchronous", "normal"});
    ASSERT_GT(service_->port(), 0);
  }
  void TearDown() override {
    if (HasFailure() && service_) std::cerr << "service log:\n" << service_->Log() << "\n";
  }

  // The store: a SQLite file's path, or a MongoDB URI.
  const std::string& db() const { return db_; }
  int port() const { return service_->port(); }

  Reply Create(const std::string& name, const std::string& tenant = "acme",
               const std::string& collection = "brands",
               std::vector<std::pair<std::string, std::string>> headers = {}) {
    return Send(port(), "POST", "/tenants/" + tenant + "/" + collection, NameBody(name).dump(),
                headers);
  }
  // Creates a brand that must be accepted; its id.
  std::string CreateOk(const std::string& name, const std::string& tenant = "acme",
                       const std::string& collection = "brands") {
    const Reply reply = Create(name, tenant, collection);
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    return reply.json.value("id", "");
  }
  Reply Rename(const std::string& id, const std::string& name, const std::string& tenant = "acme",
               std::vector<std::pair<std::string, std::string>> headers = {}) {
    return Send(port(), "PUT", "/tenants/" + tenant + "/brands/" + id + "/name",
                NameBody(name).dump(), headers);
  }
  Reply Get(const std::string& id, const std::string& tenant = "acme") {
    return Send(port(), "GET", "/tenants/" + tenant + "/brands/" + id);
  }
  Reply Holder(const std::string& name, const std::string& tenant = "acme",
               const std::string& names = "brand-names") {
    return Send(port(), "GET", "/tenants/" + tenant + "/" + names + "/" + PercentEncode(name));
  }
  long long Streams() { return ReadLog(db()).streams; }

  testing_support::TempDir dir_;
  std::string db_;
  std::unique_ptr<ServiceProcess> service_;
};

// The tests of a SQLite file's own behaviour.
class CatalogServiceOnAFile : public CatalogService {};

TEST_P(CatalogService, CreateAnswers201WithIdNameAndVersionAndGetFindsIt) {
  const Reply created = Create("  Contoso ");
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string id = created.json.value("id", "");
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(created.json,
            (json{{"id", id}, {"name", "Contoso"}, {"version", 1}, {"status", "published"}}));
  EXPECT_EQ(created.Header("Location"), "/tenants/acme/brands/" + id);
  EXPECT_EQ(created.Header("Content-Type"), "application/json");

  const Reply got = Get(id);
  ASSERT_EQ(got.status, 200) << got.Describe();
  EXPECT_EQ(got.json, (json{{"id", id},
                            {"name", "Contoso"},
                            {"version", 1},
                            {"deleted", false},
                            {"status", "published"}}));

  const Reply holder = Holder("contoso");
  ASSERT_EQ(holder.status, 200) << holder.Describe();
  EXPECT_EQ(holder.json,
            (json{{"key", "contoso"}, {"owner", id}, {"state", "confirmed"}, {"version", 1}}));
  EXPECT_EQ(Get("no-such-brand").status, 404);
  EXPECT_EQ(Get(id, "another-tenant").status, 404);
}

TEST_P(CatalogService, ADuplicateNameInAnotherSpellingIs409NameTaken) {
  const std::string id = CreateOk("Contoso");
  for (const std::string spelling :
       {"Contoso", " contoso ", "CONTOSO", "\tcOnToSo\n", "Con\u00ADtoso", "Contoso\u200B",
        "Con\u2060toso", "\uFF23\uFF4F\uFF4E\uFF54\uFF4F\uFF53\uFF4F", "C\u043Entoso"}) {
    const Reply reply = Create(spelling);
    EXPECT_EQ(reply.status, 409) << spelling << ": " << reply.Describe();
    EXPECT_EQ(reply.json.value("code", ""), "NAME_TAKEN");
    EXPECT_FALSE(reply.json.value("message", "").empty());
  }
  EXPECT_EQ(Holder("contoso").json.value("owner", ""), id);
  EXPECT_EQ(Holder("Con\u00ADtoso").json.value("owner", ""), id);
  // Names are unique per tenant.
  EXPECT_EQ(Create("Contoso", "another-tenant").status, 201);
}

TEST_P(CatalogService, BlankAndOverLongNamesAre400) {
  for (const std::string blank : {"", "   ", "\t\n", "\u200B\u200B", " \u00AD "}) {
    const Reply reply = Create(blank);
    EXPECT_EQ(reply.status, 400) << reply.Describe();
    EXPECT_EQ(reply.json.value("code", ""), "BLANK_NAME");
  }
  const Reply long_name = Create(Repeat('a', eshop::kMaxNameBytes + 1));
  EXPECT_EQ(long_name.status, 400) << long_name.Describe();
  EXPECT_EQ(long_name.json.value("code", ""), "NAME_TOO_LONG");
  EXPECT_EQ(Create(Repeat('a', eshop::kMaxNameBytes)).status, 201);
  EXPECT_EQ(ReadLog(db(), "brand", "acme").names.size(), 1u);
}

TEST_P(CatalogService, ANameWithACharacterNotAllowedIs400InvalidName) {
  for (const std::string name : {"\u202Eosotnoc", "Con\u2067toso\u2069", "Con\uE000toso",
                                 "Con\U000E01F0toso", "Con\ttoso", "Con\u2028toso"}) {
    const Reply reply = Create(name);
    EXPECT_EQ(reply.status, 400) << reply.Describe();
    EXPECT_EQ(reply.json.value("code", ""), "INVALID_NAME");
    EXPECT_NE(reply.json.value("message", "").find("U+"), std::string::npos) << reply.Describe();
  }
  const std::string id = CreateOk("Contoso");
  const Reply rename = Rename(id, "Contoso\u202E");
  EXPECT_EQ(rename.status, 400) << rename.Describe();
  EXPECT_EQ(rename.json.value("code", ""), "INVALID_NAME");
  EXPECT_EQ(Holder("Contoso\u202E").json.value("code", ""), "INVALID_NAME");
  EXPECT_EQ(ReadLog(db(), "brand", "acme").names.size(), 1u);
}

TEST_P(CatalogService, SharpSAndAMixedScriptLookalikeAreOneName) {
  const std::string id = CreateOk("Stra\u00DFe");
  EXPECT_EQ(Create("STRASSE").json.value("code", ""), "NAME_TAKEN");
  EXPECT_EQ(Holder("strasse").json.value("owner", ""), id);
  EXPECT_EQ(Holder("strasse").json.value("key", ""), "strasse");
  CreateOk("PayPal");
  EXPECT_EQ(Create("P\u0430yPal").json.value("code", ""), "NAME_TAKEN");
  CreateOk("\u041C\u043E\u0441\u043A\u0432\u0430");  // Москва: Cyrillic alone
  CreateOk("\u6771\u4EAC");                          // 東京
}

TEST_P(CatalogService, RenameMovesTheNameAndFreesTheOldOne) {
  const std::string id = CreateOk("Contoso");
  const Reply renamed = Rename(id, " Fabrikam ");
  ASSERT_EQ(renamed.status, 200) << renamed.Describe();
  EXPECT_EQ(renamed.json, (json{{"id", id}, {"name", "Fabrikam"}, {"version", 2}}));
  EXPECT_EQ(Holder("contoso").status, 404);
  EXPECT_EQ(Holder("FABRIKAM").json.value("owner", ""), id);
  EXPECT_EQ(Create("Contoso").status, 201);  // the old name is free

  // A new spelling of the same name keeps the key.
  const Reply respelled = Rename(id, "FABRIKAM");
  ASSERT_EQ(respelled.status, 200) << respelled.Describe();
  EXPECT_EQ(respelled.json.value("version", 0), 3);
  const Reply holder = Holder("fabrikam");
  EXPECT_EQ(holder.json.value("owner", ""), id);
  EXPECT_EQ(holder.json.value("version", 0), 3);

  // The name it has already: nothing changes.
  const Reply same = Rename(id, "FABRIKAM");
  ASSERT_EQ(same.status, 200) << same.Describe();
  EXPECT_EQ(same.json, (json{{"id", id}, {"name", "FABRIKAM"}, {"version", 3}}));
  EXPECT_EQ(Get(id).json.value("name", ""), "FABRIKAM");
}

TEST_P(CatalogService, RenameToATakenNameIs409AndOfAnUnknownBrandIs404) {
  const std::string contoso = CreateOk("Contoso");
  CreateOk("Fabrikam");
  const Reply taken = Rename(contoso, "fabrikam");
  EXPECT_EQ(taken.status, 409) << taken.Describe();
  EXPECT_EQ(taken.json.value("code", ""), "NAME_TAKEN");
  EXPECT_EQ(Get(contoso).json.value("name", ""), "Contoso");
  EXPECT_EQ(Holder("contoso").json.value("owner", ""), contoso);

  const Reply unknown = Rename("no-such-brand", "Northwind");
  EXPECT_EQ(unknown.status, 404) << unknown.Describe();
  EXPECT_EQ(unknown.json.value("code", ""), "NOT_FOUND");
  EXPECT_EQ(Holder("northwind").status, 404);
  const Reply blank = Rename(contoso, " ");
  EXPECT_EQ(blank.status, 400) << blank.Describe();
  EXPECT_EQ(blank.json.value("code", ""), "BLANK_NAME");
}

TEST_P(CatalogService, DeleteKeepsTheNameAndRestoreFindsItHeld) {
  const std::string id = CreateOk("Contoso");
  const std::string path = "/tenants/acme/brands/" + id;
  const Reply deleted = Send(port(), "DELETE", path);
  ASSERT_EQ(deleted.status, 200) << deleted.Describe();
  EXPECT_EQ(deleted.json, (json{{"id", id}, {"version", 2}, {"deleted", true}}));
  EXPECT_EQ(Get(id).json, (json{{"id", id},
                                {"name", "Contoso"},
                                {"version", 2},
                                {"deleted", true},
                                {"status", "published"}}));

  // The name stays held.
  EXPECT_EQ(Holder("contoso").json.value("owner", ""), id);
  const Reply taken = Create("contoso");
  EXPECT_EQ(taken.status, 409) << taken.Describe();
  EXPECT_EQ(taken.json.value("code", ""), "NAME_TAKEN");
  // A deleted brand refuses every command but restore.
  const Reply rename = Rename(id, "Fabrikam");
  EXPECT_EQ(rename.status, 409) << rename.Describe();
  EXPECT_EQ(rename.json.value("code", ""), "AGGREGATE_DELETED");
  EXPECT_EQ(Send(port(), "DELETE", path).status, 409);

  // Restore, sent as curl -XPOST sends it: no body, no Content-Length.
  const Reply restored =
      SendRaw(port(), "POST " + path + "/restore HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(restored.status, 200) << restored.Describe();
  EXPECT_EQ(restored.json, (json{{"id", id}, {"version", 3}, {"deleted", false}}));
  EXPECT_EQ(Get(id).json.value("deleted", true), false);
  const Reply holder = Holder("contoso");
  EXPECT_EQ(holder.json.value("owner", ""), id);
  EXPECT_EQ(holder.json.value("state", ""), "confirmed");
  const Reply again = Send(port(), "POST", path + "/restore");
  EXPECT_EQ(again.status, 409) << again.Describe();
  EXPECT_EQ(again.json.value("code", ""), "AGGREGATE_NOT_DELETED");
  EXPECT_EQ(Rename(id, "Fabrikam").status, 200);
  EXPECT_EQ(Send(port(), "DELETE", "/tenants/acme/brands/no-such-brand").status, 404);
  EXPECT_EQ(Send(port(), "POST", "/tenants/acme/brands/no-such-brand/restore").status, 404);
}

TEST_P(CatalogService, BrandsAndCategoriesHaveTheirOwnNames) {
  const std::string brand = CreateOk("Contoso");
  const std::string category = CreateOk("Contoso", "acme", "categories");
  EXPECT_NE(brand, category);
  EXPECT_EQ(Create("CONTOSO", "acme", "categories").status, 409);
  EXPECT_EQ(Holder("contoso", "acme", "category-names").json.value("owner", ""), category);
  EXPECT_EQ(Holder("contoso").json.value("owner", ""), brand);

  const Reply got = Send(port(), "GET", "/tenants/acme/categories/" + category);
  EXPECT_EQ(got.json, (json{{"id", category},
                            {"name", "Contoso"},
                            {"version", 1},
                            {"deleted", false},
                            {"status", "published"}}));
  const Reply renamed = Send(port(), "PUT", "/tenants/acme/categories/" + category + "/name",
                             NameBody("Shoes").dump());
  EXPECT_EQ(renamed.json, (json{{"id", category}, {"name", "Shoes"}, {"version", 2}}));
  EXPECT_EQ(Holder("contoso", "acme", "category-names").status, 404);
  EXPECT_EQ(Send(port(), "DELETE", "/tenants/acme/categories/" + category).status, 200);
  EXPECT_EQ(Send(port(), "POST", "/tenants/acme/categories/" + category + "/restore").status, 200);
}

// The lists over HTTP, on each store: what the service's projection kept, paged by id, by name
// prefix, with a rename and a delete reflected.
TEST_P(CatalogService, AListShowsTheProjectedBrandsPagedAndByPrefixWithRenamesAndDeletes) {
  std::vector<std::string> ids;
  for (const char* name : {"Contoso", "Fabrikam", "Console", "Northwind", "Condor"}) {
    const Reply created =
        Send(port(), "POST", "/tenants/acme/brands?wait=projected", NameBody(name).dump());
    ASSERT_EQ(created.status, 201) << created.Describe();
    ids.push_back(created.json.value("id", ""));
  }
  ASSERT_EQ(Send(port(), "POST", "/tenants/other/brands?wait=projected", NameBody("Contoso").dump())
                .status,
            201);
  ASSERT_EQ(Send(port(), "PUT", "/tenants/acme/brands/" + ids[3] + "/name?wait=projected",
                 NameBody("Conifer").dump())
                .status,
            200);
  ASSERT_EQ(Send(port(), "DELETE", "/tenants/acme/brands/" + ids[1] + "?wait=projected").status,
            200);

  std::vector<std::string> listed;
  std::string after;
  for (int page = 0; page < 10; ++page) {
    const Reply reply = Send(
        port(), "GET", "/tenants/acme/brands?limit=2" + (after.empty() ? "" : "&after=" + after));
    ASSERT_EQ(reply.status, 200) << reply.Describe();
    for (const json& item : reply.json["items"]) {
      listed.push_back(item["id"]);
      if (item["id"] == ids[1]) {
        EXPECT_TRUE(item["deleted"].get<bool>()) << item.dump();
        EXPECT_EQ(item["version"], 2);
      }
    }
    if (reply.json["next"].is_null()) break;
    after = reply.json["next"];
  }
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(listed, sorted) << "every brand of the tenant once, by id";

  const Reply con = Send(port(), "GET", "/tenants/acme/brands?prefix=%20CON");
  ASSERT_EQ(con.status, 200) << con.Describe();
  std::vector<std::string> names;
  for (const json& item : con.json["items"]) names.push_back(item["name"]);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"Condor", "Conifer", "Console", "Contoso"}))
      << "the renamed brand under its new name";
  EXPECT_EQ(Send(port(), "GET", "/tenants/acme/brands?prefix=north").json["items"], json::array())
      << "nor under its old one";
  EXPECT_EQ(Send(port(), "GET", "/tenants/acme/brands?limit=0").status, 400);
}

TEST_P(CatalogService, NameLookupDecodesThePathThenTrimsAndLowerCases) {
  const std::string id = CreateOk("Äpfel & Birnen/Co");
  const Reply holder = Holder(" ÄPFEL & BIRNEN/CO ");
  ASSERT_EQ(holder.status, 200) << holder.Describe();
  EXPECT_EQ(holder.json.value("key", ""), "äpfel & birnen/co");
  EXPECT_EQ(holder.json.value("owner", ""), id);
  EXPECT_EQ(Holder("äpfel").status, 404);
}

TEST_P(CatalogService, AnIdempotencyKeyRepeatAnswersTheFirstResponseAndAppendsNothing) {
  const Reply first = Create("Contoso", "acme", "brands", {{"Idempotency-Key", "create-1"}});
  ASSERT_EQ(first.status, 201) << first.Describe();
  const std::string id = first.json.value("id", "");
  const long long after_create = Streams();
  for (int i = 0; i < 2; ++i) {
    const Reply repeat = Create("Contoso", "acme", "brands", {{"Idempotency-Key", "create-1"}});
    EXPECT_EQ(repeat.status, 201) << repeat.Describe();
    EXPECT_EQ(repeat.json, first.json);
    EXPECT_EQ(repeat.Header("Idempotent-Replayed"), "true");
  }
  EXPECT_EQ(Streams(), after_create);

  const Reply renamed = Rename(id, "Fabrikam", "acme", {{"Idempotency-Key", "rename-1"}});
  ASSERT_EQ(renamed.status, 200) << renamed.Describe();
  const Reply deleted =
      Send(port(), "DELETE", "/tenants/acme/brands/" + id, "", {{"Idempotency-Key", "delete-1"}});
  ASSERT_EQ(deleted.status, 200) << deleted.Describe();
  const Reply restored = Send(port(), "POST", "/tenants/acme/brands/" + id + "/restore", "",
                              {{"Idempotency-Key", "restore-1"}});
  ASSERT_EQ(restored.status, 200) << restored.Describe();
  const long long after_all = Streams();
  EXPECT_EQ(after_all, after_create + 3);

  // Repeats answer what the first answered, though the brand has changed since.
  EXPECT_EQ(Rename(id, "Fabrikam", "acme", {{"Idempotency-Key", "rename-1"}}).json, renamed.json);
  EXPECT_EQ(
      Send(port(), "DELETE", "/tenants/acme/brands/" + id, "", {{"Idempotency-Key", "delete-1"}})
          .json,
      deleted.json);
  EXPECT_EQ(Send(port(), "POST", "/tenants/acme/brands/" + id + "/restore", "",
                 {{"Idempotency-Key", "restore-1"}})
                .json,
            restored.json);
  EXPECT_EQ(Streams(), after_all);
  EXPECT_EQ(Get(id).json.value("version", 0), 4);

  // A key used for another request is refused.
  const Reply other_name = Create("Northwind", "acme", "brands", {{"Idempotency-Key", "create-1"}});
  EXPECT_EQ(other_name.status, 422) << other_name.Describe();
  EXPECT_EQ(other_name.json.value("code", ""), "IDEMPOTENCY_KEY_REUSED");
  const std::string other = CreateOk("Other");
  const Reply other_brand = Rename(other, "Fabrikam", "acme", {{"Idempotency-Key", "rename-1"}});
  EXPECT_EQ(other_brand.status, 422) << other_brand.Describe();
  const Reply other_command =
      Send(port(), "DELETE", "/tenants/acme/brands/" + id, "", {{"Idempotency-Key", "rename-1"}});
  EXPECT_EQ(other_command.status, 422) << other_command.Describe();
  EXPECT_EQ(Get(id).json.value("deleted", true), false);
  EXPECT_EQ(Holder("northwind").status, 404);
  // Keys are per tenant.
  EXPECT_EQ(Create("Contoso", "another-tenant", "brands", {{"Idempotency-Key", "create-1"}}).status,
            201);
}

TEST_P(CatalogService, ConcurrentRepeatsOfOneIdempotencyKeyCreateOneBrand) {
  const long long before = Streams();
  constexpr int kClients = 8;
  std::barrier start(kClients);
  std::vector<Reply> replies(kClients);
  {
    std::vector<std::jthread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] {
        start.arrive_and_wait();
        replies[i] = Create("Contoso", "acme", "brands", {{"Idempotency-Key", "same-key"}});
      });
    }
  }
  for (const Reply& reply : replies) {
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    EXPECT_EQ(reply.json, replies[0].json);
  }
  EXPECT_EQ(Streams(), before + 1);
}

TEST_P(CatalogService, BadInputGets4xxWithACodeAndAMessageAndWritesNothing) {
  const std::string id = CreateOk("Contoso");
  const long long before = Streams();
  const std::string brands = "/tenants/acme/brands";
  const std::string brand = brands + "/" + id;
  struct Case {
    std::string what;
    Reply reply;
    int status;  // the status expected; 0: any 4xx
    std::string code;
  };
  std::vector<Case> cases = {
      {"malformed JSON", Send(port(), "POST", brands, R"({"name": )"), 400, "MALFORMED_JSON"},
      {"JSON that is not UTF-8", Send(port(), "POST", brands, "{\"name\": \"\xff\"}"), 400,
       "MALFORMED_JSON"},
      {"an empty body", Send(port(), "POST", brands, ""), 400, "MALFORMED_JSON"},
      {"a body that is not an object", Send(port(), "POST", brands, R"(["Contoso"])"), 400,
       "INVALID_BODY"},
      {"a name that is a number", Send(port(), "POST", brands, R"({"name": 5})"), 400,
       "INVALID_BODY"},
      {"a name that is null", Send(port(), "POST", brands, R"({"name": null})"), 400,
       "INVALID_BODY"},
      {"no name", Send(port(), "POST", brands, R"({"title": "Contoso"})"), 400, "INVALID_BODY"},
      {"a control character in a name",
       Send(port(), "POST", brands, R"({"name": "Con\u0000toso"})"), 400, "INVALID_NAME"},
      {"an over-long name", Create(Repeat('x', 5000)), 400, "NAME_TOO_LONG"},
      {"a body over 64 KiB", Create(Repeat('x', 70 * 1024)), 413, "BODY_TOO_LARGE"},
      {"a rename with malformed JSON", Send(port(), "PUT", brand + "/name", "{"), 400,
       "MALFORMED_JSON"},
      {"a rename with a wrong type", Send(port(), "PUT", brand + "/name", R"({"name": ["x"]})"),
       400, "INVALID_BODY"},
      {"an unknown route", Send(port(), "GET", "/nope"), 404, "NOT_FOUND"},
      {"an unknown collection", Send(port(), "GET", "/tenants/acme/widgets"), 404, "NOT_FOUND"},
      {"a path below a brand", Send(port(), "GET", brand + "/extra"), 404, "NOT_FOUND"},
      {"a trailing slash", Send(port(), "POST", brands + "/", R"({"name": "x"})"), 404,
       "NOT_FOUND"},
      {"PATCH on brands", Send(port(), "PATCH", brands, R"({"name": "x"})"), 405,
       "METHOD_NOT_ALLOWED"},
      {"DELETE on brands", Send(port(), "DELETE", brands), 405, "METHOD_NOT_ALLOWED"},
      {"a bad limit on brands", Send(port(), "GET", brands + "?limit=0"), 400, "INVALID_LIMIT"},
      {"POST on a brand", Send(port(), "POST", brand, R"({"name": "x"})"), 405,
       "METHOD_NOT_ALLOWED"},
      {"an unknown method",
       SendRaw(port(), "FOO " + brands + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 405,
       "METHOD_NOT_ALLOWED"},
      {"a malformed request line", SendRaw(port(), "GARBAGE\r\n\r\n"), 400, "BAD_REQUEST"},
      {"an over-long tenant", Create("x", Repeat('t', 65)), 400, "INVALID_TENANT"},
      {"a tenant with a space", Create("x", "ac%20me"), 400, "INVALID_TENANT"},
      {"a tenant with a slash", Create("x", "ac%2Fme"), 400, "INVALID_TENANT"},
      {"an empty tenant", Send(port(), "POST", "/tenants//brands", R"({"name": "x"})"), 400,
       "INVALID_TENANT"},
      {"an over-long id on GET", Get(Repeat('i', 129)), 400, "INVALID_ID"},
      {"an over-long id on rename", Rename(Repeat('i', 129), "x"), 400, "INVALID_ID"},
      {"an over-long id on DELETE", Send(port(), "DELETE", brands + "/" + Repeat('i', 129)), 400,
       "INVALID_ID"},
      {"an id with a NUL", Send(port(), "DELETE", brands + "/a%00b"), 400, "INVALID_ID"},
      {"an id with non-ASCII", Get("%C3%A4"), 400, "INVALID_ID"},
      {"a malformed percent-encoding", Get("a%zz"), 400, "INVALID_PATH"},
      {"a truncated percent-encoding", Get("a%2"), 400, "INVALID_PATH"},
      {"an over-long name to look up", Holder(Repeat('n', 201)), 400, "NAME_TOO_LONG"},
      {"a name to look up that is not UTF-8", Send(port(), "GET", "/tenants/acme/brand-names/%FF"),
       400, "INVALID_NAME"},
      {"a blank name to look up", Send(port(), "GET", "/tenants/acme/brand-names/%20"), 400,
       "BLANK_NAME"},
      {"a name to look up with a control character", Holder("a\x01"), 400, "INVALID_NAME"},
      {"an over-long Idempotency-Key",
       Create("Fabrikam", "acme", "brands", {{"Idempotency-Key", Repeat('k', 201)}}), 400,
       "INVALID_IDEMPOTENCY_KEY"},
      {"an Idempotency-Key with a space",
       Create("Fabrikam", "acme", "brands", {{"Idempotency-Key", "a b"}}), 400,
       "INVALID_IDEMPOTENCY_KEY"},
      {"two Idempotency-Keys",
       Create("Fabrikam", "acme", "brands", {{"Idempotency-Key", "a"}, {"Idempotency-Key", "b"}}),
       400, "INVALID_IDEMPOTENCY_KEY"},
      {"an over-long URI", Get(Repeat('i', 9000)), 414, "URI_TOO_LONG"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Reply& reply = c.reply;
    EXPECT_EQ(reply.status, c.status) << reply.Describe();
    ASSERT_TRUE(reply.json.is_object()) << reply.Describe();
    EXPECT_EQ(reply.json.value("code", ""), c.code) << reply.Describe();
    EXPECT_FALSE(reply.json.value("message", "").empty()) << reply.Describe();
  }
  EXPECT_EQ(Streams(), before);
  const Reply got = Get(id);
  EXPECT_EQ(got.json.value("version", 0), 1) << got.Describe();
  EXPECT_EQ(Holder("fabrikam").status, 404);
  EXPECT_EQ(Send(port(), "GET", "/healthz").status, 200);
}

TEST_P(CatalogService, HealthzAndMetricsAnswer) {
  const Reply health = Send(port(), "GET", "/healthz");
  EXPECT_EQ(health.status, 200) << health.Describe();
  EXPECT_EQ(health.json, (json{{"status", "ok"}}));
  CreateOk("Contoso");
  EXPECT_EQ(Create("contoso").status, 409);

  const Reply metrics = Send(port(), "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200) << metrics.Describe();
  EXPECT_EQ(metrics.Header("Content-Type").rfind("text/plain", 0), 0u);
  for (const std::string line :
       {R"(wow_catalog_commands_total{aggregate="brand",command="create",outcome="accepted"} 1)",
        R"(wow_catalog_commands_total{aggregate="brand",command="create",outcome="rejected"} 1)",
        R"(wow_catalog_rejections_total{aggregate="brand",code="NAME_TAKEN"} 1)",
        R"(wow_catalog_appends_total{result="appended"} 1)",
        R"(wow_catalog_reserves_total{result="taken"} 1)",
        "# TYPE wow_catalog_append_seconds histogram",
        R"(wow_catalog_append_seconds_bucket{le="+Inf"} 1)", "wow_catalog_append_seconds_count 1",
        "wow_catalog_command_seconds_count 2",
        R"(wow_catalog_http_requests_total{method="GET",status="200"} 1)"}) {
    EXPECT_NE(metrics.body.find(line + "\n"), std::string::npos) << line << "\n" << metrics.body;
  }
  // The SQLite writer's counters (-1: missing). The tests' services run synchronous=normal, which
  // syncs nothing. A MongoDB store set reports no figures of its own.
  if (GetParam() != "Sqlite") {
    EXPECT_EQ(metrics.body.find("wow_sqlite_"), std::string::npos) << metrics.body;
    return;
  }
  auto counter = [&](const std::string& name) -> long {
    const size_t at = metrics.body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stol(metrics.body.substr(at + name.size() + 2));
  };
  EXPECT_GE(counter("wow_sqlite_transactions_total"), 2) << "the reserve and the append at least";
  EXPECT_GE(counter("wow_sqlite_writes_total"), counter("wow_sqlite_transactions_total"));
  EXPECT_EQ(counter("wow_sqlite_synced_transactions_total"), 0) << metrics.body;
  EXPECT_EQ(counter("wow_sqlite_syncs_total"), 0);
  EXPECT_EQ(counter("wow_sqlite_reader_syncs_total"), 0);
  EXPECT_EQ(counter("wow_sqlite_checkpoints_total"), 0) << "two writes fill no 256 pages";
  EXPECT_NE(metrics.body.find("\nwow_sqlite_writing_seconds_total "), std::string::npos);
  EXPECT_NE(metrics.body.find("\nwow_sqlite_syncing_seconds_total 0\n"), std::string::npos)
      << metrics.body;
}

// Clients that create brands with fresh names as fast as they can until told to stop or the
// service stops answering; they keep every brand acknowledged with 201.
class Load {
 public:
  Load(int port, int clients, std::string prefix) {
    for (int c = 0; c < clients; ++c) {
      clients_.emplace_back([this, port, c, prefix](std::stop_token stop) {
        for (int i = 0; !stop.stop_requested(); ++i) {
          const std::string name = prefix + "-" + std::to_string(c) + "-" + std::to_string(i);
          const Reply reply = Send(port, "POST", "/tenants/load/brands", NameBody(name).dump());
          if (reply.status == 0) break;  // the service is gone
          std::lock_guard lock(mutex_);
          ++answered_;
          if (reply.status == 201) {
            acknowledged_.emplace_back(reply.json.value("id", ""), name);
          } else {
            others_.push_back(reply.Describe());
          }
        }
      });
    }
  }
  // Waits until `n` brands are acknowledged (or 20 s pass).
  void WaitForAcknowledged(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mutex_);
        if (acknowledged_.size() >= n) return;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  void Stop() { clients_.clear(); }
  const std::vector<std::pair<std::string, std::string>>& acknowledged() const {
    return acknowledged_;
  }
  const std::vector<std::string>& others() const { return others_; }

 private:
  std::mutex mutex_;
  long answered_ = 0;
  std::vector<std::pair<std::string, std::string>> acknowledged_;  // id, name
  std::vector<std::string> others_;
  std::vector<std::jthread> clients_;
};

TEST_P(CatalogServiceOnAFile, SigtermAndSigintFinishTheCommandsInFlightAndCloseTheStore) {
  for (int signal : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(signal);
    Load load(port(), 8, "stop" + std::to_string(signal));
    load.WaitForAcknowledged(50);
    service_->Signal(signal);
    const std::optional<int> status = service_->Wait(milliseconds(30'000));
    load.Stop();
    ASSERT_TRUE(status.has_value()) << "the service did not stop";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;
    EXPECT_NE(service_->Log().find("stopped cleanly"), std::string::npos) << service_->Log();
    // The store was closed: the last connection folded the write-ahead log into the file.
    EXPECT_FALSE(std::filesystem::exists(db() + "-wal"));
    EXPECT_GE(load.acknowledged().size(), 50u);
    const LogSummary log = ReadLog(db(), "brand", "load");
    for (const auto& [id, name] : load.acknowledged()) {
      auto it = log.names.find(id);
      ASSERT_NE(it, log.names.end()) << id << " " << name;
      EXPECT_EQ(it->second, name);
    }
    service_ =
        std::make_unique<ServiceProcess>(db(), std::vector<std::string>{"--synchronous", "normal"});
    ASSERT_GT(service_->port(), 0);
  }
}

TEST_P(CatalogServiceOnAFile, ItRefusesAnotherPartitionCountAndABusyPortAndKeepsAFilesCount) {
  std::string log;
  // The file was created with 16 partitions.
  EXPECT_EQ(
      ServiceProcess::RunToExit({"--db", db(), "--listen", "127.0.0.1:0", "--partitions", "8"}, log,
                                milliseconds(30'000)),
      1)
      << log;
  EXPECT_NE(log.find("16"), std::string::npos) << log;
  EXPECT_EQ(ServiceProcess::RunToExit(
                {"--db", dir_.File("other.db"), "--listen", "127.0.0.1:" + std::to_string(port())},
                log, milliseconds(30'000)),
            1)
      << log;
  EXPECT_NE(log.find("cannot listen"), std::string::npos) << log;
  EXPECT_NE(ServiceProcess::RunToExit({"--db", db(), "--threads", "0"}, log, milliseconds(30'000)),
            0);
  EXPECT_NE(
      ServiceProcess::RunToExit({"--db", db(), "--listen", "nowhere"}, log, milliseconds(30'000)),
      0);
  EXPECT_EQ(ServiceProcess::RunToExit({"--help"}, log, milliseconds(30'000)), 0);
  for (const std::string flag : {"--store", "--db", "--listen", "--partitions", "--log-level",
                                 "--threads", "--synchronous"}) {
    EXPECT_NE(log.find(flag), std::string::npos) << flag;
  }

  // A file created with 4 partitions keeps them when a later start names none.
  const std::string small = dir_.File("nested/dir/small.db");
  {
    ServiceProcess first(small, {"--partitions", "4"});
    ASSERT_GT(first.port(), 0);
  }
  ServiceProcess second(small);
  ASSERT_GT(second.port(), 0);
  EXPECT_NE(second.Log().find("4 partitions"), std::string::npos) << second.Log();
  EXPECT_EQ(Send(second.port(), "POST", "/tenants/acme/brands", NameBody("x").dump()).status, 201);
}

TEST_P(CatalogServiceOnAFile, ADamagedBrandIs500DataLossAndTheServiceReportsItselfUnhealthy) {
  // The request id (the idempotency key) is in the log's row alone, not in the list's row.
  const Reply created =
      Create("Northwind", "acme", "brands", {{"Idempotency-Key", "damage-this-stream-7f3a"}});
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string damaged = created.json.value("id", "");
  const std::string sound = CreateOk("Contoso");
  service_->Signal(SIGTERM);
  ASSERT_TRUE(service_->Wait(milliseconds(30'000)).has_value());
  ASSERT_TRUE(testing_support::FlipABitOf(db(), "damage-this-stream-7f3a"));
  service_ = std::make_unique<ServiceProcess>(db());
  ASSERT_GT(port(), 0) << service_->Log();
  EXPECT_EQ(Send(port(), "GET", "/healthz").status, 200);  // nothing damaged read yet

  const Reply get = Get(damaged);
  EXPECT_EQ(get.status, 500) << get.Describe();
  EXPECT_EQ(get.json.value("code", ""), "DATA_LOSS") << get.Describe();
  EXPECT_NE(get.json.value("message", "").find(damaged), std::string::npos) << get.Describe();
  EXPECT_EQ(Get(sound).status, 200);

  const Reply health = Send(port(), "GET", "/healthz");
  EXPECT_EQ(health.status, 503) << health.Describe();
  EXPECT_EQ(health.json.value("status", ""), "data_loss") << health.Describe();
  EXPECT_NE(health.json.value("last", "").find(damaged), std::string::npos) << health.Describe();
  const Reply metrics = Send(port(), "GET", "/metrics");
  EXPECT_NE(metrics.body.find("\nwow_data_loss_total 1\n"), std::string::npos) << metrics.body;
}

TEST_P(CatalogServiceOnAFile, ItRefusesToStartOnAFileWhoseHeaderIsDamagedNamingTheCodeOnce) {
  service_->Signal(SIGTERM);
  ASSERT_TRUE(service_->Wait(milliseconds(30'000)).has_value());
  for (const std::size_t offset : {std::size_t{3}, std::size_t{68}}) {  // the magic, application_id
    SCOPED_TRACE(offset);
    std::fstream file(db(), std::ios::binary | std::ios::in | std::ios::out);
    file.seekg(static_cast<std::streamoff>(offset));
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(static_cast<std::streamoff>(offset));
    byte = static_cast<char>(byte ^ 0x10);
    file.write(&byte, 1);
    file.close();
    std::string log;
    EXPECT_EQ(ServiceProcess::RunToExit({"--db", db(), "--listen", "127.0.0.1:0"}, log,
                                        milliseconds(30'000)),
              1)
        << log;
    EXPECT_NE(log.find("DATA_LOSS: "), std::string::npos) << log;
    EXPECT_EQ(log.find("DATA_LOSS: DATA_LOSS"), std::string::npos) << log;
    // Undone, for the next offset.
    std::fstream undo(db(), std::ios::binary | std::ios::in | std::ios::out);
    undo.seekp(static_cast<std::streamoff>(offset));
    byte = static_cast<char>(byte ^ 0x10);
    undo.write(&byte, 1);
  }
}

TEST_P(CatalogServiceOnAFile, TheStoreIsAUriAndDbIsItsSynonym) {
  // The fixture's service runs on --store PATH; sqlite:PATH and --db PATH name the same file.
  ASSERT_EQ(Send(port(), "POST", "/tenants/acme/brands", NameBody("Contoso").dump()).status, 201);
  service_.reset();
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--store", "sqlite:" + db()},
        std::vector<std::string>{"--db", db()}}) {
    std::string log;
    std::vector<std::string> args = flags;
    args.insert(args.end(), {"--listen", "127.0.0.1:0", "--partitions", "8"});
    EXPECT_EQ(ServiceProcess::RunToExit(args, log, milliseconds(30'000)), 1) << log;
    EXPECT_NE(log.find("16"), std::string::npos) << "the same file, of 16 partitions: " << log;
  }
  // A throw-away store in memory.
  ServiceProcess memory("memory:");
  ASSERT_GT(memory.port(), 0);
  EXPECT_EQ(Send(memory.port(), "POST", "/tenants/acme/brands", NameBody("Contoso").dump()).status,
            201);
  std::string log;
  EXPECT_EQ(ServiceProcess::RunToExit({"--store", "postgres://db/shop"}, log, milliseconds(30'000)),
            2);
  EXPECT_NE(log.find("accepted: memory:, sqlite:PATH"), std::string::npos) << log;
  EXPECT_EQ(ServiceProcess::RunToExit({"--listen", "127.0.0.1:0"}, log, milliseconds(30'000)), 2);
}

// The spellings of "Contoso" client `i` of a race uses: its own mix of cases and white space.
std::string Spelling(int i) {
  std::string name = "contoso";
  for (size_t b = 0; b < name.size(); ++b) {
    if ((i >> b) & 1) name[b] = static_cast<char>(std::toupper(name[b]));
  }
  if (i & 1) name = " " + name;
  if (i & 2) name += "\t";
  return name;
}

class CatalogServiceProjection : public ::testing::TestWithParam<StoreKind> {};

// A create that waits until the projection applied it is listed at once, by either process,
// whichever holds the partition's lease: 1,000 times on a file (200 on the test server, a test
// double in one Node.js process), alternating the processes.
TEST_P(CatalogServiceProjection, ACreateThatWaitsIsInTheListEveryTimeAcrossTwoServicesOnOneStore) {
  testing_support::TempDir dir;
  std::string skip;
  const std::string db = FreshStore(GetParam(), dir, "wait.db", &skip);
  if (db.empty()) GTEST_SKIP() << skip;
  const int creates = GetParam() == "Sqlite" ? 1000 : 200;
  ServiceProcess first(db, {"--synchronous", "normal", "--partitions", "4"});
  ASSERT_GT(first.port(), 0);
  ServiceProcess second(db, {"--synchronous", "normal"});
  ASSERT_GT(second.port(), 0);
  int missing = 0;
  for (int i = 0; i < creates && missing < 5; ++i) {
    const int writer = i % 2 ? first.port() : second.port();
    const int reader = i % 3 ? first.port() : second.port();
    const Reply created = Send(writer, "POST", "/tenants/acme/brands?wait=projected",
                               NameBody("Brand " + std::to_string(i)).dump());
    ASSERT_EQ(created.status, 201) << i << ": " << created.Describe();
    const std::string id = created.json.value("id", "");
    // The page that starts just before the id: the brand, if it is listed.
    const Reply listed = Send(
        reader, "GET", "/tenants/acme/brands?limit=1&after=" + id.substr(0, id.size() - 1), "");
    ASSERT_EQ(listed.status, 200) << listed.Describe();
    const bool found =
        listed.json["items"].size() == 1 && listed.json["items"][0].value("id", "") == id;
    if (!found) {
      ++missing;
      ADD_FAILURE() << "brand " << i << " (" << id << ") is not listed: " << listed.Describe();
    }
  }
  if (HasFailure()) std::cerr << first.Log() << "\n" << second.Log() << "\n";
}

class CatalogServiceRace : public ::testing::TestWithParam<StoreKind> {};

TEST_P(CatalogServiceRace, TwoServicesOnOneStoreGiveOneNameToExactlyOneOf64Clients) {
  testing_support::TempDir dir;
  std::string skip;
  const std::string db = FreshStore(GetParam(), dir, "race.db", &skip);
  if (db.empty()) GTEST_SKIP() << skip;
  ServiceProcess first(db, {"--synchronous", "normal"});
  ASSERT_GT(first.port(), 0);
  ServiceProcess second(db, {"--synchronous", "normal"});
  ASSERT_GT(second.port(), 0);

  constexpr int kClients = 64;
  std::barrier start(kClients);
  std::vector<Reply> replies(kClients);
  {
    std::vector<std::jthread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] {
        const int port = i % 2 ? first.port() : second.port();
        start.arrive_and_wait();
        replies[i] = Send(port, "POST", "/tenants/acme/brands", NameBody(Spelling(i)).dump());
      });
    }
  }
  int created = 0;
  int taken = 0;
  std::string winner;
  for (const Reply& reply : replies) {
    if (reply.status == 201) {
      ++created;
      winner = reply.json.value("id", "");
    } else if (reply.status == 409 && reply.json.value("code", "") == "NAME_TAKEN") {
      ++taken;
    } else {
      ADD_FAILURE() << reply.Describe();
    }
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(taken, kClients - 1);
  for (int port : {first.port(), second.port()}) {
    const Reply holder = Send(port, "GET", "/tenants/acme/brand-names/Contoso");
    EXPECT_EQ(holder.json.value("owner", ""), winner) << holder.Describe();
  }
  const LogSummary log = ReadLog(db, "brand", "acme");
  EXPECT_EQ(log.names.size(), 1u);
  if (HasFailure()) std::cerr << first.Log() << "\n" << second.Log() << "\n";
}

class CatalogServiceCrash : public ::testing::TestWithParam<StoreKind> {};

// Two services on one store fire the drafts' timers between them, each once with effect; when
// one is killed with SIGKILL while it holds partitions' leases, the other takes its partitions
// over once the leases expire (10 s) and fires their timers too. On the real clock, with a draft
// time of 3 s: the kill lands before any draft is due.
TEST_P(CatalogServiceCrash, TwoServicesFireEachDraftsTimerOnceAndTheSurvivorTakesOverAKilledOnes) {
  testing_support::TempDir dir;
  std::string skip;
  const std::string db = FreshStore(GetParam(), dir, "timers.db", &skip);
  if (db.empty()) GTEST_SKIP() << skip;
  const std::vector<std::string> flags = {"--draft-time-ms", "3000", "--partitions", "4"};
  auto killed = std::make_unique<ServiceProcess>(db, flags);
  ASSERT_GT(killed->port(), 0);
  ServiceProcess survivor(db, flags);
  ASSERT_GT(survivor.port(), 0);
  constexpr int kDrafts = 24;
  std::vector<std::string> ids;
  for (int i = 0; i < kDrafts; ++i) {
    const int port = i % 2 ? killed->port() : survivor.port();
    const Reply created =
        Send(port, "POST", "/tenants/acme/brands",
             json{{"name", "Draft " + std::to_string(i)}, {"draft", true}}.dump());
    ASSERT_EQ(created.status, 201) << created.Describe();
    ids.push_back(created.json.value("id", ""));
  }
  killed->Kill();  // holding its partitions' leases, their drafts not yet due

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  std::map<std::string, json> brands;
  for (bool all_expired = false; !all_expired && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(milliseconds(200));
    all_expired = true;
    for (const std::string& id : ids) {
      brands[id] = Send(survivor.port(), "GET", "/tenants/acme/brands/" + id).json;
      all_expired = all_expired && brands[id].value("status", "") == "expired";
    }
  }
  std::this_thread::sleep_for(milliseconds(500));  // a second firing, were there one, lands
  for (const std::string& id : ids) {
    const json brand = Send(survivor.port(), "GET", "/tenants/acme/brands/" + id).json;
    EXPECT_EQ(brand.value("status", ""), "expired") << brand.dump();
    EXPECT_EQ(brand.value("version", 0), 2) << "expired once: " << brand.dump();
  }
  for (int i = 0; i < kDrafts; ++i) {
    EXPECT_EQ(Send(survivor.port(), "POST", "/tenants/acme/brands",
                   NameBody("DRAFT " + std::to_string(i)).dump())
                  .status,
              201)
        << "draft " << i << "'s name is free";
  }
  if (HasFailure()) std::cerr << survivor.Log() << "\n" << killed->Log() << "\n";
}

// A draft whose time runs out while its service is dead (SIGKILL, leases held) is expired once by
// the service started after it, which takes the partitions over when the dead one's leases
// expire (10 s): the name is free, the list shows the brand expired, and a published draft is
// kept. On the real clock, with a draft time of 1.5 s.
TEST_P(CatalogServiceCrash, ADraftDueWhileItsServiceIsKilledExpiresOnceAfterARestart) {
  testing_support::TempDir dir;
  std::string skip;
  const std::string db = FreshStore(GetParam(), dir, "drafts.db", &skip);
  if (db.empty()) GTEST_SKIP() << skip;
  const std::vector<std::string> flags = {"--draft-time-ms", "1500"};
  auto service = std::make_unique<ServiceProcess>(db, flags);
  ASSERT_GT(service->port(), 0);
  const json draft = {{"name", "Contoso"}, {"draft", true}};
  const Reply created = Send(service->port(), "POST", "/tenants/acme/brands", draft.dump());
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string id = created.json.value("id", "");
  const Reply kept = Send(service->port(), "POST", "/tenants/acme/brands",
                          json{{"name", "Fabrikam"}, {"draft", true}}.dump());
  ASSERT_EQ(kept.status, 201) << kept.Describe();
  const std::string kept_id = kept.json.value("id", "");
  ASSERT_EQ(Send(service->port(), "POST", "/tenants/acme/brands/" + kept_id + "/publish").status,
            200);
  service->Kill();  // before the draft is due: its timer is stored, its leases held
  std::this_thread::sleep_for(milliseconds(2000));

  service = std::make_unique<ServiceProcess>(db, flags);
  ASSERT_GT(service->port(), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  Reply got;
  do {
    std::this_thread::sleep_for(milliseconds(100));
    got = Send(service->port(), "GET", "/tenants/acme/brands/" + id);
  } while (got.json.value("status", "") != "expired" &&
           std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(got.json.value("status", ""), "expired") << got.Describe() << "\n" << service->Log();
  EXPECT_EQ(got.json.value("version", 0), 2);
  EXPECT_EQ(Send(service->port(), "POST", "/tenants/acme/brands?wait=projected",
                 NameBody("CONTOSO").dump())
                .status,
            201)
      << "the expired draft's name is free";
  // `?wait=projected` waits for the new brand's own partition; the expiry sits in the draft's
  // partition, which the projection reaches in its own time (the lists are eventually consistent).
  Reply listed;
  std::map<std::string, std::string> statuses;
  const auto listed_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    listed = Send(service->port(), "GET", "/tenants/acme/brands?prefix=contoso");
    statuses.clear();
    for (const json& item : listed.json["items"]) statuses[item["id"]] = item.value("status", "");
    if (statuses[id] == "expired") break;
    std::this_thread::sleep_for(milliseconds(100));
  } while (std::chrono::steady_clock::now() < listed_by);
  EXPECT_EQ(statuses[id], "expired") << listed.Describe();
  EXPECT_EQ(statuses.size(), 2u) << listed.Describe();
  const Reply published = Send(service->port(), "GET", "/tenants/acme/brands/" + kept_id);
  EXPECT_EQ(published.json.value("status", ""), "published") << published.Describe();
  EXPECT_EQ(Send(service->port(), "GET", "/tenants/acme/brands/" + id).json.value("version", 0), 2)
      << "expired once";
}

TEST_P(CatalogServiceCrash, ASigkillUnderLoadLosesNoAcknowledgedBrandAndLeavesOneHolderPerName) {
  testing_support::TempDir dir;
  std::string skip;
  const std::string db = FreshStore(GetParam(), dir, "crash.db", &skip);
  if (db.empty()) GTEST_SKIP() << skip;
  auto service = std::make_unique<ServiceProcess>(db);  // synchronous=full, the default
  ASSERT_GT(service->port(), 0);

  // Pairs of clients race for each name, so the kill also lands between rivals.
  constexpr int kClients = 16;
  std::mutex mutex;
  std::map<std::string, std::vector<std::string>> created;  // name -> ids acknowledged
  std::set<std::string> attempted;
  std::atomic<int> acknowledged{0};
  {
    std::vector<std::jthread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, c] {
        for (int i = 0;; ++i) {
          const std::string name = "brand-" + std::to_string(c / 2) + "-" + std::to_string(i);
          {
            std::lock_guard lock(mutex);
            attempted.insert(name);
          }
          const Reply reply =
              Send(service->port(), "POST", "/tenants/acme/brands", NameBody(name).dump());
          if (reply.status == 0) return;  // killed
          if (reply.status == 201) {
            std::lock_guard lock(mutex);
            created[name].push_back(reply.json.value("id", ""));
            ++acknowledged;
          } else if (reply.status != 409) {
            ADD_FAILURE() << reply.Describe();
          }
        }
      });
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (acknowledged.load() < 200 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(2));
    }
    service->Kill();  // SIGKILL, with requests in flight
  }
  ASSERT_GE(acknowledged.load(), 200);

  service = std::make_unique<ServiceProcess>(db);
  ASSERT_GT(service->port(), 0);
  for (const auto& [name, ids] : created) {
    ASSERT_EQ(ids.size(), 1u) << name << " was given to two brands";
    const Reply got = Send(service->port(), "GET", "/tenants/acme/brands/" + ids[0]);
    EXPECT_EQ(got.status, 200) << got.Describe();
    EXPECT_EQ(got.json.value("name", ""), name);
    const Reply holder =
        Send(service->port(), "GET", "/tenants/acme/brand-names/" + PercentEncode(name));
    EXPECT_EQ(holder.json.value("owner", ""), ids[0]) << name << ": " << holder.Describe();
  }
  // No name has two brands in the log, acknowledged or not; and a name held by a brand that is
  // in the log is held by that brand.
  const LogSummary log = ReadLog(db, "brand", "acme");
  std::map<std::string, std::string> owners;
  for (const auto& [id, name] : log.names) {
    EXPECT_TRUE(owners.emplace(wow::MakeNameKey(name).key, id).second) << name << " has two brands";
  }
  for (const std::string& name : attempted) {
    const Reply holder =
        Send(service->port(), "GET", "/tenants/acme/brand-names/" + PercentEncode(name));
    if (holder.status == 404) {
      EXPECT_FALSE(owners.contains(name)) << name << " is in the log but held by no one";
      continue;
    }
    ASSERT_EQ(holder.status, 200) << holder.Describe();
    if (owners.contains(name)) {
      EXPECT_EQ(holder.json.value("owner", ""), owners[name]) << name;
    } else {
      // Only a pending hold of a decision that never reached the log.
      EXPECT_EQ(holder.json.value("state", ""), "pending") << name << ": " << holder.Describe();
    }
  }
}

const auto kStores = ::testing::Values(StoreKind("Sqlite"), StoreKind("MongoTestServer"));
const auto kStoreName = [](const ::testing::TestParamInfo<StoreKind>& info) { return info.param; };

INSTANTIATE_TEST_SUITE_P(Store, CatalogService, kStores, kStoreName);
INSTANTIATE_TEST_SUITE_P(Store, CatalogServiceOnAFile, ::testing::Values(StoreKind("Sqlite")),
                         kStoreName);
INSTANTIATE_TEST_SUITE_P(Store, CatalogServiceRace, kStores, kStoreName);
INSTANTIATE_TEST_SUITE_P(Store, CatalogServiceProjection, kStores, kStoreName);
INSTANTIATE_TEST_SUITE_P(Store, CatalogServiceCrash, kStores, kStoreName);

}  // namespace
}  // namespace wow::service_test
