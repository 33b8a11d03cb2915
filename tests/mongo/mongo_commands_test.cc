// The MongoDB layer without a server: the reservation commands' content (the pure builders of
// src/store/mongo/reservation_commands.h), the format records, the error mapping and the reading
// of `hello`; and, when WOW_TEST_MONGODB_URI names one, that the real deployment is a replica set.
#include <gtest/gtest.h>

#include <mongoc/mongoc.h>

#include "store/mongo/collections.h"
#include "store/mongo/deployment.h"
#include "store/mongo/mongo_error.h"
#include "store/mongo/reservation_commands.h"
#include "support/mongo_test_deployment.h"
#include "wow/error.h"

namespace wow::mongo {
namespace {

const ReservationScope kScope{"shop", "user", "t1", "shop.user-name"};
const AggregateRef kAlice{"shop", "user", "t1", "alice"};

std::string Json(const Bson& doc) { return ToJson(*doc); }

TEST(ReservationCommands, AReserveIsAConditionalUpsertOnTheKeyAndTheShardKey) {
  const UpdateCommand c = ReserveCommand(kScope, "ann", kAlice, "h1", std::chrono::milliseconds(5), 100);
  EXPECT_EQ(c.collection, "wow_reservation__shop__user");
  EXPECT_TRUE(c.upsert);
  EXPECT_TRUE(c.pipeline);
  EXPECT_EQ(Json(c.filter),
            R"({ "_id" : { "t" : "t1", "n" : "shop.user-name", "k" : "ann" }, "tenant_id" : "t1", )"
            R"("key" : "ann", "$or" : [ { "owner" : { "tenant_id" : "t1", "id" : "alice" } }, )"
            R"({ "expires_at" : { "$lte" : { "$numberLong" : "100" } } } ] })");
  const std::string update = Json(c.update);
  EXPECT_NE(update.find(R"("$setUnion" : [ "$holds", [ { "$literal" : "h1" } ] ])"), std::string::npos) << update;
  EXPECT_NE(update.find(R"("expires_at" : { "$numberLong" : "105" })"), std::string::npos) << update;
  EXPECT_NE(update.find(R"("then" : "$$ROOT")"), std::string::npos) << "the owner's confirmed key kept";
}

TEST(ReservationCommands, UsersStringsInAPipelineAreLiterals) {
  const AggregateRef dollar{"shop", "user", "t1", "$owner"};
  const std::string update =
      Json(ReserveCommand(kScope, "k", dollar, "$holds", std::chrono::milliseconds(5), 1).update);
  EXPECT_NE(update.find(R"({ "$literal" : { "tenant_id" : "t1", "id" : "$owner" } })"), std::string::npos) << update;
  EXPECT_NE(update.find(R"({ "$literal" : "$holds" })"), std::string::npos) << update;
}

TEST(ReservationCommands, AConfirmKeepsTheGreaterVersionOrTakesTheKeyConfirmed) {
  const std::string update = Json(ConfirmCommand(kScope, "ann", kAlice, 7, 100).update);
  EXPECT_NE(update.find(R"("$max" : [ "$version", { "$numberLong" : "7" } ])"), std::string::npos) << update;
  EXPECT_NE(update.find(R"("expires_at" : null, "holds" : [  ], "version" : { "$numberLong" : "7" })"), std::string::npos) << update;
}

TEST(ReservationCommands, AReleaseDeletesTheOwnersExpiredPendingOrItsKeyConfirmedAtOrBelow) {
  EXPECT_EQ(Json(ReleaseCommand(kScope, "ann", kAlice, 4, 100).filter),
            R"({ "_id" : { "t" : "t1", "n" : "shop.user-name", "k" : "ann" }, "tenant_id" : "t1", )"
            R"("key" : "ann", "owner" : { "tenant_id" : "t1", "id" : "alice" }, "$or" : [ )"
            R"({ "expires_at" : { "$lte" : { "$numberLong" : "100" } } }, { "expires_at" : null, )"
            R"("version" : { "$lte" : { "$numberLong" : "4" } } } ] })");
  EXPECT_EQ(Json(ReleaseCommand(kScope, "ann", kAlice, kAnyVersion, 100).filter).find("$or"), std::string::npos)
      << "at ANY_VERSION, whatever the owner holds";
}

TEST(ReservationCommands, AnAbandonPullsItsHoldThenDeletesOnlyAPendingKeyWithoutHolds) {
  const UpdateCommand pull = AbandonPullCommand(kScope, "ann", kAlice, "h1");
  EXPECT_FALSE(pull.upsert);
  EXPECT_NE(Json(pull.filter).find(R"("expires_at" : { "$ne" : null }, "holds" : "h1")"), std::string::npos);
  EXPECT_EQ(Json(pull.update), R"({ "$pull" : { "holds" : "h1" } })");
  EXPECT_NE(Json(AbandonDeleteCommand(kScope, "ann", kAlice).filter).find(R"("holds" : { "$size" : { "$numberInt" : "0" } })"), std::string::npos);
}

TEST(ReservationCommands, TextMongoDbCannotStoreIsRefusedBeforeAnythingIsSent) {
  for (const std::string& bad : {std::string("a\0b", 3), std::string("\xff")}) {
    try {
      ReserveCommand(kScope, bad, kAlice, "h", std::chrono::milliseconds(5), 1);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    }
  }
}

TEST(ReservationCommands, ADocumentNotOfTheLayoutIsDataLoss) {
  for (const char* json : {R"({"_id": {"t": "t1", "n": "n", "k": "k"}})",
                           R"({"_id": {"t": "t1", "n": "n", "k": "k"}, "owner": {"tenant_id": "t1", "id": "a"}, "expires_at": null})",
                           R"({"_id": {"t": "t1", "n": "n", "k": "k"}, "owner": {"tenant_id": "t1", "id": "a"}, "expires_at": 5, "holds": [1]})"}) {
    try {
      ParseReservation(kScope, *BsonFromJson(json));
      ADD_FAILURE() << "parsed " << json;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kDataLoss) << e.what();
    }
  }
}

TEST(FormatRecords, AreWrittenOnceAndShardedByTheLayoutsKey) {
  CollectionSpec spec{"wow_reservation__shop__user", "reservation", "shop", "user", 1, ReservationShardKey()};
  const UpdateCommand record = FormatRecordUpsert(spec);
  EXPECT_EQ(record.collection, "wow_collections");
  EXPECT_EQ(Json(record.filter), R"({ "_id" : "wow_reservation__shop__user" })");
  EXPECT_EQ(Json(record.update), R"({ "$setOnInsert" : { "kind" : "reservation", "context" : "shop", )"
                                 R"("aggregate" : "user", "format" : { "$numberLong" : "1" } } })");
  EXPECT_EQ(Json(ShardCollectionCommand("db", spec)),
            R"({ "shardCollection" : "db.wow_reservation__shop__user", "key" : { "tenant_id" : )"
            R"({ "$numberInt" : "1" }, "key" : "hashed" } })");
}

TEST(MongoCollections, ANewCollectionIsSplitOnePartitionAChunkAndSpreadRoundTheShards) {
  EXPECT_EQ(Json(SplitChunkCommand("db", "wow_timer__shop__order", 3)),
            R"({ "split" : "db.wow_timer__shop__order", "middle" : { "partition" : )"
            R"({ "$numberLong" : "3" } } })");
  EXPECT_EQ(Json(ListShardsCommand()), R"({ "listShards" : { "$numberInt" : "1" } })");
  EXPECT_EQ(Json(MoveChunkCommand("db", "wow_timer__shop__order", 2, "shard-b")),
            R"({ "moveChunk" : "db.wow_timer__shop__order", "find" : { "partition" : )"
            R"({ "$numberLong" : "2" } }, "to" : "shard-b" })");
  EXPECT_EQ(ShardsOfPartitions({"a", "b"}, 5),
            (std::vector<std::string>{"a", "b", "a", "b", "a"}));
  EXPECT_TRUE(ShardsOfPartitions({}, 5).empty());
}

TEST(MongoErrors, AreMappedByDomainAndCode) {
  using Kind = MongoFailure::Kind;
  const Bson dup = BsonFromJson(R"({"writeErrors": [{"code": 11000, "keyPattern": {"_id": 1}}]})");
  const MongoFailure duplicate = ClassifyMongoError(MONGOC_ERROR_SERVER, 11000, "E11000", dup.get(), true);
  EXPECT_EQ(duplicate.kind, Kind::kDuplicateKey);
  EXPECT_NE(duplicate.key_pattern.find("\"_id\""), std::string::npos);
  EXPECT_EQ(ClassifyMongoError(MONGOC_ERROR_WRITE_CONCERN, 64, "", nullptr, true).kind, Kind::kWriteUnknown);
  EXPECT_EQ(ClassifyMongoError(MONGOC_ERROR_STREAM, MONGOC_ERROR_STREAM_SOCKET, "", nullptr, true).kind, Kind::kWriteUnknown);
  EXPECT_EQ(ClassifyMongoError(MONGOC_ERROR_STREAM, MONGOC_ERROR_STREAM_SOCKET, "", nullptr, false).kind, Kind::kUnavailable);
  EXPECT_EQ(ClassifyMongoError(MONGOC_ERROR_SERVER, 50, "", nullptr, true).kind, Kind::kWriteUnknown);
  EXPECT_EQ(ClassifyMongoError(MONGOC_ERROR_SERVER, 10107, "", nullptr, true).kind, Kind::kUnavailable);
  EXPECT_EQ(ClassifyMongoError(MONGOC_ERROR_SERVER_SELECTION, MONGOC_ERROR_SERVER_SELECTION_FAILURE, "", nullptr, false).kind, Kind::kUnavailable);
  EXPECT_EQ(ClassifyMongoError(MONGOC_ERROR_SERVER, 13, "", nullptr, false).kind, Kind::kPermissionDenied);
  EXPECT_EQ(ClassifyMongoError(MONGOC_ERROR_SERVER, 2, "", nullptr, true).kind, Kind::kInternal);
  EXPECT_EQ(ToError(ClassifyMongoError(MONGOC_ERROR_WRITE_CONCERN, 64, "waiting", nullptr, true), "x").code(),
            ErrorCode::kUnavailable);
  EXPECT_NE(std::string(ToError(ClassifyMongoError(MONGOC_ERROR_WRITE_CONCERN, 64, "w", nullptr, true), "x").what())
                .find("may or may not have been applied"), std::string::npos);
}

TEST(Hello, SaysReplicaSetMongosOrStandalone) {
  EXPECT_EQ(ClassifyHello(*BsonFromJson(R"({"setName": "rs0", "isWritablePrimary": true})")).set_name, "rs0");
  EXPECT_TRUE(ClassifyHello(*BsonFromJson(R"({"msg": "isdbgrid"})")).mongos);
  EXPECT_TRUE(ClassifyHello(*BsonFromJson(R"({"isWritablePrimary": true})")).standalone());
}

TEST(RealReplicaSet, TheMongoSuitesAlsoRunAgainstIt) {
  const auto uri = testing_support::RealMongoUri();
  if (!uri) GTEST_SKIP() << "WOW_TEST_MONGODB_URI is not set: the MongoDB suites ran against the test server (a test double) only";
  const MongoDeploymentInfo info = Describe(*OpenMongoDeployment(*uri));
  EXPECT_TRUE(!info.set_name.empty() || info.mongos);
}

}  // namespace
}  // namespace wow::mongo
