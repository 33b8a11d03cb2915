// The MongoDB log's commands without a server (the pure builders of
// src/store/mongo/log_commands.h): the documents of entries and placeholders, the unique keys, the
// block pipelines, the tail's aggregation, and how a write error's keyPattern is read.
#include <gtest/gtest.h>

#include "store/mongo/log_commands.h"
#include "wow/error.h"

namespace wow::mongo {
namespace {

using mongo_log::LogDoc;
using mongo_log::WriteStatus;

std::string Json(const Bson& doc) { return ToJson(*doc); }
// `json` as ToJson writes it (canonical extended JSON).
std::string Canonical(const std::string& json) { return ToJson(*BsonFromJson(json)); }

Stream AStream() {
  Stream s;
  s.ref = {"shop", "brand", "t1", "b1"};
  s.version = 3;
  s.request_id = "r1";
  s.events = {{"renamed", R"({"to":"x","price":12.50})"}, {"flagged", "{}"}};
  s.reserved = {{"brand-name", "acme", ReservationTenancy::kSystem}};
  s.released = {{"brand-name", "old", ReservationTenancy::kTenant}};
  TimerFact timer;
  timer.key = "expire";
  timer.timer_id = "t-1";
  timer.due_at = 1'000'000;
  timer.target = {"shop", "brand", "t1", "b1"};
  timer.command_type = "expire";
  timer.body = R"({"reason":"draft"})";
  s.timers = {timer, TimerFact{TimerFact::Kind::kCancel, "other", "", 0, {}, "", "", {}}};
  s.time = 77;
  s.transport = std::string("\x01\x00\xff", 3);
  return s;
}

TEST(LogCommands, AnEntryHoldsItsStreamAsFieldsAndAPlaceholderOnlyItsPosition) {
  const std::string entry = Json(LogDocument(LogDoc::Entry(2, 9, AStream())));
  EXPECT_EQ(entry.substr(0, entry.find(R"(, "events")")),
            R"({ "partition" : { "$numberLong" : "2" }, "sequence" : { "$numberLong" : "9" }, )"
            R"("kind" : "entry", "tenant_id" : "t1", "id" : "b1", "version" : { "$numberLong" : )"
            R"("3" }, "request_id" : "r1", "time" : { "$numberLong" : "77" })");
  for (const char* field :
       {R"("events" : [ { "type" : "renamed", "payload" : { "to" : "x", "price" : )"
        R"({ "$numberDecimal" : "12.50" } } }, { "type" : "flagged", "payload" : {  } } ])",
        R"("reserved" : [ { "key" : "acme", "ns" : "brand-name", "system" : true } ])",
        R"("released" : [ { "key" : "old", "ns" : "brand-name", "system" : false } ])",
        R"("due_at" : { "$numberLong" : "1000000" })", R"("body" : "{\"reason\":\"draft\"}")",
        R"("transport" : { "$binary" : { "base64" : "AQD/", "subType" : "00" } })"}) {
    EXPECT_NE(entry.find(field), std::string::npos) << field << " in " << entry;
  }
  EXPECT_EQ(Json(LogDocument(LogDoc::Own(0, 4))),
            R"({ "partition" : { "$numberLong" : "0" }, "sequence" : { "$numberLong" : "4" }, )"
            R"("kind" : "own" })");
  EXPECT_EQ(Json(LogDocument(LogDoc::Seal(0, 5))).find(R"("kind" : "seal")") != std::string::npos,
            true);
}

TEST(LogCommands, AStoredDocumentReadsBackAsItWasAndAnotherLayoutIsDataLoss) {
  const std::string collection = "wow_log__shop__brand";
  const LogDoc back = ParseLogDocument(*LogDocument(LogDoc::Entry(2, 9, AStream())), collection);
  EXPECT_TRUE(back.entry());
  EXPECT_EQ(back.partition, 2);
  EXPECT_EQ(back.sequence, 9);
  Stream expected = AStream();
  EXPECT_EQ(back.stream, expected) << "the facts, the payloads' digits and the transport's bytes";
  EXPECT_EQ(ParseLogDocument(*LogDocument(LogDoc::Seal(1, 3)), collection).kind,
            LogDoc::Kind::kSealPlaceholder);
  for (const char* json :
       {R"({"sequence": 1, "kind": "own"})", R"({"partition": 0, "sequence": 1, "kind": "other"})",
        R"({"partition": 0, "sequence": 1, "kind": "entry"})",
        R"({"partition": 0, "sequence": 1, "kind": "entry", "tenant_id": "", "id": "a",
            "version": 1, "request_id": "r", "time": 0, "events": [{"type": "x", "payload":
            {"n": {"$numberDecimal": "NaN"}}}], "facts": {"reserved": [], "released": [],
            "timers": []}})",
        R"({"partition": 0, "sequence": 1, "kind": "entry", "tenant_id": "", "id": "a",
            "version": 1, "request_id": "r", "time": 0, "events": [], "facts": {}})"}) {
    try {
      ParseLogDocument(*BsonFromJson(json), collection);
      ADD_FAILURE() << json;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kDataLoss) << json;
      EXPECT_NE(std::string(e.what()).find(collection), std::string::npos) << e.what();
    }
  }
}

