#include "prepare_key_export.h"

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
    record.owner_id = *wrapped;
  } else {
    return bad("the owner id at \"value." + Joined(owner_path) +
               "\" is not a string: " + Shown(*owner));
  }
  if (record.owner_id.empty()) return bad("the owner id is empty");

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
