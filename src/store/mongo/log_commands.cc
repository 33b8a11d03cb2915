#include "store/mongo/log_commands.h"

#include <nlohmann/json.hpp>

#include "store/mongo/collections.h"
#include "store/mongo/exact_bson.h"
#include "store/mongo/mongo_error.h"
#include "wow/error.h"
#include "wow/stream_json.h"

namespace wow::mongo {
namespace {

using mongo_log::LogDoc;

constexpr const char* kEntry = "entry";
constexpr const char* kOwn = "own";
constexpr const char* kSeal = "seal";
// BSONObjectTooLarge, and the key of an index entry over the server's limit.
constexpr std::uint32_t kDocumentTooLarge = 10334;
constexpr std::uint32_t kKeyTooLong = 17280;

const char* KindText(LogDoc::Kind kind) {
  switch (kind) {
    case LogDoc::Kind::kEntry:
      return kEntry;
    case LogDoc::Kind::kOwnPlaceholder:
      return kOwn;
    case LogDoc::Kind::kSealPlaceholder:
      return kSeal;
  }
  return kSeal;
}

void AppendBinary(bson_t* doc, const char* field, const std::string& bytes) {
  bson_append_binary(doc, field, -1, BSON_SUBTYPE_BINARY,
                     reinterpret_cast<const std::uint8_t*>(bytes.data()),
                     static_cast<std::uint32_t>(bytes.size()));
}

std::optional<std::string> FindBinary(const bson_t& doc, const char* field) {
  bson_iter_t it;
  if (!bson_iter_init_find(&it, &doc, field) || !BSON_ITER_HOLDS_BINARY(&it)) return std::nullopt;
  bson_subtype_t subtype;
  std::uint32_t size = 0;
  const std::uint8_t* data = nullptr;
  bson_iter_binary(&it, &subtype, &size, &data);
  return std::string(reinterpret_cast<const char*>(data), size);
}

Error Malformed(const std::string& collection, const bson_t& doc, const char* why) {
  return Error(ErrorCode::kDataLoss, "a document of " + collection +
                                         " is not of the log's layout (" + why +
                                         "): " + ToJson(doc).substr(0, 300));
}

}  // namespace

std::string LogCollectionName(const std::string& context, const std::string& aggregate) {
  return "wow_log__" + context + "__" + aggregate;
}

std::string CountersCollectionName(const std::string& context) {
  return "wow_log_counters__" + context;
}

Bson LogDocument(const LogDoc& doc) {
  Bson out = NewBson();
  AppendInt64(out.get(), "partition", doc.partition);
  AppendInt64(out.get(), "sequence", doc.sequence);
  AppendText(out.get(), "kind", KindText(doc.kind));
  if (doc.entry()) {
    const Stream& s = doc.stream;
    RequireStorableText(s.ref.tenant_id, "tenant id");
    RequireStorableText(s.ref.id, "aggregate id");
    RequireStorableText(s.request_id, "request id");
    AppendText(out.get(), "tenant_id", s.ref.tenant_id);
    AppendText(out.get(), "id", s.ref.id);
    AppendInt64(out.get(), "version", s.version);
    AppendText(out.get(), "request_id", s.request_id);
    AppendInt64(out.get(), "time", s.time);
    bson_t events;
    bson_append_array_begin(out.get(), "events", -1, &events);
    for (std::size_t i = 0; i < s.events.size(); ++i) {
      const EventRecord& event = s.events[i];
      const std::string index = std::to_string(i);
      bson_t record;
      bson_append_document_begin(&events, index.c_str(), -1, &record);
      RequireStorableText(event.type, "event type");
      AppendText(&record, "type", event.type);
      AppendExactJson(&record, "payload", event.body,
                      "the payload of event \"" + event.type + "\" of " + ToString(s.ref));
      bson_append_document_end(&events, &record);
    }
    bson_append_array_end(out.get(), &events);
    const nlohmann::json facts = {
        {"reserved", s.reserved}, {"released", s.released}, {"timers", s.timers}};
    AppendExactJson(out.get(), "facts", facts.dump(), "the facts of " + ToString(s.ref));
    AppendBinary(out.get(), "transport", s.transport);
  }
  return out;
}

LogDoc ParseLogDocument(const bson_t& doc, const std::string& collection) {
  const auto partition = FindInteger(doc, "partition");
  const auto sequence = FindInteger(doc, "sequence");
  const auto kind = FindText(doc, "kind");
  if (!partition || !sequence || !kind) throw Malformed(collection, doc, "no position or kind");
  if (*kind == kOwn) return LogDoc::Own(static_cast<int>(*partition), *sequence);
  if (*kind == kSeal) return LogDoc::Seal(static_cast<int>(*partition), *sequence);
  if (*kind != kEntry) throw Malformed(collection, doc, "an unknown kind");
  const auto names = ContextAndAggregateOf(collection, "wow_log__");
  const auto tenant_id = FindText(doc, "tenant_id");
  const auto id = FindText(doc, "id");
  const auto version = FindInteger(doc, "version");
  const auto request_id = FindText(doc, "request_id");
  const auto time = FindInteger(doc, "time");
  bson_t events, facts;
  if (!names || !tenant_id || !id || !version || !request_id || !time || !FindDocument(doc, "events", &events) ||
      !FindDocument(doc, "facts", &facts)) {
    throw Malformed(collection, doc, "an entry without its stream's fields");
  }
  Stream s;
  s.ref = {names->first, names->second, std::string(*tenant_id), std::string(*id)};
  s.version = *version;
  s.request_id = *request_id;
  s.time = *time;
  const std::string what = "an entry of " + collection;
  bson_iter_t it;
  bson_iter_init(&it, &events);
  while (bson_iter_next(&it)) {
    bson_t record, payload;
    std::uint32_t size = 0;
    const std::uint8_t* data = nullptr;
    if (!BSON_ITER_HOLDS_DOCUMENT(&it)) throw Malformed(collection, doc, "an event not a document");
    bson_iter_document(&it, &size, &data);
    const auto type = bson_init_static(&record, data, size) ? FindText(record, "type") : std::nullopt;
    if (!type || !FindDocument(record, "payload", &payload)) {
      throw Malformed(collection, doc, "an event without its type or payload");
    }
    s.events.push_back({std::string(*type), ExactJsonText(payload, what)});
  }
  try {
    const nlohmann::json parsed = nlohmann::json::parse(ExactJsonText(facts, what));
    parsed.at("reserved").get_to(s.reserved);
    parsed.at("released").get_to(s.released);
    parsed.at("timers").get_to(s.timers);
  } catch (const nlohmann::json::exception& e) {
    throw Malformed(collection, doc, e.what());
  } catch (const Error& e) {  // a value out of its set, such as an unknown timer rule type
    throw Malformed(collection, doc, e.what());
  }
  s.transport = FindBinary(doc, "transport").value_or("");
  return LogDoc::Entry(static_cast<int>(*partition), *sequence, std::move(s));
}

std::optional<std::string> UnstorableStreamReason(const Stream& stream) {
  try {
    LogDocument(LogDoc::Entry(0, 0, stream));
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument) throw;
    return std::string("MongoDB cannot store it: ") + e.what();
  }
  return std::nullopt;
}