TEST(LogCommands, AStreamMongoDBCannotStoreIsNamedBeforeAnythingIsSent) {
  EXPECT_EQ(UnstorableStreamReason(AStream()), std::nullopt);
  Stream inexact = AStream();
  inexact.events[1].body = R"({"n":0.12345678901234567890123456789012345})";
  const auto reason = UnstorableStreamReason(inexact);
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("flagged"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("Decimal128"), std::string::npos) << *reason;
  Stream nul = AStream();
  nul.request_id = std::string("r\0x", 3);
  EXPECT_NE(UnstorableStreamReason(nul).value_or("").find("request id"), std::string::npos);
}

TEST(LogCommands, TheVersionAndRequestKeysArePartialOnEntriesAndStartWithTheShardKeyWhenSharded) {
  const std::string replica_set = Json(LogIndexesCommand("wow_log__shop__brand", false));
  const std::string sharded = Json(LogIndexesCommand("wow_log__shop__brand", true));
  for (const std::string* indexes : {&replica_set, &sharded}) {
    for (const char* index :
         {R"({"name": "position", "key": {"partition": 1, "sequence": 1}, "unique": true})",
          R"({"name": "version", "key": {"partition": 1, "tenant_id": 1, "id": 1, "version": 1},
              "unique": true, "partialFilterExpression": {"kind": "entry"}})"}) {
      EXPECT_NE(indexes->find(Canonical(index)), std::string::npos) << *indexes;
    }
  }
  EXPECT_NE(replica_set.find(Canonical(R"({"name": "request", "key": {"tenant_id": 1,
      "request_id": 1}, "unique": true, "partialFilterExpression": {"kind": "entry"}})")),
            std::string::npos)
      << replica_set;
  EXPECT_NE(sharded.find(Canonical(R"({"name": "request", "key": {"partition": 1,
      "tenant_id": 1, "request_id": 1}, "unique": true,
      "partialFilterExpression": {"kind": "entry"}})")),
            std::string::npos)
      << sharded;
}

TEST(LogCommands, ABlockIsAppendedFromTheCountersNextInOneUpdate) {
  const std::string reserve = Json(ReserveBlockPipeline("$node", 4, {2, 3}));
  EXPECT_NE(reserve.find(R"("$in" : [ "$$b.first", [ { "$numberLong" : "2" }, )"
                         R"({ "$numberLong" : "3" } ] ])"),
            std::string::npos)
      << "the finished blocks leave in the same update: " << reserve;
  EXPECT_NE(reserve.find(R"("node" : { "$literal" : "$node" }, "first" : "$next", )"
                         R"("last" : { "$add" : [ "$next", { "$numberLong" : "3" } ] }, )"
                         R"("sealing" : false)"),
            std::string::npos)
      << reserve;
  EXPECT_NE(reserve.find(R"("next" : { "$add" : [ "$next", { "$numberLong" : "4" } ] })"),
            std::string::npos)
      << reserve;
  EXPECT_EQ(Json(RemoveBlockUpdate(7)),
            R"({ "$pull" : { "blocks" : { "first" : { "$numberLong" : "7" } } } })");
  const auto counter = ParseCounter(*BsonFromJson(
      R"({"_id": 0, "next": 9, "blocks": [{"node": "n1", "first": 5, "last": 8, "sealing": true}]})"));
  EXPECT_EQ(counter.next, 9);
  EXPECT_EQ(counter.blocks, (std::vector<mongo_log::Block>{{"n1", 5, 8, true}}));
  EXPECT_THROW(ParseCounter(*BsonFromJson(R"({"_id": 0})")), Error);
}

