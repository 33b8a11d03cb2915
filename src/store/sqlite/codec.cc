#include "store/sqlite/codec.h"

#include <cstdint>
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
  } catch (const Error& e) {  // a value out of its set, such as an unknown timer rule type
    throw Error(ErrorCode::kDataLoss, "stored " + std::string(what) + " is not what was written (" +
                                          e.what() + "); the database is damaged");
  }
}

}  // namespace

std::string EncodeHolds(const std::set<std::string>& holds) { return Dump(json(holds)); }

std::set<std::string> DecodeHolds(std::string_view text) {
  return Decode<std::set<std::string>>(text, "reservation holds");
}

std::string EncodeRule(const TimerRule& rule) { return Dump(json(rule)); }

TimerRule DecodeRule(std::string_view text, std::string_view timer) {
  return Decode<TimerRule>(text, "rule of " + std::string(timer));
}

}  // namespace wow::sqlite
