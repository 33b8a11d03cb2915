#include "store/mongo/exact_bson.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>

#include "wow/error.h"

namespace wow::mongo {
namespace {

using nlohmann::json;

// nlohmann's SAX events written straight into BSON, one frame per open object or array. The
// frames live in a deque: libbson's child documents point into their parent, so they must not move.
class BsonWriter final : public json::json_sax_t {
 public:
  BsonWriter(bson_t* root, std::string_view field) : root_(root), key_(field) {}

  const std::string& refusal() const { return refusal_; }

  bool null() override {
    return Put([&](bson_t* d, const char* k, int n) { return bson_append_null(d, k, n); });
  }
  bool boolean(bool value) override {
    return Put([&](bson_t* d, const char* k, int n) { return bson_append_bool(d, k, n, value); });
  }
  bool number_integer(number_integer_t value) override {
    return Put([&](bson_t* d, const char* k, int n) { return bson_append_int64(d, k, n, value); });
  }
  bool number_unsigned(number_unsigned_t value) override {
    if (value <= static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max())) {
      return number_integer(static_cast<number_integer_t>(value));
    }
    return Decimal(std::to_string(value));
  }
  bool number_float(number_float_t, const string_t& text) override { return Decimal(text); }
  bool string(string_t& value) override {
    return Put([&](bson_t* d, const char* k, int n) {
      return bson_append_utf8(d, k, n, value.data(), static_cast<int>(value.size()));
    });
  }
  bool binary(binary_t&) override { return Refuse("binary values are not JSON"); }
  bool start_object(std::size_t) override { return Open(false); }
  bool key(string_t& name) override {
    if (name.find('\0') != std::string::npos) return Refuse("a key holds a NUL byte");
    key_ = name;
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(true); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return Refuse(std::string("it is not JSON: ") + e.what());
  }

 private:
  struct Frame {
    bson_t doc;
    bool array = false;
    std::uint32_t next_index = 0;
  };

  bool Refuse(std::string why) {
    if (refusal_.empty()) refusal_ = std::move(why);
    return false;
  }

  // The key of the next value: the root's field, the pending key of an object, the next index of
  // an array. `index` holds an array's key.
  const char* NextKey(char (&index)[16], int* length) {
    const char* key = key_.c_str();
    *length = static_cast<int>(key_.size());
    if (!frames_.empty() && frames_.back().array) {
      *length = static_cast<int>(
          bson_uint32_to_string(frames_.back().next_index++, &key, index, sizeof index));
    }
    return key;
  }

  // Appends one scalar value to the open object or array.
  template <typename AppendFn>
  bool Put(AppendFn append) {
    if (frames_.empty()) return Refuse("it is not a JSON object");
    char index[16];
    int length = 0;
    const char* key = NextKey(index, &length);
    return append(&frames_.back().doc, key, length) || Refuse("the document is too large");
  }

  bool Decimal(const std::string& text) {
    bson_decimal128_t value;
    if (!bson_decimal128_from_string(text.c_str(), &value)) {
      return Refuse("the number " + text.substr(0, 64) +
                    " has more digits or a larger exponent than a Decimal128 holds exactly");
    }
    return Put([&](bson_t* d, const char* k, int n) { return bson_append_decimal128(d, k, n, &value); });
  }

  bool Open(bool array) {
    if (frames_.empty() && array) return Refuse("it is not a JSON object");
    if (static_cast<int>(frames_.size()) >= kMaxPayloadDepth) {
      return Refuse("it nests deeper than " + std::to_string(kMaxPayloadDepth) + " levels");
    }
    bson_t* parent = frames_.empty() ? root_ : &frames_.back().doc;
    char index[16];
    int length = 0;
    const char* key = NextKey(index, &length);
    Frame& child = frames_.emplace_back();
    child.array = array;
    const bool begun = array ? bson_append_array_begin(parent, key, length, &child.doc)
                             : bson_append_document_begin(parent, key, length, &child.doc);
    return begun || Refuse("the document is too large");
  }

