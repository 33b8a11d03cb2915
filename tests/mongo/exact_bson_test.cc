// Exact JSON in BSON (src/store/mongo/exact_bson.h): which BSON type each JSON number becomes,
// what is refused, and that the text read back is the same JSON value.
#include "store/mongo/exact_bson.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <optional>

#include "store/mongo/bson_doc.h"
#include "wow/error.h"

namespace wow::mongo {
namespace {

// `json` stored as the field "p", as canonical extended JSON.
std::string Stored(const std::string& json) {
  Bson doc = NewBson();
  AppendExactJson(doc.get(), "p", json, "the payload");
  return ToJson(*doc);
}

// `json` stored and read back.
std::string RoundTrip(const std::string& json) {
  Bson doc = NewBson();
  AppendExactJson(doc.get(), "p", json, "the payload");
  bson_t payload;
  EXPECT_TRUE(FindDocument(*doc, "p", &payload));
  return ExactJsonText(payload, "the payload");
}

// The code of the error storing `json` throws; nullopt when it is stored.
std::optional<ErrorCode> CodeOfStoring(const std::string& json) {
  try {
    Stored(json);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the payload"), std::string::npos) << e.what();
    return e.code();
  }
  return std::nullopt;
}

TEST(ExactBson, IntegersAreInt64AndEveryOtherNumberADecimal128OfItsOwnDigits) {
  EXPECT_EQ(Stored(R"({"a":1,"b":-9007199254740993,"c":12.50,"d":0.1,"e":1e3,)"
                   R"("f":18446744073709551615,"g":100000000000000000000000})"),
            R"({ "p" : { "a" : { "$numberLong" : "1" }, )"
            R"("b" : { "$numberLong" : "-9007199254740993" }, )"
            R"("c" : { "$numberDecimal" : "12.50" }, "d" : { "$numberDecimal" : "0.1" }, )"
            R"("e" : { "$numberDecimal" : "1E+3" }, )"
            R"("f" : { "$numberDecimal" : "18446744073709551615" }, )"
            R"("g" : { "$numberDecimal" : "100000000000000000000000" } } })");
}

TEST(ExactBson, ACompactObjectReadsBackAsTheSameText) {
  for (const char* json :
       {"{}", R"({"name":"acme","price":12.50,"n":[1,2.5,null,true,false,{}],"o":{"x":[]}})",
        R"({"z":1,"a":2,"m":3})", R"({"text":"caf\u00e9 \"☕\"\n\t\\","":"empty key"})",
        R"({"tiny":0.000000000000000000000000000000001,"exact":0.1000000000000000055511151231257827})",
        R"({"a.b":1,"$x":{"$numberLong":"5"}})"}) {
    const std::string back = RoundTrip(json);
    EXPECT_EQ(nlohmann::json::parse(back), nlohmann::json::parse(json)) << back;
  }
  EXPECT_EQ(RoundTrip(R"({"price":12.50,"n":[1,{"k":"v"}]})"),
            R"({"price":12.50,"n":[1,{"k":"v"}]})");
  EXPECT_EQ(RoundTrip(R"({ "a" : 1e3 , "b": 1.5e-3 })"), R"({"a":1E+3,"b":0.0015})")
      << "the same value, in compact form and Decimal128's notation";
  EXPECT_EQ(RoundTrip(R"({"$x":{"$numberLong":"5"}})"), R"({"$x":{"$numberLong":"5"}})")
      << "keys are data, not extended JSON";
}

TEST(ExactBson, WhatMongoDBCannotStoreExactlyIsRefused) {
  EXPECT_EQ(CodeOfStoring(R"({"n":0.12345678901234567890123456789012345})"),
            ErrorCode::kInvalidArgument)
      << "35 significant digits";
  EXPECT_EQ(CodeOfStoring(R"({"n":[1e-6177]})"), ErrorCode::kInvalidArgument)
      << "an exponent below Decimal128's";
  EXPECT_EQ(CodeOfStoring(R"({"n":0.1234567890123456789012345678901234})"), std::nullopt)
      << "34 digits are exact";
  for (const char* not_object : {"[1]", "5", R"("text")", "null", "", "{", R"({"a":1} {})"}) {
    EXPECT_EQ(CodeOfStoring(not_object), ErrorCode::kInvalidArgument) << not_object;
  }
  EXPECT_EQ(CodeOfStoring(R"({"a\u0000b":1})"), ErrorCode::kInvalidArgument) << "a NUL in a key";
  EXPECT_EQ(CodeOfStoring(R"({"v":"a\u0000b"})"), std::nullopt) << "a NUL in a string value";
}

TEST(ExactBson, NestingIsLimited) {
  const auto nested = [](int levels) {
    std::string json;
    for (int i = 1; i < levels; ++i) json += R"({"a":)";
    json += "{}";
    for (int i = 1; i < levels; ++i) json += "}";
    return json;
  };
  EXPECT_EQ(CodeOfStoring(nested(kMaxPayloadDepth)), std::nullopt);
  EXPECT_EQ(CodeOfStoring(nested(kMaxPayloadDepth + 1)), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CodeOfStoring(nested(100'000)), ErrorCode::kInvalidArgument) << "and no deep recursion";
}

TEST(ExactBson, AStoredValueNoJsonHoldsIsDataLoss) {
  for (const char* stored : {R"({"n": {"$numberDecimal": "NaN"}})",
                             R"({"n": {"$numberDouble": "Infinity"}})",
                             R"({"n": {"$oid": "5f1a2b3c4d5e6f7a8b9c0d1e"}})",
                             R"({"n": [{"$binary": {"base64": "AQ==", "subType": "00"}}]})"}) {
    try {
      ExactJsonText(*BsonFromJson(stored), "an entry of wow_log__shop__brand");
      ADD_FAILURE() << stored;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kDataLoss) << stored;
      EXPECT_NE(std::string(e.what()).find("wow_log__shop__brand"), std::string::npos);
    }
  }
  EXPECT_EQ(ExactJsonText(*BsonFromJson(R"({"i": {"$numberInt": "7"}, "d": 2.5})"), "x"),
            R"({"i":7,"d":2.5})");
}

}  // namespace
}  // namespace wow::mongo
