// The MongoDB suites' deployments: the project's MongoDB TEST SERVER (a test double, started once
// per test binary, in its interleaving mode so that concurrent writes race as on a real server),
// or the real replica set that WOW_TEST_MONGODB_URI names; a fresh database for each store the
// tests open, so tests share nothing.
//
// Header-only, for test binaries that link wow_mongo. Thread-safety: the functions
// are safe to call from any thread.
#pragma once

#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
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

}  // namespace wow::testing_support
