// Reading a `mongoexport` of the older version's PrepareKey collection: one JSON document a line,
// in MongoDB Extended JSON (relaxed or canonical):
//
//   {"_id": "contoso", "value": {"id": "b-1", ...}, "ttlAt": {"$date": "2024-05-01T10:00:00Z"}}
//   {"_id": "fabrikam", "value": "b-2", "ttlAt": {"$date": {"$numberLong": "9223372036854775807"}}}
//
// `_id` is the key; `value` is the prepared value: a plain string is the owner id itself, a
// document holds it at a dotted path ("id" by default); `ttlAt` is when the key is free again
// (null, missing, or Long.MAX_VALUE for a key held forever, which is how PrepareKey marks a
// confirmed key). `$date` may be an ISO-8601 string, a number of milliseconds or
// {"$numberLong": "..."}; an owner id may be a string, an integer, or {"$oid"}, {"$numberLong"},
// {"$numberInt"}, {"$uuid"}. A line is bad, as the service would refuse its owner or key, when
// the owner id is not 1 to kMaxOwnerIdBytes of [A-Za-z0-9._~-] (wow::IsUnreservedId: no '/', no
// control character) or its wrapper is malformed (a $uuid not 8-4-4-4-12 hex digits, a
// $numberLong that is not a 64-bit integer, a $numberInt not a 32-bit one, an $oid not 24 hex
// digits), or when the key holds a control character.
//
// Thread-safety: stateless functions; safe for concurrent use.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wow/model.h"

namespace wow::tool {

// The longest owner id imported: the longest id the catalog's routes take.
inline constexpr std::size_t kMaxOwnerIdBytes = 128;

// One line of the export, read.
struct ExportRecord {
  std::string key;
  std::string owner_id;
  std::optional<EpochMillis> ttl_at;  // nullopt: held forever
};

// A line read, or why it cannot be: exactly one of record and error is set.
struct ExportLine {
  std::optional<ExportRecord> record;
  std::string error;
};

// Splits a dotted path ("owner.id") into its fields. Empty when the path or a field is empty.
std::vector<std::string> SplitOwnerPath(std::string_view path);

// Reads one line of the export. `owner_path` is SplitOwnerPath of --owner-field, non-empty.
ExportLine ParseExportLine(std::string_view line, const std::vector<std::string>& owner_path);

}  // namespace wow::tool
