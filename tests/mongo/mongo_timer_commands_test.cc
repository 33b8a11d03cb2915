// The MongoDB timer store's commands without a server (the pure builders of
// src/store/mongo/timer_commands.h): the put's conditional upsert, the indexes and their partial
// filters, the due and parked aggregations, each settle change's operation, and the parser.
#include <gtest/gtest.h>

#include "store/mongo/timer_commands.h"
#include "wow/error.h"

namespace wow::mongo {
namespace {

std::string Json(const Bson& doc) { return ToJson(*doc); }
std::string Canonical(const std::string& json) { return ToJson(*BsonFromJson(json)); }

Timer ATimer() {
  Timer t;
  t.owner = {"shop", "order", "t1", "o1"};
  t.key = "expire";
  t.partition = PartitionOf("t1", "o1", 4);
  t.timer_id = "tid";
  t.version = 3;
  t.due_at = 5000;
  t.target = {"billing", "invoice", "t1", "i1"};
  t.command_type = "cancel";
  t.body = R"({"why":"late"})";
  t.rule = {TimerRule::Kind::kRetry, 3, 100, 1000};
  return t;
}

std::string Long(std::int64_t n) { return R"({"$numberLong": ")" + std::to_string(n) + R"("})"; }

TEST(TimerCommands, APutMatchesOnlyAnEarlierVersionOrAnotherTimerOfTheSameVersion) {
  const Timer t = ATimer();
  const UpdateCommand put = PutTimerCommand(t);
  EXPECT_EQ(put.collection, "wow_timer__shop__order");
  EXPECT_TRUE(put.upsert);
  EXPECT_EQ(Json(put.filter),
            Canonical(R"({"partition": )" + Long(t.partition) +
                      R"(, "owner.tenant_id": "t1", "owner.id": "o1", "key": "expire",
                          "$or": [{"version": {"$lt": )" + Long(3) + R"(}},
                                  {"version": )" + Long(3) + R"(, "timer_id": {"$ne": "tid"}}]})"));
  EXPECT_EQ(Json(put.update),
            Canonical(R"({"$set": {"timer_id": "tid", "version": )" + Long(3) +
                      R"(, "due_at": )" + Long(5000) +
                      R"(, "target": {"context": "billing", "aggregate": "invoice",
                          "tenant_id": "t1", "id": "i1"}, "command_type": "cancel",
                          "body": "{\"why\":\"late\"}", "rule": {"type": "retry",
                          "max_attempts": )" + Long(3) + R"(, "backoff_ms": )" + Long(100) +
                      R"(, "max_backoff_ms": )" + Long(1000) + R"(}, "state": "PENDING",
                          "attempt": )" + Long(0) + R"(, "parked_version": )" + Long(0) +
                      R"(, "due": true}})"));
  Timer parked = t;
  parked.state = TimerState::kParked;
  const std::string update = Json(PutTimerCommand(parked).update);
  EXPECT_EQ(update.find(R"("due" : true)"), std::string::npos) << update;
  EXPECT_NE(update.find(R"("$unset" : { "due" : "" })"), std::string::npos) << update;
  Timer nul = t;
  nul.body = std::string("{\"a\":\"\0\"}", 9);
  EXPECT_THROW(PutTimerCommand(nul), Error);
}

TEST(TimerCommands, TheOwnerKeyStartsWithTheShardKeyAndTheDueIndexIsPartialOnAField) {
  const std::string indexes = Json(TimerIndexesCommand("wow_timer__shop__order"));
  for (const char* index :
       {R"({"name": "owner_key", "key": {"partition": 1, "owner.tenant_id": 1, "owner.id": 1,
            "key": 1}, "unique": true})",
        R"({"name": "due", "key": {"partition": 1, "due_at": 1, "timer_id": 1},
            "partialFilterExpression": {"due": true}})"}) {
    const std::string expected = Canonical(index);
    EXPECT_NE(indexes.find(expected.substr(2, expected.size() - 4)), std::string::npos)
        << index << " in " << indexes;
  }
  EXPECT_EQ(indexes.find("$in"), std::string::npos) << "no $in in a partial filter before 6.0";
  EXPECT_EQ(Json(TimerShardKey()), Canonical(R"({"partition": 1})"));
}

