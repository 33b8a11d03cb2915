// wow::Error: the one exception type of the library, for failures that are not an expected outcome.
//
// Expected outcomes (a key taken, a version conflict, a duplicate request, a missing timer) are
// return values of the store and runtime functions. Error is thrown only for bad input (the call
// changed nothing) and for failures of the infrastructure (a database that is busy, full,
// read-only, corrupt, or of another format). Its message says what failed and what to do; its
// code says which kind of failure it is, so callers branch on the code, never on the text.
//
// Thread-safety: immutable; safe to share between threads.
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace wow {

// The kinds of failure, after abseil's canonical codes.
enum class ErrorCode {
  kInvalidArgument,     // Bad input: the call was refused and changed nothing. Fix the caller.
  kFailedPrecondition,  // The store is not in a state for this call (another format, another
                        // partition count, not created). Retrying the same call will not help.
  kUnavailable,         // Transient: busy, locked, timed out. Retrying the same call may succeed.
  kResourceExhausted,   // Out of space or another hard limit. Free space, then retry.
  kPermissionDenied,    // The store cannot be written (read-only file or directory).
  kDataLoss,            // The store is corrupt. Restore from a backup.
  kAborted,             // A read-modify-write lost a race too many times; redo it later.
  kInternal,            // A bug, or a failure no other code describes.
};

// The code's name, such as "INVALID_ARGUMENT".
std::string_view ErrorCodeName(ErrorCode code);
// Writes ErrorCodeName(code), so that GoogleTest's failure messages and logs show the name.
std::ostream& operator<<(std::ostream& out, ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);

  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// Throws Error(kInvalidArgument, message).
[[noreturn]] void ThrowInvalidArgument(const std::string& message);

// Throws Error(kInvalidArgument, message) unless condition holds. `message` is a string literal.
inline void Require(bool condition, const char* message) {
  if (!condition) [[unlikely]]
    ThrowInvalidArgument(message);
}

// Throws Error(kInvalidArgument, make_message()) unless condition holds. The message is built only
// when the check fails, so a check on a hot path costs no string:
//   Require(id.size() <= 256, [&] { return "id " + id + " is over 256 bytes"; });
template <typename MakeMessage>
requires std::is_invocable_r_v<std::string, MakeMessage&>
void Require(bool condition, MakeMessage&& make_message) {
  if (!condition) [[unlikely]]
    ThrowInvalidArgument(make_message());
}

}  // namespace wow
