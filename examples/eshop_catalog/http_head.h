// The strict reading of an HTTP/1.1 request head (RFC 9112), before any parser sees it: what the
// server refuses in the request line and the header fields, and with which status. It refuses
// what a lenient parser would let through to a different reading downstream: a second or
// malformed Content-Length, Content-Length with Transfer-Encoding, a transfer coding other than
// chunked, a field line without a colon or with space before it, obs-fold, control characters
// (NUL among them) in a value, a missing or second Host, another HTTP version.
//
// Thread-safety: pure functions, safe for concurrent use.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace eshop {

struct HeadLimits {
  std::size_t max_target_bytes = 8 * 1024;  // a longer request target is 414
  std::size_t max_header_count = 100;       // more field lines are 431
};

// Why a request is refused before it is served: the status, the error code and message of the
// JSON body. The connection is closed after the answer.
struct HeadRefusal {
  int status = 400;
  std::string code;
  std::string message;
};

// Checks `head`, a request head from the first byte of its request line through the empty line
// that ends it (CRLF CRLF included). Returns the refusal when the head is not a well-formed
// HTTP/1.1 request head within `limits`; nullopt when it may be parsed and served. Refusals:
// 400 BAD_REQUEST (malformed or ambiguous), 414 URI_TOO_LONG, 431 HEADERS_TOO_LARGE (too many
// fields), 501 NOT_IMPLEMENTED (a transfer coding other than chunked), 505
// HTTP_VERSION_NOT_SUPPORTED (a version other than HTTP/1.1).
std::optional<HeadRefusal> CheckRequestHead(std::string_view head, const HeadLimits& limits);

// The method token of the request line that starts `head`; "" when there is none.
std::string_view RequestMethod(std::string_view head);

}  // namespace eshop