TEST(LogCommands, TheTailIsTheCounterThenEachCollectionAfterTheCursorTagged) {
  auto stage = [](const char* coll, int tag) {
    return std::string(R"({"$unionWith": {"coll": ")") + coll +
           R"(", "pipeline": [{"$match": {"partition": 1, "sequence": {"$gt": {"$numberLong": "41"}}}},
              {"$sort": {"sequence": 1}}, {"$limit": 5}, {"$set": {"_c": )" +
           std::to_string(tag) + "}}]}}";
  };
  EXPECT_EQ(Json(TailPipeline(1, 41, {"wow_log__shop__a", "wow_log__shop__b"}, 5)),
            Canonical(R"({"0": {"$match": {"_id": 1}}, "1": )" + stage("wow_log__shop__a", 0) +
                      R"(, "2": )" + stage("wow_log__shop__b", 1) + "}"));
}

TEST(LogCommands, ALeaseIsTakenWhileItsNodesExpiredOrMissingAndReleasedByItsNodeAlone) {
  const UpdateCommand take = LeaseTakeCommand("shop", 2, "n1", 100, 130);
  EXPECT_EQ(take.collection, "wow_log_counters__shop");
  EXPECT_FALSE(take.upsert) << "a counter is created by Create, never by a lease";
  EXPECT_EQ(Json(take.filter),
            Canonical(R"({"_id": {"$numberLong": "2"}, "$or": [{"lease.node": "n1"},
                {"lease.expires_at": {"$lte": {"$numberLong": "100"}}}, {"lease": null}]})"));
  EXPECT_EQ(Json(take.update), Canonical(R"({"$set": {"lease": {"node": "n1",
                                   "expires_at": {"$numberLong": "130"}}}})"));
  const UpdateCommand release = LeaseReleaseCommand("shop", 2, "n1", 120);
  EXPECT_EQ(Json(release.filter),
            Canonical(R"({"_id": {"$numberLong": "2"}, "lease.node": "n1"})"));
  EXPECT_EQ(Json(release.update),
            Canonical(R"({"$min": {"lease.expires_at": {"$numberLong": "120"}}})"));
  EXPECT_THROW(LeaseTakeCommand("shop", 0, std::string("n\0", 2), 1, 2), Error);
}

TEST(LogCommands, ACheckpointOnlyMovesUpAndTheHeadIsTheLastEntry) {
  const UpdateCommand commit = CheckpointCommitCommand("shop", 1, "$sub", 9);
  EXPECT_EQ(commit.collection, "wow_log_checkpoints__shop");
  EXPECT_TRUE(commit.upsert);
  EXPECT_EQ(Json(commit.filter), Canonical(R"({"_id": {"p": {"$numberLong": "1"}, "s": "$sub"}})"));
  EXPECT_EQ(Json(commit.update), Canonical(R"({"$max": {"sequence": {"$numberLong": "9"}}})"));
  EXPECT_EQ(Json(CheckpointQuery("shop", 1, "$sub").filter), Json(commit.filter));
  const std::string highest =
      R"({"$match": {"partition": 3, "kind": "entry"}}, {"$sort": {"sequence": -1}}, {"$limit": 1}, {"$project": {"_id": 0, "sequence": 1}})";
  EXPECT_EQ(Json(HeadPipeline(3, {"wow_log__shop__brand", "wow_log__shop__item"})),
            Canonical("[" + highest +
                      R"(, {"$unionWith": {"coll": "wow_log__shop__item", "pipeline": [)" +
                      highest + R"(]}}, {"$sort": {"sequence": -1}}, {"$limit": 1}])"));
}

TEST(LogCommands, AWriteErrorIsReadByItsKeyPattern) {
  auto status = [](const char* json) { return StatusOfWriteError(*BsonFromJson(json)); };
  EXPECT_EQ(status(R"({"code": 11000, "keyPattern": {"partition": 1, "sequence": 1}})"),
            WriteStatus::kPositionTaken);
  EXPECT_EQ(status(R"({"code": 11000, "keyPattern": {"tenant_id": 1, "id": 1, "version": 1}})"),
            WriteStatus::kVersionTaken);
  EXPECT_EQ(status(R"({"code": 11000, "keyPattern": {"tenant_id": 1, "request_id": 1}})"),
            WriteStatus::kRequestTaken);
  EXPECT_EQ(status(R"({"code": 10334})"), WriteStatus::kRefused);
  EXPECT_EQ(status(R"({"code": 11000, "keyPattern": {"_id": 1}})"), std::nullopt);
  EXPECT_EQ(status(R"({"code": 2})"), std::nullopt);
}

}  // namespace
}  // namespace wow::mongo
