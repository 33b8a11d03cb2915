#include "store/sqlite/codec.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "wow/error.h"
#include "wow/stream_json.h"

namespace wow::sqlite {
namespace {

using nlohmann::json;

std::string Dump(const json& value) {
  try {
    return value.dump();
  } catch (const json::type_error& e) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("a string cannot be stored: it is not valid UTF-8 (") + e.what() + ")");
  }
}

// `text` decoded as T, or Error(kDataLoss) naming `what`.
template <typename T>
T Decode(std::string_view text, std::string_view what) {
  try {
    return json::parse(text.begin(), text.end()).get<T>();
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kDataLoss, "stored " + std::string(what) + " is not what was written (" +
                                          e.what() + "); the database is damaged");
  }
}

void PutSize(std::string& out, size_t size) {
  if (size > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ErrorCode::kInvalidArgument, "an event over 4 GiB cannot be stored");
  }
  const auto value = static_cast<std::uint32_t>(size);
  const unsigned char bytes[4] = {
      static_cast<unsigned char>(value), static_cast<unsigned char>(value >> 8),
      static_cast<unsigned char>(value >> 16), static_cast<unsigned char>(value >> 24)};
  out.append(reinterpret_cast<const char*>(bytes), 4);
}

// Reads the length-prefixed encoding of the events column.
class EventReader {
 public:
  explicit EventReader(std::string_view bytes) : bytes_(bytes) {}

  std::uint32_t Size() {
    Need(4);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data());
    const std::uint32_t value = p[0] | (p[1] << 8) | (p[2] << 16) | (std::uint32_t{p[3]} << 24);
    bytes_.remove_prefix(4);
    return value;
  }
  std::string String() {
    const std::uint32_t size = Size();
    Need(size);
    std::string value(bytes_.substr(0, size));
    bytes_.remove_prefix(size);
    return value;
  }
  bool AtEnd() const { return bytes_.empty(); }

 private:
  void Need(size_t size) const {
    if (bytes_.size() < size) {
      throw Error(ErrorCode::kDataLoss, "stored events are truncated; the database is damaged");
    }
  }
  std::string_view bytes_;
};

}  // namespace

std::string EncodeEvents(const std::vector<EventRecord>& events) {
  size_t size = 4;
  for (const EventRecord& event : events) size += 8 + event.type.size() + event.body.size();
  std::string out;
  out.reserve(size);
  PutSize(out, events.size());
  for (const EventRecord& event : events) {
    PutSize(out, event.type.size());
    out.append(event.type);
    PutSize(out, event.body.size());
    out.append(event.body);
  }
  return out;
}

std::vector<EventRecord> DecodeEvents(std::string_view bytes) {
  EventReader reader(bytes);
  const std::uint32_t count = reader.Size();
  std::vector<EventRecord> events;
  events.reserve(std::min<std::uint32_t>(count, 1024));
  for (std::uint32_t i = 0; i < count; ++i) {
    EventRecord event;
    event.type = reader.String();
    event.body = reader.String();
    events.push_back(std::move(event));
  }
  if (!reader.AtEnd()) {
    throw Error(ErrorCode::kDataLoss, "stored events have trailing bytes; the database is damaged");
  }
  return events;
}

std::optional<std::string> EncodeFacts(const Stream& stream) {
  if (stream.reserved.empty() && stream.released.empty() && stream.timers.empty()) {
    return std::nullopt;
  }
  json facts = json::object();
  if (!stream.reserved.empty()) facts["reserved"] = stream.reserved;
  if (!stream.released.empty()) facts["released"] = stream.released;
  if (!stream.timers.empty()) facts["timers"] = stream.timers;
  return Dump(facts);
}

void DecodeFacts(std::string_view text, Stream& stream) {
  if (text.empty()) return;
  const json facts = Decode<json>(text, "facts");
  try {
    stream.reserved = facts.value("reserved", std::vector<KeyFact>{});
    stream.released = facts.value("released", std::vector<KeyFact>{});
    stream.timers = facts.value("timers", std::vector<TimerFact>{});
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kDataLoss, std::string("stored facts are not what was written (") +
                                          e.what() + "); the database is damaged");
  }
}

std::string EncodeHolds(const std::set<std::string>& holds) { return Dump(json(holds)); }

std::set<std::string> DecodeHolds(std::string_view text) {
  return Decode<std::set<std::string>>(text, "reservation holds");
}

std::string EncodeRule(const TimerRule& rule) { return Dump(json(rule)); }

TimerRule DecodeRule(std::string_view text) { return Decode<TimerRule>(text, "timer rule"); }

}  // namespace wow::sqlite