  bool Close() {
    Frame& child = frames_.back();
    bson_t* parent = frames_.size() == 1 ? root_ : &frames_[frames_.size() - 2].doc;
    const bool ended = child.array ? bson_append_array_end(parent, &child.doc)
                                   : bson_append_document_end(parent, &child.doc);
    frames_.pop_back();
    return ended || Refuse("the document is too large");
  }

  bson_t* root_;
  std::string key_;
  std::deque<Frame> frames_;
  std::string refusal_;
};

void WriteValue(const bson_iter_t& it, std::string_view what, std::string& out);

// Writes the members `members` iterates, as an array's or an object's.
void WriteMembers(bson_iter_t* members, bool array, std::string_view what, std::string& out) {
  out += array ? '[' : '{';
  bool first = true;
  while (bson_iter_next(members)) {
    if (!first) out += ',';
    first = false;
    if (!array) {
      out += json(std::string(bson_iter_key(members), bson_iter_key_len(members))).dump();
      out += ':';
    }
    WriteValue(*members, what, out);
  }
  out += array ? ']' : '}';
}

void WriteContainer(const bson_iter_t& it, bool array, std::string_view what, std::string& out) {
  bson_iter_t members;
  if (!bson_iter_recurse(&it, &members)) {
    throw Error(ErrorCode::kDataLoss, std::string(what) + " holds a malformed document");
  }
  WriteMembers(&members, array, what, out);
}

void WriteValue(const bson_iter_t& it, std::string_view what, std::string& out) {
  switch (bson_iter_type(&it)) {
    case BSON_TYPE_DOCUMENT:
      return WriteContainer(it, false, what, out);
    case BSON_TYPE_ARRAY:
      return WriteContainer(it, true, what, out);
    case BSON_TYPE_UTF8: {
      std::uint32_t length = 0;
      const char* text = bson_iter_utf8(&it, &length);
      out += json(std::string(text, length)).dump();
      return;
    }
    case BSON_TYPE_INT32:
      out += std::to_string(bson_iter_int32(&it));
      return;
    case BSON_TYPE_INT64:
      out += std::to_string(bson_iter_int64(&it));
      return;
    case BSON_TYPE_BOOL:
      out += bson_iter_bool(&it) ? "true" : "false";
      return;
    case BSON_TYPE_NULL:
      out += "null";
      return;
    case BSON_TYPE_DOUBLE: {
      const double value = bson_iter_double(&it);
      if (!std::isfinite(value)) break;
      out += json(value).dump();
      return;
    }
    case BSON_TYPE_DECIMAL128: {
      bson_decimal128_t value;
      char text[BSON_DECIMAL128_STRING];
      if (!bson_iter_decimal128(&it, &value)) break;
      bson_decimal128_to_string(&value, text);
      if (text[0] == 'N' || text[0] == 'I' || text[1] == 'I') break;  // NaN, Inf, -Inf
      out += text;
      return;
    }
    default:
      break;
  }
  throw Error(ErrorCode::kDataLoss, std::string(what) + " holds a value JSON cannot hold (at \"" +
                                        bson_iter_key(&it) + "\")");
}

}  // namespace

void AppendExactJson(bson_t* doc, std::string_view field, std::string_view text,
                     std::string_view what) {
  BsonWriter writer(doc, field);
  if (!json::sax_parse(text.begin(), text.end(), &writer) || !writer.refusal().empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + " cannot be stored in MongoDB exactly: " +
                    (writer.refusal().empty() ? "it is not a JSON object" : writer.refusal()));
  }
}

std::string ExactJsonText(const bson_t& doc, std::string_view what) {
  bson_iter_t members;
  if (!bson_iter_init(&members, &doc)) {
    throw Error(ErrorCode::kDataLoss, std::string(what) + " holds a malformed document");
  }
  std::string out;
  WriteMembers(&members, false, what, out);
  return out;
}

}  // namespace wow::mongo
