// The text rules of the catalog's HTTP interface: percent-decoding of path segments, UTF-8
// validation, and the characters a tenant, an id and an Idempotency-Key may hold.
//
// Thread-safety: pure functions, safe for concurrent use.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

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


// Whether `key` is 1 to kMaxIdempotencyKeyBytes visible ASCII characters (0x21 to 0x7e).
bool IsValidIdempotencyKey(std::string_view key);

}  // namespace eshop