Bson LogIndexesCommand(const std::string& collection, bool sharded) {
  Bson command = NewBson();
  AppendText(command.get(), "createIndexes", collection);
  const std::string request_key = sharded ? R"({"partition": 1, "tenant_id": 1, "request_id": 1})"
                                          : R"({"tenant_id": 1, "request_id": 1})";
  const Bson indexes = BsonFromJson(R"([
    {"name": "position", "key": {"partition": 1, "sequence": 1}, "unique": true},
    {"name": "version", "key": {"partition": 1, "tenant_id": 1, "id": 1, "version": 1},
     "unique": true, "partialFilterExpression": {"kind": "entry"}},
    {"name": "request", "key": )" + request_key +
                                    R"(, "unique": true,
     "partialFilterExpression": {"kind": "entry"}}])");
  bson_append_array(command.get(), "indexes", -1, indexes.get());
  return command;
}

UpdateCommand CounterUpsert(const std::string& context, int partition) {
  UpdateCommand command;
  command.collection = CountersCollectionName(context);
  command.filter = BsonFromJson(R"({"_id": )" + std::to_string(partition) + "}");
  command.update = BsonFromJson(
      R"({"$setOnInsert": {"next": {"$numberLong": "1"}, "blocks": [], "parent": null, "epoch": 0}})");
  command.upsert = true;
  return command;
}

