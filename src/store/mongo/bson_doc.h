// RAII owners of libbson documents, and the few reading and writing helpers the MongoDB stores
// share. Text is appended with its length (keys may hold any byte MongoDB accepts) and checked to
// be UTF-8 without NUL bytes first, since MongoDB stores nothing else.
//
// Thread-safety: a Bson is owned by one thread at a time; the free functions are pure.
#pragma once

#include <bson/bson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace wow::mongo {

// A heap document (bson_new, bson_copy, ...) that bson_destroy frees; null or owning one. Movable.
// (A class of its own, since bson_t's alignment attribute is lost on a template argument.)
class Bson {
 public:
  Bson() = default;
  Bson(std::nullptr_t) {}  // NOLINT: `nullptr` for "none" in aggregates
  explicit Bson(bson_t* doc) : doc_(doc) {}
  Bson(Bson&& other) noexcept : doc_(std::exchange(other.doc_, nullptr)) {}
  Bson& operator=(Bson&& other) noexcept {
    if (this != &other) {
      Reset();
      doc_ = std::exchange(other.doc_, nullptr);
    }
    return *this;
  }
  Bson(const Bson&) = delete;
  Bson& operator=(const Bson&) = delete;
  ~Bson() { Reset(); }

  bson_t* get() const { return doc_; }
  bson_t& operator*() const { return *doc_; }
  explicit operator bool() const { return doc_ != nullptr; }

 private:
  void Reset() {
    if (doc_ != nullptr) bson_destroy(doc_);
    doc_ = nullptr;
  }
  bson_t* doc_ = nullptr;
};

// A new empty document. Never null.
Bson NewBson();

// A copy of `doc`. Never null.
Bson CopyBson(const bson_t& doc);

// The document `json` (MongoDB extended JSON) says; for tests and fixed command shapes. Throws
// Error(kInternal) naming the JSON when it does not parse.
Bson BsonFromJson(std::string_view json);

// `doc` as canonical extended JSON ({"$numberLong": "5"} for an int64): for messages and tests.
std::string ToJson(const bson_t& doc);

// Throws Error(kInvalidArgument) unless `text` is UTF-8 without NUL bytes; `what` names it
// ("reservation key").
void RequireStorableText(std::string_view text, std::string_view what);

// Appends a UTF-8 string field of any length (RequireStorableText first).
void AppendText(bson_t* doc, std::string_view field, std::string_view text);
void AppendInt64(bson_t* doc, std::string_view field, std::int64_t value);
void AppendNull(bson_t* doc, std::string_view field);
void AppendBool(bson_t* doc, std::string_view field, bool value);
void AppendDocument(bson_t* doc, std::string_view field, const bson_t& value);
// Appends, as the pipeline stage `stage` (its index, "3"), {$unionWith: {coll: collection,
// pipeline: sub_pipeline}}.
void AppendUnionWith(bson_t* pipeline, std::string_view stage, std::string_view collection,
                     const bson_t& sub_pipeline);
// Appends {"$literal": text}: a user's string inside an aggregation expression, which would
// otherwise read "$..." as a field path.
void AppendLiteralText(bson_t* doc, std::string_view field, std::string_view text);

// Reading a stored document: the value at `path` (dotted) when it is of the type asked for.
std::optional<std::string_view> FindText(const bson_t& doc, const char* path);
// An int32, int64 or integral double, as int64.
std::optional<std::int64_t> FindInteger(const bson_t& doc, const char* path);
bool HoldsNull(const bson_t& doc, const char* path);
// The embedded document or array at `path`; false when absent or of another type.
bool FindDocument(const bson_t& doc, const char* path, bson_t* out);

}  // namespace wow::mongo
