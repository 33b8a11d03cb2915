#include "http_text.h"

namespace eshop {

std::optional<std::string> PercentDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int high = hex(s[i + 1]);
    const int low = hex(s[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> ParseQuery(std::string_view query) {
  auto decode = [](std::string_view part) {
    std::string spaced(part);
    for (char& c : spaced) {
      if (c == '+') c = ' ';
    }
    return PercentDecode(spaced);
  };
  std::vector<std::pair<std::string, std::string>> parameters;
  for (std::size_t begin = 0; begin <= query.size();) {
    std::size_t end = query.find('&', begin);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(begin, end - begin);
    begin = end + 1;
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    std::optional<std::string> name = decode(pair.substr(0, equals));
    std::optional<std::string> value =
        decode(equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1));
    if (!name || !value) return std::nullopt;
    parameters.emplace_back(std::move(*name), std::move(*value));
  }
  return parameters;
}

bool IsValidIdempotencyKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyBytes) return false;
  for (char c : key) {
    if (c < 0x21 || c > 0x7E) return false;
  }
  return true;
}

}  // namespace eshop
