// The one mapping of libmongoc's and MongoDB's errors to the stores' outcomes and wow::Error codes
// (after mongocxx's error categories). It reads the error's domain and code and the server's
// reply, never the message text:
//   a duplicate key (11000, 11001)                      kDuplicateKey, with the index's keyPattern
//   during a write: a write-concern error, a network
//   error, a socket or server-side timeout              kWriteUnknown (it may have been applied)
//   no server, no primary, a network error in a read,
//   a state change (not primary, shutting down), the
//   pool's wait-queue timeout                           kUnavailable
//   authentication or authorisation                     kPermissionDenied
//   a command or value the server refuses               kInternal (this build sent it: a bug)
//
// Thread-safety: pure functions.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "wow/error.h"

namespace wow::mongo {

struct MongoFailure {
  enum class Kind {
    kDuplicateKey,  // an expected outcome: a unique index refused the write
    kWriteUnknown,  // the write may or may not have been applied
    kUnavailable,
    kPermissionDenied,
    kInternal,
  };
  Kind kind = Kind::kInternal;
  std::uint32_t domain = 0;  // libmongoc's error domain (MONGOC_ERROR_SERVER, ...)
  std::uint32_t code = 0;    // the server's or libmongoc's code
  std::string message;       // libmongoc's message, for the Error's text only
  std::string key_pattern;   // kDuplicateKey: the index's keyPattern as JSON ({ "_id" : 1 })
};

// Whether a server's error code says a unique index refused a write (11000, and 11001 that older
// servers sent): an expected outcome.
constexpr bool IsDuplicateKeyCode(std::int64_t code) { return code == 11000 || code == 11001; }

// Classifies a failed operation: libmongoc's `domain`, `code` and `message` (bson_error_t, with
// error API version 2) and the server's `reply` (may be null or empty). `write` says whether the
// operation was a write, whose outcome a network error or timeout leaves unknown.
MongoFailure ClassifyMongoError(std::uint32_t domain, std::uint32_t code, std::string_view message,
                                const bson_t* reply, bool write);

// The wow::Error for `failure` (any kind but kDuplicateKey, which callers handle as an outcome):
// its code, and a message naming `what` failed ("reserving key k of wow_reservation__c__a") with
// MongoDB's code and text and, for an unknown write, that it may have been applied.
Error ToError(const MongoFailure& failure, std::string_view what);

}  // namespace wow::mongo
