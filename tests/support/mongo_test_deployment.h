// The MongoDB suites' deployments: the project's MongoDB TEST SERVER (a test double, started once
// per test binary, in its interleaving mode so that concurrent writes race as on a real server),
// or the real replica set that WOW_TEST_MONGODB_URI names; a fresh database for each store the
// tests open, so tests share nothing; and commands sent straight to the server (fail points).
//
// Header-only, for test binaries that link wow_mongo and libmongoc. Thread-safety: the functions
// are safe to call from any thread.
#pragma once

#include <mongoc/mongoc.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "support/mongo_test_server.h"
#include "wow/model.h"
#include "wow/mongo.h"

namespace wow::testing_support {

// The seed of the shared test server's interleaving mode.
inline constexpr std::uint32_t kMongoInterleaveSeed = 7;

// The URI of the real replica set the suites also run against, or nullopt when
// WOW_TEST_MONGODB_URI is not set.
inline std::optional<std::string> RealMongoUri() {
  const char* uri = std::getenv("WOW_TEST_MONGODB_URI");
  if (uri == nullptr || *uri == '\0') return std::nullopt;
  return std::string(uri);
}

// The test binary's test server, started on first use (in interleaving mode) and stopped at exit.
// Throws std::runtime_error when it cannot start; call MongoTestServer::Unavailable() first.
inline MongoTestServer& SharedMongoTestServer() {
  static std::once_flag once;
  static std::unique_ptr<MongoTestServer> server;
  std::call_once(once, [] {
    MongoTestServer::Options options;
    options.interleave_seed = kMongoInterleaveSeed;
    server = std::make_unique<MongoTestServer>(options);
  });
  return *server;
}

// A deployment on `uri` whose stores use a database of their own ("wow_test_" and a fresh id), so
// that a test's stores see nothing of another test's. `options.database` is replaced.
inline std::shared_ptr<MongoDeployment> FreshMongoDeployment(const std::string& uri,
                                                             MongoOptions options = {}) {
  options.database = "wow_test_" + NewId().substr(12);
  return OpenMongoDeployment(uri, options);
}

// The test server's URI with a database of a test's own ("wow_test_" and a fresh id) in its path:
// the URI of stores that see nothing of another test's (OpenStores of a mongodb:// URI).
inline std::string FreshMongoTestServerUri() {
  std::string uri = SharedMongoTestServer().uri();
  return uri.insert(uri.find("/?") + 1, "wow_test_" + NewId().substr(12));
}

// Runs `json` (extended JSON) on `database` of `uri` through a client of its own; the reply as
// libbson's relaxed extended JSON. Throws std::runtime_error, with libmongoc's message, when it
// fails.
inline std::string RunMongoCommand(const std::string& uri, const std::string& json,
                                   const std::string& database = "admin") {
  mongoc_init();
  bson_error_t error;
  std::unique_ptr<mongoc_client_t, decltype(&mongoc_client_destroy)> client(
      mongoc_client_new(uri.c_str()), mongoc_client_destroy);
  if (!client) throw std::runtime_error("cannot make a client for " + uri);
  bson_t* command = bson_new_from_json(reinterpret_cast<const std::uint8_t*>(json.data()),
                                       static_cast<ssize_t>(json.size()), &error);
  if (command == nullptr) throw std::runtime_error("bad JSON " + json + ": " + error.message);
  bson_t reply;
  const bool ok = mongoc_client_command_simple(client.get(), database.c_str(), command, nullptr,
                                               &reply, &error);
  bson_destroy(command);
  char* text = bson_as_relaxed_extended_json(&reply, nullptr);
  std::string answer = text != nullptr ? text : "";
  bson_free(text);
  bson_destroy(&reply);
  if (!ok) throw std::runtime_error(json + " failed: " + error.message);
  return answer;
}

// Sets the failCommand fail point of `uri`'s server: `mode` (R"({"times": 1})", R"("off")") and
// `data` (extended JSON).
inline void SetFailPoint(const std::string& uri, const std::string& mode,
                         const std::string& data = "{}") {
  RunMongoCommand(uri, R"({"configureFailPoint": "failCommand", "mode": )" + mode +
                           R"(, "data": )" + data + "}");
}

}  // namespace wow::testing_support
