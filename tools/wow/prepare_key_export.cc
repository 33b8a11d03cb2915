#include "prepare_key_export.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "format.h"

namespace wow::tool {

namespace {

using nlohmann::json;

std::optional<std::int64_t> ParseInt64(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The string an Extended JSON wrapper such as {"$oid": "..."} holds; nullptr when `value` is not
// one of the wrappers an id may come in.
const std::string* WrappedString(const json& value) {
  if (!value.is_object() || value.size() != 1) return nullptr;
  for (const char* wrapper : {"$oid", "$numberLong", "$numberInt", "$uuid"}) {
    const auto found = value.find(wrapper);
    if (found != value.end() && found->is_string()) return found->get_ptr<const std::string*>();
  }
  return nullptr;
}

bool IsHex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// Why the Extended JSON `wrapper` ("$oid", ...) cannot hold `text` (as MongoDB writes none such),
// or nullopt when it can.
std::optional<std::string> MalformedWrapper(std::string_view wrapper, std::string_view text) {
  if (wrapper == "$numberLong" && !ParseInt64(text)) return "not a 64-bit integer";
  if (wrapper == "$numberInt") {
    const std::optional<std::int64_t> value = ParseInt64(text);
    if (!value || *value < std::numeric_limits<std::int32_t>::min() ||
        *value > std::numeric_limits<std::int32_t>::max()) {
      return "not a 32-bit integer";
    }
  }
  if (wrapper == "$oid" && (text.size() != 24 || !IsHex(text))) return "not 24 hex digits";
  if (wrapper == "$uuid") {
    // 8-4-4-4-12 hex digits, as MongoDB's relaxed Extended JSON writes a UUID.
    const bool dashes = text.size() == 36 && text[8] == '-' && text[13] == '-' &&
                        text[18] == '-' && text[23] == '-';
    std::string digits(text);
    if (dashes) std::erase(digits, '-');
    if (!dashes || digits.size() != 32 || !IsHex(digits)) {
      return "not a UUID (8-4-4-4-12 hex digits)";
    }
  }
  return std::nullopt;
}

// The offset of the first control character of `text` (C0, DEL, or C1 as UTF-8), or nullopt.
std::optional<std::size_t> ControlCharacterAt(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xc2 && i + 1 < text.size() &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    if (c < 0x20 || c == 0x7f || c1) return i;
  }
  return std::nullopt;
}

// A short rendering of a JSON value for messages.
std::string Shown(const json& value) { return Printable(value.dump(), 60); }

std::string Joined(const std::vector<std::string>& path) {
  std::string text;
  for (const std::string& field : path) text += (text.empty() ? "" : ".") + field;
  return text;
}

}  // namespace

std::vector<std::string> SplitOwnerPath(std::string_view path) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    const std::string_view field =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (field.empty()) return {};
    fields.emplace_back(field);
    if (dot == std::string_view::npos) return fields;
    start = dot + 1;
  }
}

ExportLine ParseExportLine(std::string_view line, const std::vector<std::string>& owner_path) {
  auto bad = [](std::string why) { return ExportLine{std::nullopt, std::move(why)}; };
  json document;
  try {
    document = json::parse(line);
  } catch (const json::parse_error& e) {
    std::string why = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 3: ..." -> "column 3: ...".
    if (const auto at = why.find("column "); at != std::string::npos) why = why.substr(at);
    return bad("not a JSON document (" + Printable(why, 200) + ")");
  }
  if (!document.is_object()) return bad("not a JSON object");

  ExportRecord record;
  const auto id = document.find("_id");
  if (id == document.end()) return bad("no \"_id\" (the key)");
  if (!id->is_string()) return bad("\"_id\" (the key) is not a string: " + Shown(*id));
  record.key = id->get<std::string>();

  const auto value = document.find("value");
  if (value == document.end() || value->is_null()) return bad("no \"value\" (the owner)");
  const json* owner = &*value;
  if (!owner->is_string()) {
    for (const std::string& field : owner_path) {
      if (!owner->is_object() || WrappedString(*owner) != nullptr) {
        return bad("\"value\" has no field \"" + Joined(owner_path) +
                   "\" (the owner id): " + Shown(*value));
      }
      const auto next = owner->find(field);
      if (next == owner->end()) {
        return bad("\"value\" has no field \"" + Joined(owner_path) +
                   "\" (the owner id): " + Shown(*value));
      }
      owner = &*next;
    }
  }
  if (owner->is_string()) {
    record.owner_id = owner->get<std::string>();
  } else if (owner->is_number_integer()) {
    record.owner_id = owner->dump();
  } else if (const std::string* wrapped = WrappedString(*owner)) {
    if (const std::optional<std::string> why = MalformedWrapper(owner->begin().key(), *wrapped)) {
      return bad("the owner id " + Shown(*owner) + " is " + *why);
    }
    record.owner_id = *wrapped;
  } else {
    return bad("the owner id at \"value." + Joined(owner_path) +
               "\" is not a string: " + Shown(*owner));
  }
  if (record.owner_id.empty()) return bad("the owner id is empty");
  if (!IsUnreservedId(record.owner_id, kMaxOwnerIdBytes)) {
    return bad("the owner id \"" + Printable(record.owner_id, 60) + "\" is not 1 to " +
               std::to_string(kMaxOwnerIdBytes) +
               " characters of A-Z, a-z, 0-9, '.', '_', '~' and '-' (the ids the service takes)");
  }
  if (const std::optional<std::size_t> at = ControlCharacterAt(record.key)) {
    return bad("the key \"" + Printable(record.key, 60) + "\" has a control character at byte " +
               std::to_string(*at));
  }

  const auto ttl = document.find("ttlAt");
  if (ttl != document.end() && !ttl->is_null()) {
    const auto date = ttl->is_object() ? ttl->find("$date") : ttl->end();
    if (!ttl->is_object() || date == ttl->end()) {
      return bad("\"ttlAt\" is not a date ({\"$date\": ...}) or null: " + Shown(*ttl));
    }
    std::optional<EpochMillis> millis;
    if (date->is_string()) {
      millis = ParseIsoTime(date->get<std::string>());
    } else if (date->is_number_integer() &&
               !(date->is_number_unsigned() &&
                 date->get<std::uint64_t>() >
                     static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
      millis = date->get<std::int64_t>();
    } else if (date->is_object() && date->size() == 1 && date->contains("$numberLong") &&
               date->at("$numberLong").is_string()) {
      millis = ParseInt64(date->at("$numberLong").get<std::string>());
    }
    if (!millis) return bad("\"ttlAt\" is not a date: " + Shown(*ttl));
    record.ttl_at = millis;
  }
  return ExportLine{std::move(record), {}};
}

}  // namespace wow::tool