Bson ReserveBlockPipeline(const std::string& node, Sequence size,
                          const std::vector<Sequence>& finished) {
  RequireStorableText(node, "log node");
  // [{$set: {blocks: {$concatArrays: [
  //     {$filter: {input: "$blocks", as: "b", cond: {$not: [{$in: ["$$b.first", finished]}]}}},
  //     [{node, first: "$next", last: {$add: ["$next", size - 1]}, sealing: false}]]},
  //   next: {$add: ["$next", size]}}}]
  std::string kept = R"({"$filter": {"input": "$blocks", "as": "b", "cond": {"$not": [{"$in": )"
                     R"(["$$b.first", [)";
  for (std::size_t i = 0; i < finished.size(); ++i) {
    kept += (i > 0 ? ", " : "") + std::string(R"({"$numberLong": ")") +
            std::to_string(finished[i]) + R"("})";
  }
  kept += "]]}]}}}";
  const Bson kept_blocks = BsonFromJson(kept);
  Bson pipeline = NewBson();
  bson_t stage, set, blocks, concat, added, block, last, last_args, next, next_args;
  bson_append_document_begin(pipeline.get(), "0", -1, &stage);
  bson_append_document_begin(&stage, "$set", -1, &set);
  bson_append_document_begin(&set, "blocks", -1, &blocks);
  bson_append_array_begin(&blocks, "$concatArrays", -1, &concat);
  AppendDocument(&concat, "0", *kept_blocks);
  bson_append_array_begin(&concat, "1", -1, &added);
  bson_append_document_begin(&added, "0", -1, &block);
  AppendLiteralText(&block, "node", node);
  AppendText(&block, "first", "$next");
  bson_append_document_begin(&block, "last", -1, &last);
  bson_append_array_begin(&last, "$add", -1, &last_args);
  AppendText(&last_args, "0", "$next");
  AppendInt64(&last_args, "1", size - 1);
  bson_append_array_end(&last, &last_args);
  bson_append_document_end(&block, &last);
  AppendBool(&block, "sealing", false);
  bson_append_document_end(&added, &block);
  bson_append_array_end(&concat, &added);
  bson_append_array_end(&blocks, &concat);
  bson_append_document_end(&set, &blocks);
  bson_append_document_begin(&set, "next", -1, &next);
  bson_append_array_begin(&next, "$add", -1, &next_args);
  AppendText(&next_args, "0", "$next");
  AppendInt64(&next_args, "1", size);
  bson_append_array_end(&next, &next_args);
  bson_append_document_end(&set, &next);
  bson_append_document_end(&stage, &set);
  bson_append_document_end(pipeline.get(), &stage);
  return pipeline;
}

Bson MarkSealingPipeline(Sequence first) {
  const std::string f = R"({"$numberLong": ")" + std::to_string(first) + R"("})";
  return BsonFromJson(R"([{"$set": {"blocks": {"$map": {"input": "$blocks", "as": "b", "in": {
      "$cond": [{"$eq": ["$$b.first", )" +
                      f + R"(]},
                {"$mergeObjects": ["$$b", {"sealing": true}]}, "$$b"]}}}}}])");
}

Bson RemoveBlockUpdate(Sequence first) {
  return BsonFromJson(R"({"$pull": {"blocks": {"first": {"$numberLong": ")" +
                      std::to_string(first) + R"("}}}})");
}

mongo_log::Counter ParseCounter(const bson_t& doc) {
  mongo_log::Counter counter;
  const auto next = FindInteger(doc, "next");
  bson_t blocks;
  if (!next || !FindDocument(doc, "blocks", &blocks)) {
    throw Error(ErrorCode::kDataLoss,
                "a log counter is not of the log's layout: " + ToJson(doc).substr(0, 300));
  }
  counter.next = *next;
  bson_iter_t it;
  bson_iter_init(&it, &blocks);
  while (bson_iter_next(&it)) {
    bson_t block;
    std::uint32_t size = 0;
    const std::uint8_t* data = nullptr;
    if (!BSON_ITER_HOLDS_DOCUMENT(&it)) continue;
    bson_iter_document(&it, &size, &data);
    if (!bson_init_static(&block, data, size)) continue;
    const auto node = FindText(block, "node");
    const auto first = FindInteger(block, "first");
    const auto last = FindInteger(block, "last");
    if (!node || !first || !last) {
      throw Error(ErrorCode::kDataLoss, "a block of a log counter is not of the log's layout: " +
                                            ToJson(doc).substr(0, 300));
    }
    bson_iter_t sealing;
    const bool sealed = bson_iter_init_find(&sealing, &block, "sealing") &&
                        BSON_ITER_HOLDS_BOOL(&sealing) && bson_iter_bool(&sealing);
    counter.blocks.push_back({std::string(*node), *first, *last, sealed});
  }
  return counter;
}

