// The MongoDB read model store's commands without a server (the pure builders of
// src/store/mongo/read_model_commands.h): the put's conditional upsert and its limits, the
// indexes, the list's range for a prefix, the drops, and the parser.
#include <gtest/gtest.h>

#include "store/mongo/log_commands.h"
#include "store/mongo/read_model_commands.h"
#include "wow/error.h"

namespace wow::mongo {
namespace {

std::string Json(const Bson& doc) { return ToJson(*doc); }
std::string Canonical(const std::string& json) { return ToJson(*BsonFromJson(json)); }
std::string Long(std::int64_t n) { return R"({"$numberLong": ")" + std::to_string(n) + R"("})"; }

const ReadModelRow kRow{"brands", "t1", "b1", 3, "contoso", R"({"name":"Contoso"})"};

TEST(ReadModelCommands, APutIsAnUpsertMatchingOnlyAnEarlierVersionOfTheRow) {
  const BulkOperation put = PutRowOperation(kRow);
  EXPECT_TRUE(put.upsert);
  EXPECT_EQ(Json(put.filter), Canonical(R"({"table": "brands", "tenant_id": "t1", "id": "b1",
                          "version": {"$lt": )" +
                                        Long(3) + "}}"));
  EXPECT_EQ(Json(put.update),
            Canonical(R"({"$set": {"table": "brands", "tenant_id": "t1", "id": "b1",
                          "version": )" +
                      Long(3) + R"(, "index_key": "contoso",
                          "body": "{\"name\":\"Contoso\"}"}})"));
}

TEST(ReadModelCommands, APutOfTextMongoCannotStoreOrOverTheDocumentLimitIsRefused) {
  for (auto bad : {&ReadModelRow::tenant_id, &ReadModelRow::id, &ReadModelRow::index_key,
                   &ReadModelRow::body}) {
    ReadModelRow row = kRow;
    row.*bad = std::string("a\0b", 3);
    EXPECT_THROW(PutRowOperation(row), Error);
    row.*bad = "\xff";
    EXPECT_THROW(PutRowOperation(row), Error);
  }
  ReadModelRow big = kRow;
  big.body = R"({"x":")" + std::string(kMaxRowDocumentBytes - 200, 'x') + R"("})";
  EXPECT_NO_THROW(PutRowOperation(big)) << "just under the limit";
  big.body = R"({"x":")" + std::string(kMaxRowDocumentBytes, 'x') + R"("})";
  try {
    PutRowOperation(big);
    ADD_FAILURE() << "a row over 16 MiB was built";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("16777216"), std::string::npos) << e.what();
  }
}

TEST(ReadModelCommands, TheCollectionIsOnePerContextWithTheRowIndexUniqueOnTheShardKey) {
  EXPECT_EQ(ReadModelCollectionName("shop"), "wow_read_model__shop");
  EXPECT_EQ(Json(ReadModelShardKey()), Canonical(R"({"table": 1, "tenant_id": 1, "id": 1})"));
  EXPECT_EQ(Json(ReadModelIndexesCommand("wow_read_model__shop")),
            Canonical(R"({"createIndexes": "wow_read_model__shop", "indexes": [
                {"name": "row", "key": {"table": 1, "tenant_id": 1, "id": 1}, "unique": true},
                {"name": "prefix", "key": {"table": 1, "tenant_id": 1, "index_key": 1,
                                           "id": 1}}]})"));
}

