#include "wow/error.h"

#include <ostream>

namespace wow {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case ErrorCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case ErrorCode::kUnavailable:
      return "UNAVAILABLE";
    case ErrorCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case ErrorCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case ErrorCode::kDataLoss:
      return "DATA_LOSS";
    case ErrorCode::kAborted:
      return "ABORTED";
    case ErrorCode::kInternal:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

std::ostream& operator<<(std::ostream& out, ErrorCode code) { return out << ErrorCodeName(code); }

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string(ErrorCodeName(code)) + ": " + message), code_(code) {}

void ThrowInvalidArgument(const std::string& message) {
  throw Error(ErrorCode::kInvalidArgument, message);
}

}  // namespace wow