Bson TailPipeline(int partition, Sequence after, const std::vector<std::string>& collections,
                  int limit) {
  Bson pipeline = NewBson();
  const std::string p = std::to_string(partition);
  const Bson match = BsonFromJson(R"({"$match": {"_id": )" + p + "}}");
  bson_append_document(pipeline.get(), "0", -1, match.get());
  for (std::size_t i = 0; i < collections.size(); ++i) {
    const Bson sub = BsonFromJson(R"([{"$match": {"partition": )" + p +
                                  R"(, "sequence": {"$gt": {"$numberLong": ")" +
                                  std::to_string(after) + R"("}}}}, {"$sort": {"sequence": 1}},
        {"$limit": )" + std::to_string(limit) +
                                  R"(}, {"$set": {"_c": )" + std::to_string(i) + "}}]");
    AppendUnionWith(pipeline.get(), std::to_string(i + 1), collections[i], *sub);
  }
  return pipeline;
}

FindCommand VersionQuery(const std::string& collection, int partition, const std::string& tenant_id,
                         const std::string& id, Version version) {
  FindCommand command;
  command.collection = collection;
  command.filter = NewBson();
  AppendInt64(command.filter.get(), "partition", partition);
  AppendText(command.filter.get(), "tenant_id", tenant_id);
  AppendText(command.filter.get(), "id", id);
  AppendInt64(command.filter.get(), "version", version);
  AppendText(command.filter.get(), "kind", kEntry);
  command.limit = 1;
  return command;
}

FindCommand RequestQuery(const std::string& collection, const std::string& tenant_id,
                         const std::string& request_id) {
  FindCommand command;
  command.collection = collection;
  command.filter = NewBson();
  AppendText(command.filter.get(), "tenant_id", tenant_id);
  AppendText(command.filter.get(), "request_id", request_id);
  AppendText(command.filter.get(), "kind", kEntry);
  command.limit = 1;
  command.projection = BsonFromJson(R"({"transport": 0})");
  return command;
}

Bson HeadPipeline(int partition, const std::vector<std::string>& collections) {
  const Bson highest = BsonFromJson(R"([{"$match": {"partition": )" + std::to_string(partition) +
                                    R"(, "kind": "entry"}}, {"$sort": {"sequence": -1}},
      {"$limit": 1}, {"$project": {"_id": 0, "sequence": 1}}])");
  Bson pipeline = CopyBson(*highest);
  std::uint32_t stage = 4;
  for (std::size_t i = 1; i < collections.size(); ++i) {
    AppendUnionWith(pipeline.get(), std::to_string(stage++), collections[i], *highest);
  }
  const Bson last = BsonFromJson(R"({"$sort": {"sequence": -1}})");
  const Bson one = BsonFromJson(R"({"$limit": 1})");
  bson_append_document(pipeline.get(), std::to_string(stage++).c_str(), -1, last.get());
  bson_append_document(pipeline.get(), std::to_string(stage).c_str(), -1, one.get());
  return pipeline;
}

