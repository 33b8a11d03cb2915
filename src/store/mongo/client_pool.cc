#include "store/mongo/client_pool.h"

#include <spdlog/spdlog.h>

#include <mutex>

#include "wow/error.h"

namespace wow::mongo {
namespace {

// libmongoc's log lines, on spdlog's default logger ("libmongoc DOMAIN: message") at the level
// they were given, instead of libmongoc's own handler, which prints every one (DEBUG too) on
// stderr. Called on libmongoc's monitoring threads too: spdlog's default logger is thread-safe.
void LogToSpdlog(mongoc_log_level_t level, const char* domain, const char* message, void*) {
  spdlog::level::level_enum to = spdlog::level::info;
  switch (level) {
    case MONGOC_LOG_LEVEL_ERROR:
      to = spdlog::level::err;
      break;
    case MONGOC_LOG_LEVEL_CRITICAL:
      to = spdlog::level::critical;
      break;
    case MONGOC_LOG_LEVEL_WARNING:
      to = spdlog::level::warn;
      break;
    case MONGOC_LOG_LEVEL_MESSAGE:
    case MONGOC_LOG_LEVEL_INFO:
      to = spdlog::level::info;
      break;
    case MONGOC_LOG_LEVEL_DEBUG:
      to = spdlog::level::debug;
      break;
    case MONGOC_LOG_LEVEL_TRACE:
      to = spdlog::level::trace;
      break;
  }
  spdlog::log(to, "libmongoc {}: {}", domain != nullptr ? domain : "-",
              message != nullptr ? message : "");
}

// libmongoc's global state, set up once per process and kept until it exits; its log lines go to
// spdlog from then on.
void InitMongocOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    mongoc_log_set_handler(LogToSpdlog, nullptr);
    mongoc_init();
  });
}

// Sets an int32 option of `uri` to `value` unless the URI sets it already.
void DefaultOption(mongoc_uri_t* uri, const char* option, std::chrono::milliseconds value) {
  const bson_t* options = mongoc_uri_get_options(uri);
  if (options != nullptr && bson_has_field(options, option)) return;
  mongoc_uri_set_option_as_int32(uri, option, static_cast<std::int32_t>(value.count()));
}

}  // namespace

ClientPool::ClientPool(const std::string& uri, const MongoOptions& options) {
  InitMongocOnce();
  bson_error_t error;
  uri_ = mongoc_uri_new_with_error(uri.c_str(), &error);
  if (uri_ == nullptr) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("MongoDB URI is malformed: ") + error.message);
  }
  DefaultOption(uri_, MONGOC_URI_SOCKETTIMEOUTMS, options.socket_timeout);
  DefaultOption(uri_, MONGOC_URI_WAITQUEUETIMEOUTMS, options.wait_queue_timeout);
  if (const char* database = mongoc_uri_get_database(uri_); database != nullptr) {
    uri_database_ = database;
  }
  pool_ = mongoc_client_pool_new_with_error(uri_, &error);
  if (pool_ == nullptr) {
    mongoc_uri_destroy(uri_);
    throw Error(ErrorCode::kInvalidArgument,
                std::string("MongoDB URI cannot open a client pool: ") + error.message);
  }
  mongoc_client_pool_set_error_api(pool_, MONGOC_ERROR_API_VERSION_2);
  mongoc_client_pool_set_appname(pool_, "wow-cpp");
}

ClientPool::~ClientPool() {
  mongoc_client_pool_destroy(pool_);
  mongoc_uri_destroy(uri_);
}

ClientPool::Lease::~Lease() {
  if (client_ != nullptr) mongoc_client_pool_push(pool_, client_);
}

ClientPool::Lease ClientPool::Pop() {
  mongoc_client_t* client = mongoc_client_pool_pop(pool_);
  if (client == nullptr) {
    throw Error(ErrorCode::kUnavailable,
                "MongoDB: no connection of the client pool came free within waitQueueTimeoutMS; "
                "raise maxPoolSize or the wait, or lower the load");
  }
  return Lease(pool_, client);
}

}  // namespace wow::mongo
