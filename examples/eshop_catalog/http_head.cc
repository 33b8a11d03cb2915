#include "http_head.h"

#include <strings.h>

#include <vector>

namespace eshop {
namespace {

// tchar (RFC 9110 5.6.2).
bool IsTokenChar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// field-vchar, SP or HTAB (RFC 9110 5.5): no other control character, no NUL, no DEL.
bool IsFieldValueChar(unsigned char c) { return c == '\t' || c == ' ' || (c >= 0x21 && c != 0x7F); }

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HeadRefusal Bad(std::string message) { return {400, "BAD_REQUEST", std::move(message)}; }

}  // namespace

std::string_view RequestMethod(std::string_view head) {
  const std::size_t space = head.find(' ');
  const std::string_view method = head.substr(0, space == std::string_view::npos ? 0 : space);
  return IsToken(method) ? method : std::string_view();
}

std::optional<HeadRefusal> CheckRequestHead(std::string_view head, const HeadLimits& limits) {
  if (head.size() < 4 || head.substr(head.size() - 4) != "\r\n\r\n") {
    return Bad("the request head does not end with an empty line");
  }
  head.remove_suffix(2);  // every line, the last included, now ends with CRLF

  // request-line = method SP request-target SP HTTP-version
  std::size_t end = head.find("\r\n");
  const std::string_view line = head.substr(0, end);
  const std::size_t first = line.find(' ');
  const std::size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (first == std::string_view::npos || second == std::string_view::npos) {
    return Bad("the request line is not METHOD SP TARGET SP HTTP/1.1");
  }
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, second - first - 1);
  const std::string_view version = line.substr(second + 1);
  if (!IsToken(method)) return Bad("the method is not a token");
  if (target.size() > limits.max_target_bytes) {
    return HeadRefusal{
        414, "URI_TOO_LONG",
        "a request target has at most " + std::to_string(limits.max_target_bytes) + " bytes"};
  }
  if (target.empty()) return Bad("the request target is empty");
  for (char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) return Bad("the request target holds a byte URIs do not");
  }
  if (version != "HTTP/1.1") {
    const bool http = version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[5] >= '0' &&
                      version[5] <= '9' && version[6] == '.' && version[7] >= '0' &&
                      version[7] <= '9';
    if (!http) return Bad("the request line does not end with HTTP/1.1");
    return HeadRefusal{505, "HTTP_VERSION_NOT_SUPPORTED",
                       "the service speaks HTTP/1.1 only, not " + std::string(version)};
  }

  // field-line = field-name ":" OWS field-value OWS
  std::size_t fields = 0;
  std::size_t hosts = 0;
  std::vector<std::string_view> lengths;
  std::vector<std::string_view> codings;
  for (std::size_t begin = end + 2; begin < head.size(); begin = end + 2) {
    end = head.find("\r\n", begin);
    const std::string_view field = head.substr(begin, end - begin);
    if (field.front() == ' ' || field.front() == '\t') {
      return Bad("a header field is folded over lines (obs-fold)");
    }
    if (++fields > limits.max_header_count) {
      return HeadRefusal{
          431, "HEADERS_TOO_LARGE",
          "a request has at most " + std::to_string(limits.max_header_count) + " header fields"};
    }
    const std::size_t colon = field.find(':');
    if (colon == std::string_view::npos) return Bad("a header line has no colon");
    const std::string_view name = field.substr(0, colon);
    if (!IsToken(name)) {
      return Bad("a header name is not a token (or has space before its colon)");
    }
    const std::string_view value = Trim(field.substr(colon + 1));
    for (char c : value) {
      if (!IsFieldValueChar(static_cast<unsigned char>(c))) {
        return Bad("the header " + std::string(name) + " holds a control character");
      }
    }
    if (IEquals(name, "Host")) {
      ++hosts;
    } else if (IEquals(name, "Content-Length")) {
      lengths.push_back(value);
    } else if (IEquals(name, "Transfer-Encoding")) {
      codings.push_back(value);
    }
  }
  if (hosts != 1) return Bad("an HTTP/1.1 request has exactly one Host header");
  if (lengths.size() > 1) return Bad("a request has at most one Content-Length");
  if (!lengths.empty()) {
    const std::string_view length = lengths.front();
    if (length.empty() || length.size() > 18) return Bad("the Content-Length is not a length");
    for (char c : length) {
      if (c < '0' || c > '9') return Bad("the Content-Length is not a length");
    }
  }
  if (!codings.empty()) {
    if (!lengths.empty()) return Bad("a request has a Content-Length or a Transfer-Encoding");
    if (codings.size() > 1) return Bad("a request has at most one Transfer-Encoding");
    const std::string_view coding = codings.front();
    if (!IEquals(coding, "chunked")) {
      const std::size_t comma = coding.rfind(',');
      const std::string_view last =
          Trim(comma == std::string_view::npos ? coding : coding.substr(comma + 1));
      if (!IEquals(last, "chunked")) return Bad("a request body's last transfer coding is chunked");
      return HeadRefusal{501, "NOT_IMPLEMENTED", "the only transfer coding taken is chunked"};
    }
  }
  return std::nullopt;
}

}  // namespace eshop