TEST(ReadModelCommands, AListIsARangeOfIdsAndOfIndexKeysForAPrefixSortedById) {
  const FindCommand all = ListRowsCommand("shop", {"brands", "t1", "b7", "", 50});
  EXPECT_EQ(all.collection, "wow_read_model__shop");
  EXPECT_EQ(Json(all.filter),
            Canonical(R"({"table": "brands", "tenant_id": "t1", "id": {"$gt": "b7"}})"));
  EXPECT_EQ(Json(all.sort), Canonical(R"({"id": 1})"));
  EXPECT_EQ(all.limit, 50);
  const FindCommand prefixed = ListRowsCommand("shop", {"brands", "t1", "", "con", 10});
  EXPECT_EQ(Json(prefixed.filter),
            Canonical(R"({"table": "brands", "tenant_id": "t1", "id": {"$gt": ""},
                          "index_key": {"$gte": "con", "$lt": "coo"}})"));
  const FindCommand unbounded =
      ListRowsCommand("shop", {"brands", "t1", "", "\xf4\x8f\xbf\xbf", 10});
  EXPECT_EQ(Json(unbounded.filter),
            Canonical(R"({"table": "brands", "tenant_id": "t1", "id": {"$gt": ""},
                          "index_key": {"$gte": ")"
                      "\xf4\x8f\xbf\xbf"
                      R"("}})"))
      << "no string is above every one starting with U+10FFFF";
  EXPECT_THROW(ListRowsCommand("shop", {"brands", "t1", "", "\xc3", 10}), Error) << "not UTF-8";
}

TEST(ReadModelCommands, APrefixsUpperBoundRaisesItsLastCodePointThatCanBeRaised) {
  EXPECT_EQ(PrefixUpperBound("al"), "am");
  EXPECT_EQ(PrefixUpperBound("a\x7f"), "a\xc2\x80") << "one byte to two";
  EXPECT_EQ(PrefixUpperBound("\xc3\xa9"), "\xc3\xaa");
  EXPECT_EQ(PrefixUpperBound("\xdf\xbf"), "\xe0\xa0\x80") << "U+07FF to U+0800";
  EXPECT_EQ(PrefixUpperBound("\xed\x9f\xbf"), "\xee\x80\x80") << "U+D7FF skips the surrogates";
  EXPECT_EQ(PrefixUpperBound("\xef\xbf\xbf"), "\xf0\x90\x80\x80") << "U+FFFF to U+10000";
  EXPECT_EQ(PrefixUpperBound("a\xf4\x8f\xbf\xbf"), "b") << "a trailing U+10FFFF is dropped";
  EXPECT_EQ(PrefixUpperBound("\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf"), std::nullopt);
  EXPECT_EQ(PrefixUpperBound(""), std::nullopt);
}

TEST(ReadModelCommands, ADropDeletesTheTablesRowsAndTheSubscriptionsCheckpoints) {
  const DeleteCommand rows = DropRowsCommand("shop", {"brands", "categories"});
  EXPECT_EQ(rows.collection, "wow_read_model__shop");
  EXPECT_TRUE(rows.many);
  EXPECT_EQ(Json(rows.filter), Canonical(R"({"table": {"$in": ["brands", "categories"]}})"));
  const DeleteCommand checkpoints = CheckpointsDropCommand("shop", "projection.catalog");
  EXPECT_EQ(checkpoints.collection, "wow_log_checkpoints__shop");
  EXPECT_TRUE(checkpoints.many);
  EXPECT_EQ(Json(checkpoints.filter), Canonical(R"({"_id.s": "projection.catalog"})"));
}

TEST(ReadModelCommands, TheParserReadsWhatAPutStoresAndRefusesAnotherLayout) {
  const BulkOperation put = PutRowOperation(kRow);
  bson_t set;
  ASSERT_TRUE(FindDocument(*put.update, "$set", &set));
  EXPECT_EQ(ParseRow(set, "c"), kRow);
  for (const char* bad : {R"({"table": "brands", "tenant_id": "t1", "version": 1,
                              "index_key": "", "body": "{}"})",
                          R"({"table": "brands", "tenant_id": "t1", "id": "b1", "version": "1",
                              "index_key": "", "body": "{}"})",
                          R"({"table": "brands", "tenant_id": "t1", "id": "b1", "version": 1,
                              "body": {}})"}) {
    try {
      ParseRow(*BsonFromJson(bad), "wow_read_model__shop");
      ADD_FAILURE() << "parsed " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kDataLoss) << e.what();
      EXPECT_NE(std::string(e.what()).find("wow_read_model__shop"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace wow::mongo