TEST(TimerCommands, DueCountsTheRegistryThenReadsEachCollectionsFirstDueTimers) {
  EXPECT_EQ(Json(DuePipeline("shop", {"wow_timer__shop__a", "wow_timer__shop__b"}, {0, 2}, 900, 5)),
            Canonical(R"([{"$match": {"kind": "timer", "context": "shop"}},
              {"$count": "collections"},
              {"$unionWith": {"coll": "wow_timer__shop__a", "pipeline": [
                {"$match": {"due": true, "partition": {"$in": [)" + Long(0) + ", " + Long(2) +
                      R"(]}, "due_at": {"$lte": )" + Long(900) + R"(}}},
                {"$sort": {"due_at": 1, "timer_id": 1}}, {"$limit": 5}, {"$set": {"_c": 0}}]}},
              {"$unionWith": {"coll": "wow_timer__shop__b", "pipeline": [
                {"$match": {"due": true, "partition": {"$in": [)" + Long(0) + ", " + Long(2) +
                      R"(]}, "due_at": {"$lte": )" + Long(900) + R"(}}},
                {"$sort": {"due_at": 1, "timer_id": 1}}, {"$limit": 5}, {"$set": {"_c": 1}}]}}])"));
  const std::string parked =
      Json(ParkedPipeline("shop", {"wow_timer__shop__a"}, {"billing", "invoice", "t", "i"}));
  EXPECT_NE(parked.find(Canonical(R"({"state": "PARKED", "target.context": "billing",
      "target.aggregate": "invoice", "target.tenant_id": "t", "target.id": "i"})")),
            std::string::npos)
      << parked;
}

TEST(TimerCommands, EachSettleChangeAppliesOnlyToTheTimerAsLoaded) {
  const Timer t = ATimer();
  const std::string loaded = R"({"partition": )" + Long(t.partition) +
                             R"(, "owner.tenant_id": "t1", "owner.id": "o1", "key": "expire",
      "timer_id": "tid", "version": )" + Long(3) + R"(, "state": "PENDING", "attempt": )" +
                             Long(0) + R"(, "due_at": )" + Long(5000) + "}";
  const auto op = [&](TimerChange::Kind kind) {
    return SettleOperation(TimerChange{kind, t, 7000, 9});
  };
  for (auto kind : {TimerChange::Kind::kClaim, TimerChange::Kind::kRetry,
                    TimerChange::Kind::kPark, TimerChange::Kind::kDone}) {
    EXPECT_EQ(Json(op(kind).filter), Canonical(loaded));
  }
  EXPECT_EQ(Json(op(TimerChange::Kind::kClaim).update),
            Canonical(R"({"$set": {"state": "FIRING", "due_at": )" + Long(7000) +
                      R"(, "due": true}})"));
  EXPECT_EQ(Json(op(TimerChange::Kind::kRetry).update),
            Canonical(R"({"$set": {"state": "PENDING", "due_at": )" + Long(7000) +
                      R"(, "due": true}, "$inc": {"attempt": 1}})"));
  EXPECT_EQ(Json(op(TimerChange::Kind::kPark).update),
            Canonical(R"({"$set": {"state": "PARKED", "parked_version": )" + Long(9) +
                      R"(}, "$unset": {"due": ""}, "$inc": {"attempt": 1}})"));
  EXPECT_EQ(Json(op(TimerChange::Kind::kRearm).update),
            Canonical(R"({"$set": {"state": "PENDING", "parked_version": )" + Long(0) +
                      R"(, "due_at": )" + Long(7000) + R"(, "due": true}})"));
  EXPECT_FALSE(op(TimerChange::Kind::kDone).update) << "a delete";
}

TEST(TimerCommands, ARebuildOfAnEarlierFormatIsClaimedUnlessAnotherNodesClaimIsFresh) {
  const FindCommand earlier = EarlierTimerFormatsQuery("shop");
  EXPECT_EQ(earlier.collection, "wow_collections");
  EXPECT_EQ(Json(earlier.filter),
            Canonical(R"({"kind": "timer", "context": "shop",
                          "format": {"$lt": {"$numberLong": "5"}}})"));
  const UpdateCommand claim = ClaimTimerRebuildCommand("wow_timer__shop__order", 100'000, 30'000);
  EXPECT_FALSE(claim.upsert);
  EXPECT_EQ(Json(claim.filter),
            Canonical(R"({"_id": "wow_timer__shop__order", "format": {"$lt": {"$numberLong": "5"}},
                          "$or": [{"rebuild_since": {"$exists": false}},
                                  {"rebuild_since": {"$lte": {"$numberLong": "70000"}}}]})"));
  EXPECT_EQ(Json(claim.update),
            Canonical(R"({"$set": {"rebuild_since": {"$numberLong": "100000"}}})"));
  EXPECT_EQ(Json(DropCollectionCommand("wow_timer__shop__order")),
            Canonical(R"({"drop": "wow_timer__shop__order"})"));
  const DeleteCommand forget = EarlierTimerFormatRecordDelete("wow_timer__shop__order");
  EXPECT_FALSE(forget.many);
  EXPECT_EQ(Json(forget.filter),
            Canonical(R"({"_id": "wow_timer__shop__order",
                          "format": {"$lt": {"$numberLong": "5"}}})"));
}

TEST(TimerCommands, AStoredTimerReadsBackAndAnotherLayoutIsDataLoss) {
  Timer t = ATimer();
  t.state = TimerState::kFiring;
  t.attempt = 2;
  const UpdateCommand put = PutTimerCommand(t);
  // The document the upsert makes: the filter's equalities, then the $set.
  Bson doc = BsonFromJson(R"({"partition": )" + std::to_string(t.partition) +
                          R"(, "owner": {"tenant_id": "t1", "id": "o1"}, "key": "expire"})");
  bson_t set;
  ASSERT_TRUE(FindDocument(*put.update, "$set", &set));
  bson_concat(doc.get(), &set);
  EXPECT_EQ(ParseTimer(*doc, "wow_timer__shop__order"), t);
  // A parked timer keeps the version that refused it; a document written before parked_version
  // was kept reads as 0.
  Timer parked = t;
  parked.state = TimerState::kParked;
  parked.parked_version = 12;
  Bson parked_doc = BsonFromJson(R"({"partition": )" + std::to_string(t.partition) +
                                 R"(, "owner": {"tenant_id": "t1", "id": "o1"}, "key": "expire"})");
  const UpdateCommand put_parked = PutTimerCommand(parked);
  ASSERT_TRUE(FindDocument(*put_parked.update, "$set", &set));
  bson_concat(parked_doc.get(), &set);
  EXPECT_EQ(ParseTimer(*parked_doc, "wow_timer__shop__order"), parked);
  Bson without = NewBson();
  bson_copy_to_excluding_noinit(parked_doc.get(), without.get(), "parked_version", nullptr);
  parked.parked_version = 0;
  EXPECT_EQ(ParseTimer(*without, "wow_timer__shop__order"), parked) << Json(without);
  for (const char* json : {R"({"partition": 0})",
                           R"({"partition": 0, "owner": {"tenant_id": "", "id": "o"}, "key": "k",
      "timer_id": "x", "version": 1, "due_at": 1, "target": {"context": "a", "aggregate": "b",
      "tenant_id": "", "id": "c"}, "command_type": "c", "body": "{}", "rule": {"type": "often",
      "max_attempts": 1, "backoff_ms": 1, "max_backoff_ms": 1}, "state": "PENDING",
      "attempt": 0})",
                           R"({"partition": 0, "owner": {"tenant_id": "t", "id": "o"}, "key": "k",
      "timer_id": "x", "version": 1, "due_at": 1, "target": {"context": "a", "aggregate": "b",
      "tenant_id": "t", "id": "c"}, "command_type": "c", "body": "{}", "rule": {"type": "once",
      "max_attempts": 1, "backoff_ms": 1, "max_backoff_ms": 1}, "state": "PARKED",
      "attempt": 0, "parked_version": -1})"}) {
    try {
      ParseTimer(*BsonFromJson(json), "wow_timer__shop__order");
      ADD_FAILURE() << json;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kDataLoss) << json;
      EXPECT_NE(std::string(e.what()).find("wow_timer__shop__order"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace wow::mongo
