#include "store/mongo/mongo_error.h"

#include <mongoc/mongoc.h>

#include <algorithm>
#include <array>

#include "store/mongo/bson_doc.h"

namespace wow::mongo {
namespace {

// Server codes of a state change or shutdown: nothing was written, another try may succeed
// (MongoDB's retryable-read codes and the not-primary family).
constexpr std::array<std::uint32_t, 14> kTransientCodes = {
    6,      // HostUnreachable
    7,      // HostNotFound
    91,     // ShutdownInProgress
    134,    // ReadConcernMajorityNotAvailableYet
    189,    // PrimarySteppedDown
    10107,  // NotWritablePrimary
    11600,  // InterruptedAtShutdown
    11602,  // InterruptedDueToReplStateChange
    13435,  // NotPrimaryNoSecondaryOk
    13436,  // NotPrimaryOrSecondary
    63,     // StaleShardVersion
    150,    // StaleEpoch
    13388,  // StaleConfig
    133,    // FailedToSatisfyReadPreference
};

// Server codes of a timeout or a network failure seen by the server: a write cut off by one may
// have been applied.
constexpr std::array<std::uint32_t, 5> kTimeoutCodes = {
    50,    // MaxTimeMSExpired
    89,    // NetworkTimeout
    262,   // ExceededTimeLimit
    9001,  // SocketException
    64,    // WriteConcernFailed
};

constexpr std::array<std::uint32_t, 3> kPermissionCodes = {
    13,  // Unauthorized
    18,  // AuthenticationFailed
    11,  // UserNotFound
};

template <std::size_t N>
bool In(const std::array<std::uint32_t, N>& codes, std::uint32_t code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

// The keyPattern of the first write error of `reply`, or of the reply itself (findAndModify
// reports a duplicate key as a command error).
std::string KeyPatternOf(const bson_t* reply) {
  if (reply == nullptr) return "";
  bson_t pattern;
  if (FindDocument(*reply, "writeErrors.0.keyPattern", &pattern) ||
      FindDocument(*reply, "keyPattern", &pattern)) {
    return ToJson(pattern);
  }
  return "";
}

}  // namespace

MongoFailure ClassifyMongoError(std::uint32_t domain, std::uint32_t code, std::string_view message,
                                const bson_t* reply, bool write) {
  MongoFailure failure{MongoFailure::Kind::kInternal, domain, code, std::string(message), ""};
  using Kind = MongoFailure::Kind;
  const bool server = domain == MONGOC_ERROR_SERVER || domain == MONGOC_ERROR_QUERY ||
                      domain == MONGOC_ERROR_COMMAND || domain == MONGOC_ERROR_COLLECTION;
  if (server && IsDuplicateKeyCode(code)) {
    failure.kind = Kind::kDuplicateKey;
    failure.key_pattern = KeyPatternOf(reply);
  } else if (domain == MONGOC_ERROR_WRITE_CONCERN) {
    failure.kind = write ? Kind::kWriteUnknown : Kind::kUnavailable;
  } else if (domain == MONGOC_ERROR_STREAM || domain == MONGOC_ERROR_PROTOCOL) {
    failure.kind = write ? Kind::kWriteUnknown : Kind::kUnavailable;
  } else if (domain == MONGOC_ERROR_SERVER_SELECTION || domain == MONGOC_ERROR_POOL) {
    failure.kind = Kind::kUnavailable;
  } else if (domain == MONGOC_ERROR_CLIENT &&
             (code == MONGOC_ERROR_CLIENT_AUTHENTICATE || code == MONGOC_ERROR_CLIENT_GETNONCE)) {
    failure.kind = Kind::kPermissionDenied;
  } else if (domain == MONGOC_ERROR_CLIENT || domain == MONGOC_ERROR_SASL ||
             domain == MONGOC_ERROR_SCRAM) {
    failure.kind =
        code == MONGOC_ERROR_CLIENT_NOT_READY ? Kind::kUnavailable : Kind::kPermissionDenied;
  } else if (server && In(kTimeoutCodes, code)) {
    failure.kind = write ? Kind::kWriteUnknown : Kind::kUnavailable;
  } else if (server && In(kTransientCodes, code)) {
    failure.kind = Kind::kUnavailable;
  } else if (server && In(kPermissionCodes, code)) {
    failure.kind = Kind::kPermissionDenied;
  }
  return failure;
}

Error ToError(const MongoFailure& failure, std::string_view what) {
  using Kind = MongoFailure::Kind;
  std::string text = "MongoDB: " + std::string(what) + " failed: " + failure.message +
                     " (libmongoc domain " + std::to_string(failure.domain) + ", code " +
                     std::to_string(failure.code) + ")";
  switch (failure.kind) {
    case Kind::kWriteUnknown:
      return Error(ErrorCode::kUnavailable,
                   text +
                       "; the write may or may not have been applied: repeat it when the "
                       "deployment is reachable (the store's writes are idempotent)");
    case Kind::kUnavailable:
      return Error(ErrorCode::kUnavailable,
                   text + "; check that a primary is reachable, then retry");
    case Kind::kPermissionDenied:
      return Error(ErrorCode::kPermissionDenied,
                   text + "; check the URI's credentials and the user's roles");
    case Kind::kDuplicateKey:
    case Kind::kInternal:
      break;
  }
  return Error(ErrorCode::kInternal,
               text + "; a command this build sent was refused: report it with this message");
}

}  // namespace wow::mongo
