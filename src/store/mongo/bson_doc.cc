#include "store/mongo/bson_doc.h"

#include "wow/error.h"

namespace wow::mongo {
namespace {

int Length(std::string_view field) { return static_cast<int>(field.size()); }

}  // namespace

Bson NewBson() { return Bson(bson_new()); }

Bson CopyBson(const bson_t& doc) { return Bson(bson_copy(&doc)); }

Bson BsonFromJson(std::string_view json) {
  bson_error_t error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const std::uint8_t*>(json.data()),
                                   static_cast<ssize_t>(json.size()), &error);
  if (doc == nullptr) {
    throw Error(ErrorCode::kInternal, "extended JSON does not parse (" +
                                          std::string(error.message) +
                                          "): " + std::string(json.substr(0, 200)));
  }
  return Bson(doc);
}

std::string ToJson(const bson_t& doc) {
  std::size_t length = 0;
  char* json = bson_as_canonical_extended_json(&doc, &length);
  if (json == nullptr) return "<not valid BSON>";
  std::string text(json, length);
  bson_free(json);
  return text;
}

void RequireStorableText(std::string_view text, std::string_view what) {
  Require(bson_utf8_validate(text.data(), text.size(), /*allow_null=*/false), [&] {
    return std::string(what) + " is not UTF-8 text without NUL bytes, which MongoDB cannot store";
  });
}

void AppendText(bson_t* doc, std::string_view field, std::string_view text) {
  bson_append_utf8(doc, field.data(), Length(field), text.data(), static_cast<int>(text.size()));
}

void AppendInt64(bson_t* doc, std::string_view field, std::int64_t value) {
  bson_append_int64(doc, field.data(), Length(field), value);
}

void AppendNull(bson_t* doc, std::string_view field) {
  bson_append_null(doc, field.data(), Length(field));
}

void AppendBool(bson_t* doc, std::string_view field, bool value) {
  bson_append_bool(doc, field.data(), Length(field), value);
}

void AppendDocument(bson_t* doc, std::string_view field, const bson_t& value) {
  bson_append_document(doc, field.data(), Length(field), &value);
}

void AppendUnionWith(bson_t* pipeline, std::string_view stage, std::string_view collection,
                     const bson_t& sub_pipeline) {
  bson_t union_stage, union_with;
  bson_append_document_begin(pipeline, stage.data(), Length(stage), &union_stage);
  bson_append_document_begin(&union_stage, "$unionWith", -1, &union_with);
  AppendText(&union_with, "coll", collection);
  bson_append_array(&union_with, "pipeline", -1, &sub_pipeline);
  bson_append_document_end(&union_stage, &union_with);
  bson_append_document_end(pipeline, &union_stage);
}

void AppendLiteralText(bson_t* doc, std::string_view field, std::string_view text) {
  bson_t literal;
  bson_append_document_begin(doc, field.data(), Length(field), &literal);
  AppendText(&literal, "$literal", text);
  bson_append_document_end(doc, &literal);
}

std::optional<std::string_view> FindText(const bson_t& doc, const char* path) {
  bson_iter_t it;
  if (!bson_iter_init(&it, &doc) || !bson_iter_find_descendant(&it, path, &it) ||
      !BSON_ITER_HOLDS_UTF8(&it)) {
    return std::nullopt;
  }
  std::uint32_t length = 0;
  const char* text = bson_iter_utf8(&it, &length);
  return std::string_view(text, length);
}

std::optional<std::int64_t> FindInteger(const bson_t& doc, const char* path) {
  bson_iter_t it;
  if (!bson_iter_init(&it, &doc) || !bson_iter_find_descendant(&it, path, &it)) {
    return std::nullopt;
  }
  if (BSON_ITER_HOLDS_INT64(&it)) return bson_iter_int64(&it);
  if (BSON_ITER_HOLDS_INT32(&it)) return bson_iter_int32(&it);
  if (BSON_ITER_HOLDS_DOUBLE(&it)) {
    const double value = bson_iter_double(&it);
    const auto integral = static_cast<std::int64_t>(value);
    if (static_cast<double>(integral) == value) return integral;
  }
  return std::nullopt;
}

bool HoldsNull(const bson_t& doc, const char* path) {
  bson_iter_t it;
  return bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, path, &it) &&
         BSON_ITER_HOLDS_NULL(&it);
}

bool FindDocument(const bson_t& doc, const char* path, bson_t* out) {
  bson_iter_t it;
  if (!bson_iter_init(&it, &doc) || !bson_iter_find_descendant(&it, path, &it) ||
      !(BSON_ITER_HOLDS_DOCUMENT(&it) || BSON_ITER_HOLDS_ARRAY(&it))) {
    return false;
  }
  std::uint32_t length = 0;
  const std::uint8_t* data = nullptr;
  if (BSON_ITER_HOLDS_DOCUMENT(&it)) {
    bson_iter_document(&it, &length, &data);
  } else {
    bson_iter_array(&it, &length, &data);
  }
  return bson_init_static(out, data, length);
}

}  // namespace wow::mongo