UpdateCommand LeaseTakeCommand(const std::string& context, int partition, const std::string& node,
                               EpochMillis now, EpochMillis expires_at) {
  RequireStorableText(node, "lease node");
  // {_id: p, $or: [{"lease.node": node}, {"lease.expires_at": {$lte: now}}, {lease: null}]}
  UpdateCommand take;
  take.collection = CountersCollectionName(context);
  take.filter = NewBson();
  AppendInt64(take.filter.get(), "_id", partition);
  bson_t any, mine, expired, lte, none;
  bson_append_array_begin(take.filter.get(), "$or", -1, &any);
  bson_append_document_begin(&any, "0", -1, &mine);
  AppendText(&mine, "lease.node", node);
  bson_append_document_end(&any, &mine);
  bson_append_document_begin(&any, "1", -1, &expired);
  bson_append_document_begin(&expired, "lease.expires_at", -1, &lte);
  AppendInt64(&lte, "$lte", now);
  bson_append_document_end(&expired, &lte);
  bson_append_document_end(&any, &expired);
  bson_append_document_begin(&any, "2", -1, &none);
  AppendNull(&none, "lease");
  bson_append_document_end(&any, &none);
  bson_append_array_end(take.filter.get(), &any);
  // {$set: {lease: {node, expires_at}}}
  take.update = NewBson();
  bson_t set, lease;
  bson_append_document_begin(take.update.get(), "$set", -1, &set);
  bson_append_document_begin(&set, "lease", -1, &lease);
  AppendText(&lease, "node", node);
  AppendInt64(&lease, "expires_at", expires_at);
  bson_append_document_end(&set, &lease);
  bson_append_document_end(take.update.get(), &set);
  return take;
}

UpdateCommand LeaseReleaseCommand(const std::string& context, int partition,
                                  const std::string& node, EpochMillis now) {
  RequireStorableText(node, "lease node");
  UpdateCommand release;
  release.collection = CountersCollectionName(context);
  release.filter = NewBson();
  AppendInt64(release.filter.get(), "_id", partition);
  AppendText(release.filter.get(), "lease.node", node);
  release.update = NewBson();
  bson_t min;
  bson_append_document_begin(release.update.get(), "$min", -1, &min);
  AppendInt64(&min, "lease.expires_at", now);
  bson_append_document_end(release.update.get(), &min);
  return release;
}

std::string CheckpointsCollectionName(const std::string& context) {
  return "wow_log_checkpoints__" + context;
}

namespace {

// {_id: {p, s: subscription}}: a checkpoint's filter.
Bson CheckpointId(int partition, const std::string& subscription) {
  RequireStorableText(subscription, "subscription name");
  Bson filter = NewBson();
  bson_t id;
  bson_append_document_begin(filter.get(), "_id", -1, &id);
  AppendInt64(&id, "p", partition);
  AppendText(&id, "s", subscription);
  bson_append_document_end(filter.get(), &id);
  return filter;
}

}  // namespace

FindCommand CheckpointQuery(const std::string& context, int partition,
                            const std::string& subscription) {
  return {CheckpointsCollectionName(context), CheckpointId(partition, subscription), nullptr, 1,
          nullptr};
}

UpdateCommand CheckpointCommitCommand(const std::string& context, int partition,
                                      const std::string& subscription, Sequence sequence) {
  UpdateCommand commit;
  commit.collection = CheckpointsCollectionName(context);
  commit.filter = CheckpointId(partition, subscription);
  commit.update = NewBson();
  bson_t max;
  bson_append_document_begin(commit.update.get(), "$max", -1, &max);
  AppendInt64(&max, "sequence", sequence);
  bson_append_document_end(commit.update.get(), &max);
  commit.upsert = true;
  return commit;
}

DeleteCommand CheckpointsDropCommand(const std::string& context, const std::string& subscription) {
  RequireStorableText(subscription, "subscription name");
  DeleteCommand drop;
  drop.collection = CheckpointsCollectionName(context);
  drop.filter = NewBson();
  AppendText(drop.filter.get(), "_id.s", subscription);
  drop.many = true;
  return drop;
}

std::optional<mongo_log::WriteStatus> StatusOfWriteError(const bson_t& write_error) {
  const auto code = FindInteger(write_error, "code");
  if (!code) return std::nullopt;
  if (*code == kDocumentTooLarge || *code == kKeyTooLong) return mongo_log::WriteStatus::kRefused;
  if (!IsDuplicateKeyCode(*code)) return std::nullopt;
  bson_t pattern;
  if (!FindDocument(write_error, "keyPattern", &pattern)) return std::nullopt;
  bson_iter_t it;
  if (bson_iter_init_find(&it, &pattern, "sequence")) return mongo_log::WriteStatus::kPositionTaken;
  if (bson_iter_init_find(&it, &pattern, "version")) return mongo_log::WriteStatus::kVersionTaken;
  if (bson_iter_init_find(&it, &pattern, "request_id")) {
    return mongo_log::WriteStatus::kRequestTaken;
  }
  return std::nullopt;
}

}  // namespace wow::mongo
