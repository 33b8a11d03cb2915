// The text rules of the catalog's HTTP interface: percent-decoding of path segments, UTF-8
// validation, and the characters a tenant, an id and an Idempotency-Key may hold.
//
// Thread-safety: pure functions, safe for concurrent use.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace eshop {

// The longest tenant and aggregate id a route takes; both are 1 or more of [A-Za-z0-9._~-]
// (wow::IsUnreservedId).
inline constexpr std::size_t kMaxTenantBytes = 64;
inline constexpr std::size_t kMaxIdBytes = 128;
// The longest Idempotency-Key: 1 or more visible ASCII characters (0x21 to 0x7e).
inline constexpr std::size_t kMaxIdempotencyKeyBytes = 200;

// `s` with its %XX escapes decoded; nullopt when an escape is malformed (a '%' not followed by
// two hex digits). '+' stays '+': this is a path, not a form. The result may hold any byte.
std::optional<std::string> PercentDecode(std::string_view s);

// The parameters of a query string (the target after '?', without it): name=value pairs split at
// '&', each name and value decoded as a form is ('+' is a space, then PercentDecode), in order,
// repeats kept; a pair without '=' has an empty value, and empty pairs are passed over. nullopt
// when an escape is malformed.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseQuery(std::string_view query);

// Whether `key` is 1 to kMaxIdempotencyKeyBytes visible ASCII characters (0x21 to 0x7e).
bool IsValidIdempotencyKey(std::string_view key);

}  // namespace eshop
