// HttpRequest and HttpReply: a request as the HTTP server read it and a response before the server
// writes it, and the helpers that make the JSON responses.
//
// Thread-safety: values; the functions are safe for concurrent use.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace eshop {

// A request whose head passed the server's checks and whose body is complete.
struct HttpRequest {
  std::string method;  // as sent: "GET", "FOO"
  std::string target;  // the request target, still percent-encoded
  std::string body;    // decoded when it came chunked
  std::vector<std::pair<std::string, std::string>> headers;  // in order, names as sent

  // The values of the header `name` (case-insensitive), in order; views into `headers`.
  std::vector<std::string_view> Values(std::string_view name) const;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";  // empty: no body (204)
  std::string body;  // JSON text (or Prometheus text for /metrics); empty for 204
  std::vector<std::pair<std::string, std::string>> headers;
};

// The JSON error body {"code": code, "message": message}.
nlohmann::json ErrorBody(std::string_view code, std::string_view message);

// `value` as compact JSON text; invalid UTF-8 in strings is replaced, never thrown on.
std::string DumpJson(const nlohmann::json& value);

// A reply of `status` whose body is `body`.
HttpReply JsonReply(int status, const nlohmann::json& body);

// A reply of `status` whose body is ErrorBody(code, message).
HttpReply ErrorReply(int status, std::string_view code, std::string_view message);

}  // namespace eshop
