// OpenMongoDeployment against the MongoDB TEST SERVER (a test double): what libmongoc itself logs
// goes to spdlog's default logger at its own level, not straight to stderr.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>

#include "support/mongo_test_deployment.h"
#include "wow/error.h"
#include "wow/mongo.h"

namespace wow {
namespace {

using testing_support::MongoTestServer;

// Sends spdlog's default logger's lines (all levels, as "LEVEL message") to `out` while alive.
class CapturedLog {
 public:
  explicit CapturedLog(std::ostringstream& out) : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    sink->set_pattern("%l %v");
    auto logger = std::make_shared<spdlog::logger>("captured", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

 private:
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(MongoDeployment, LibmongocsOwnLogLinesGoToSpdlogAtTheirLevel) {
  if (auto reason = MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
  // The test double has no authentication: credentials make libmongoc log a failed handshake.
  std::string uri = testing_support::SharedMongoTestServer().uri();
  uri.insert(uri.find("://") + 3, "someone:secret@");
  std::ostringstream out;
  {
    CapturedLog captured(out);
    try {
      OpenMongoDeployment(uri);
      ADD_FAILURE() << "credentials the server cannot check were accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kPermissionDenied) << e.what();
      EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
    }
  }
  const std::string lines = out.str();
  EXPECT_NE(lines.find("warning libmongoc cluster: Failed authentication"), std::string::npos)
      << lines;
  EXPECT_NE(lines.find("debug libmongoc cluster: Authentication failed"), std::string::npos)
      << lines;
  EXPECT_EQ(lines.find("secret"), std::string::npos) << lines;
}

}  // namespace
}  // namespace wow
