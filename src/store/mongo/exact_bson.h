// Exact JSON in BSON: an event's JSON body stored as a BSON document whose numbers keep their
// value exactly (seed 002's ExactBson), and read back as JSON text.
//
// An integer that fits 64 bits is stored as an int64; any other number (a fraction, an exponent,
// an integer beyond 64 bits) as a Decimal128 built from its text, so 12.50 stays 12.50 and
// 0.1 stays 0.1. A number Decimal128 cannot hold exactly (more than 34 significant digits, an
// exponent out of its range) is refused, as is a key with a NUL byte and nesting deeper than
// kMaxPayloadDepth. Read back, the text is the same JSON value in compact form: whitespace is
// dropped, escapes are written as nlohmann::json writes them, and a Decimal128 is written in its
// own notation (1e3 reads back as 1E+3).
//
// Thread-safety: pure functions.
#pragma once

#include <bson/bson.h>

#include <string>
#include <string_view>

namespace wow::mongo {

// Levels of objects and arrays a payload may nest (the payload itself is 1): MongoDB refuses a
// document nested beyond 100 levels, and the log's document holds the payload at level 3.
inline constexpr int kMaxPayloadDepth = 64;

// Appends the JSON object `json` to `doc` as the document `field`. Throws
// Error(kInvalidArgument) naming `what` when `json` is not a JSON object, or holds a number,
// a key or a nesting MongoDB cannot store exactly; `doc` is then unusable (build it anew).
void AppendExactJson(bson_t* doc, std::string_view field, std::string_view json,
                     std::string_view what);

// The JSON text of the document `doc` that AppendExactJson wrote. Throws Error(kDataLoss) naming
// `what` for a value no JSON can hold (NaN, infinity, and BSON types AppendExactJson never
// writes: binary data, dates, object ids, ...).
std::string ExactJsonText(const bson_t& doc, std::string_view what);

}  // namespace wow::mongo
