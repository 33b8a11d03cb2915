// The MongoTestServer fixture against libmongoc 1.23: the project's MongoDB TEST SERVER (a test
// double, not MongoDB) starts on a free port, and libmongoc's handshake, server selection of the
// replica set's primary, `ping` and `hello` work against it. Skipped, with the reason, where
// Node.js or the server's npm packages are missing.
#include <mongoc/mongoc.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "support/mongo_test_server.h"

namespace wow::testing_support {
namespace {

struct ClientDeleter {
  void operator()(mongoc_client_t* client) const { mongoc_client_destroy(client); }
};
using Client = std::unique_ptr<mongoc_client_t, ClientDeleter>;

// One test server for the whole suite, as the store suites will use it.
class MongoTestServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    mongoc_init();
    if (!MongoTestServer::Unavailable()) server_ = std::make_unique<MongoTestServer>();
  }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (auto reason = MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
    bson_error_t error;
    std::unique_ptr<mongoc_uri_t, decltype(&mongoc_uri_destroy)> uri(mongoc_uri_new_with_error(server_->uri().c_str(), &error),
                                                                    mongoc_uri_destroy);
    ASSERT_TRUE(uri) << error.message;
    mongoc_uri_set_option_as_int32(uri.get(), MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 5000);
    client_.reset(mongoc_client_new_from_uri_with_error(uri.get(), &error));
    ASSERT_TRUE(client_) << error.message;
  }

  // Runs `command` on the admin database; the reply, or a failure naming the server's log.
  testing::AssertionResult Run(const char* json, bson_t* reply) {
    bson_error_t error;
    bson_t* command = bson_new_from_json(reinterpret_cast<const uint8_t*>(json), -1, &error);
    if (!command) return testing::AssertionFailure() << error.message;
    const bool ok = mongoc_client_command_simple(client_.get(), "admin", command, nullptr, reply, &error);
    bson_destroy(command);
    if (!ok) {
      return testing::AssertionFailure() << json << " failed: " << error.message
                                         << " (the test server's log: " << server_->log_path() << ")";
    }
    return testing::AssertionSuccess();
  }

  static inline std::unique_ptr<MongoTestServer> server_;
  Client client_;
};

TEST_F(MongoTestServerTest, AnswersPingThroughLibmongoc) {
  bson_t reply;
  ASSERT_TRUE(Run(R"({"ping": 1})", &reply));
  bson_iter_t ok;
  EXPECT_TRUE(bson_iter_init_find(&ok, &reply, "ok") && bson_iter_as_double(&ok) == 1.0);
  bson_destroy(&reply);
}

TEST_F(MongoTestServerTest, HelloReportsTheReplicaSet) {
  bson_t reply;
  ASSERT_TRUE(Run(R"({"hello": 1})", &reply));
  bson_iter_t field;
  ASSERT_TRUE(bson_iter_init_find(&field, &reply, "setName") && BSON_ITER_HOLDS_UTF8(&field));
  EXPECT_EQ(std::string(bson_iter_utf8(&field, nullptr)), server_->set_name());
  ASSERT_TRUE(bson_iter_init_find(&field, &reply, "isWritablePrimary") && BSON_ITER_HOLDS_BOOL(&field));
  EXPECT_TRUE(bson_iter_bool(&field));
  ASSERT_TRUE(bson_iter_init_find(&field, &reply, "me") && BSON_ITER_HOLDS_UTF8(&field));
  EXPECT_EQ(std::string(bson_iter_utf8(&field, nullptr)), "127.0.0.1:" + std::to_string(server_->port()));
  bson_destroy(&reply);
}

TEST_F(MongoTestServerTest, UnknownCommandIsCommandNotFound) {
  bson_error_t error;
  bson_t* command = BCON_NEW("frobnicate", BCON_INT32(1));
  EXPECT_FALSE(mongoc_client_command_simple(client_.get(), "admin", command, nullptr, nullptr, &error));
  EXPECT_EQ(error.code, 59u) << error.message;
  bson_destroy(command);
}

}  // namespace
}  // namespace wow::testing_support
