#include "store/mongo/timer_commands.h"

#include "store/mongo/collections.h"
#include "wow/error.h"

namespace wow::mongo {
namespace {

constexpr TimerState kStates[] = {TimerState::kPending, TimerState::kFiring, TimerState::kParked};

Error Malformed(const std::string& collection, const bson_t& doc, const char* why) {
  return Error(ErrorCode::kDataLoss, "a document of " + collection +
                                         " is not of the timers' layout (" + why +
                                         "): " + ToJson(doc).substr(0, 300));
}

// partition, owner.tenant_id, owner.id (and key, when given): the owner_key index's prefix.
Bson OwnerFilter(const AggregateRef& owner, int partition, const std::string* key) {
  RequireStorableText(owner.tenant_id, "timer owner's tenant id");
  RequireStorableText(owner.id, "timer owner's id");
  Bson filter = NewBson();
  AppendInt64(filter.get(), "partition", partition);
  AppendText(filter.get(), "owner.tenant_id", owner.tenant_id);
  AppendText(filter.get(), "owner.id", owner.id);
  if (key != nullptr) {
    RequireStorableText(*key, "timer key");
    AppendText(filter.get(), "key", *key);
  }
  return filter;
}

void AppendRef(bson_t* doc, const char* field, const AggregateRef& ref) {
  RequireStorableText(ref.tenant_id, "timer target's tenant id");
  RequireStorableText(ref.id, "timer target's id");
  bson_t sub;
  bson_append_document_begin(doc, field, -1, &sub);
  AppendText(&sub, "context", ref.context);
  AppendText(&sub, "aggregate", ref.aggregate);
  AppendText(&sub, "tenant_id", ref.tenant_id);
  AppendText(&sub, "id", ref.id);
  bson_append_document_end(doc, &sub);
}

void AppendState(bson_t* doc, TimerState state) {
  AppendText(doc, "state", TimerStateName(state));
}

// The pipeline's start on the registry: {collections: n}, the count of `context`'s timer
// collections, then one $unionWith per collection of `per_collection`, tagged "_c".
Bson RegistryUnion(const std::string& context, const std::vector<std::string>& collections,
                   const Bson& per_collection) {
  Bson pipeline = NewBson();
  bson_t stage, match;
  bson_append_document_begin(pipeline.get(), "0", -1, &stage);
  bson_append_document_begin(&stage, "$match", -1, &match);
  AppendText(&match, "kind", "timer");
  AppendText(&match, "context", context);
  bson_append_document_end(&stage, &match);
  bson_append_document_end(pipeline.get(), &stage);
  const Bson count = BsonFromJson(R"({"$count": "collections"})");
  bson_append_document(pipeline.get(), "1", -1, count.get());
  for (std::size_t i = 0; i < collections.size(); ++i) {
    Bson sub = CopyBson(*per_collection);
    const Bson tag = BsonFromJson(R"({"$set": {"_c": )" + std::to_string(i) + "}}");
    bson_append_document(sub.get(), std::to_string(bson_count_keys(sub.get())).c_str(), -1,
                         tag.get());
    AppendUnionWith(pipeline.get(), std::to_string(i + 2), collections[i], *sub);
  }
  return pipeline;
}

std::optional<AggregateRef> ParseRef(const bson_t& doc, const char* field) {
  bson_t sub;
  if (!FindDocument(doc, field, &sub)) return std::nullopt;
  const auto context = FindText(sub, "context");
  const auto aggregate = FindText(sub, "aggregate");
  const auto tenant_id = FindText(sub, "tenant_id");
  const auto id = FindText(sub, "id");
  if (!context || !aggregate || !tenant_id || !id) return std::nullopt;
  return AggregateRef{std::string(*context), std::string(*aggregate), std::string(*tenant_id),
                      std::string(*id)};
}

// Appends format: {$lt: kTimerFormat}.
void AppendEarlierFormat(bson_t* filter) {
  bson_t format;
  bson_append_document_begin(filter, "format", -1, &format);
  AppendInt64(&format, "$lt", kTimerFormat);
  bson_append_document_end(filter, &format);
}

// {_id: collection, format: {$lt: kTimerFormat}}.
Bson EarlierFormatFilter(const std::string& collection) {
  Bson filter = NewBson();
  AppendText(filter.get(), "_id", collection);
  AppendEarlierFormat(filter.get());
  return filter;
}

}  // namespace

std::string TimerCollectionName(const std::string& context, const std::string& aggregate) {
  return "wow_timer__" + context + "__" + aggregate;
}

Bson TimerShardKey() { return BsonFromJson(R"({"partition": 1})"); }

Bson TimerIndexesCommand(const std::string& collection) {
  Bson command = NewBson();
  AppendText(command.get(), "createIndexes", collection);
  const Bson indexes = BsonFromJson(R"([
    {"name": "owner_key", "key": {"partition": 1, "owner.tenant_id": 1, "owner.id": 1, "key": 1},
     "unique": true},
    {"name": "due", "key": {"partition": 1, "due_at": 1, "timer_id": 1},
     "partialFilterExpression": {"due": true}},
    {"name": "parked", "key": {"target.context": 1, "target.aggregate": 1,
                               "target.tenant_id": 1, "target.id": 1},
     "partialFilterExpression": {"state": "PARKED"}}])");
  bson_append_array(command.get(), "indexes", -1, indexes.get());
  return command;
}

UpdateCommand PutTimerCommand(const Timer& timer) {
  UpdateCommand command;
  command.collection = TimerCollectionName(timer.owner.context, timer.owner.aggregate);
  command.filter = OwnerFilter(timer.owner, timer.partition, &timer.key);
  RequireStorableText(timer.timer_id, "timer id");
  RequireStorableText(timer.command_type, "timer command type");
  RequireStorableText(timer.body, "timer body");
  // $or: [{version: {$lt: v}}, {version: v, timer_id: {$ne: id}}]
  bson_t any, earlier, lt, same, ne;
  bson_append_array_begin(command.filter.get(), "$or", -1, &any);
  bson_append_document_begin(&any, "0", -1, &earlier);
  bson_append_document_begin(&earlier, "version", -1, &lt);
  AppendInt64(&lt, "$lt", timer.version);
  bson_append_document_end(&earlier, &lt);
  bson_append_document_end(&any, &earlier);
  bson_append_document_begin(&any, "1", -1, &same);
  AppendInt64(&same, "version", timer.version);
  bson_append_document_begin(&same, "timer_id", -1, &ne);
  AppendText(&ne, "$ne", timer.timer_id);
  bson_append_document_end(&same, &ne);
  bson_append_document_end(&any, &same);
  bson_append_array_end(command.filter.get(), &any);

  command.update = NewBson();
  bson_t set, rule;
  bson_append_document_begin(command.update.get(), "$set", -1, &set);
  AppendText(&set, "timer_id", timer.timer_id);
  AppendInt64(&set, "version", timer.version);
  AppendInt64(&set, "due_at", timer.due_at);
  AppendRef(&set, "target", timer.target);
  AppendText(&set, "command_type", timer.command_type);
  AppendText(&set, "body", timer.body);
  bson_append_document_begin(&set, "rule", -1, &rule);
  AppendText(&rule, "type", TimerRuleKindName(timer.rule.kind));
  AppendInt64(&rule, "max_attempts", timer.rule.max_attempts);
  AppendInt64(&rule, "backoff_ms", timer.rule.backoff_ms);
  AppendInt64(&rule, "max_backoff_ms", timer.rule.max_backoff_ms);
  bson_append_document_end(&set, &rule);
  AppendState(&set, timer.state);
  AppendInt64(&set, "attempt", timer.attempt);
  AppendInt64(&set, "parked_version", timer.parked_version);
  if (timer.state != TimerState::kParked) AppendBool(&set, "due", true);
  bson_append_document_end(command.update.get(), &set);
  if (timer.state == TimerState::kParked) {
    bson_t unset;
    bson_append_document_begin(command.update.get(), "$unset", -1, &unset);
    AppendText(&unset, "due", "");
    bson_append_document_end(command.update.get(), &unset);
  }
  command.upsert = true;
  return command;
}

DeleteCommand CancelTimerCommand(const AggregateRef& owner, int partition, const std::string& key,
                                 Version version) {
  DeleteCommand command;
  command.collection = TimerCollectionName(owner.context, owner.aggregate);
  command.filter = OwnerFilter(owner, partition, &key);
  bson_t lte;
  bson_append_document_begin(command.filter.get(), "version", -1, &lte);
  AppendInt64(&lte, "$lte", version);
  bson_append_document_end(command.filter.get(), &lte);
  return command;
}

DeleteCommand CancelAllTimersCommand(const AggregateRef& owner, int partition, Version version) {
  DeleteCommand command;
  command.collection = TimerCollectionName(owner.context, owner.aggregate);
  command.filter = OwnerFilter(owner, partition, nullptr);
  bson_t lte;
  bson_append_document_begin(command.filter.get(), "version", -1, &lte);
  AppendInt64(&lte, "$lte", version);
  bson_append_document_end(command.filter.get(), &lte);
  command.many = true;
  return command;
}

FindCommand FindTimerCommand(const AggregateRef& owner, int partition, const std::string& key) {
  FindCommand command;
  command.collection = TimerCollectionName(owner.context, owner.aggregate);
  command.filter = OwnerFilter(owner, partition, &key);
  command.limit = 1;
  return command;
}

FindCommand EarlierTimerFormatsQuery(const std::string& context) {
  FindCommand query;
  query.collection = kCollectionsRegistry;
  query.filter = NewBson();
  AppendText(query.filter.get(), "kind", "timer");
  AppendText(query.filter.get(), "context", context);
  AppendEarlierFormat(query.filter.get());
  query.sort = BsonFromJson(R"({"_id": 1})");
  return query;
}

UpdateCommand ClaimTimerRebuildCommand(const std::string& collection, EpochMillis now,
                                       std::int64_t claim_ms) {
  UpdateCommand command{kCollectionsRegistry, EarlierFormatFilter(collection), NewBson(), false,
                        false};
  // $or: [{rebuild_since: {$exists: false}}, {rebuild_since: {$lte: now - claim_ms}}]
  bson_t branches, unclaimed, stale, exists, lte;
  bson_append_array_begin(command.filter.get(), "$or", -1, &branches);
  bson_append_document_begin(&branches, "0", -1, &unclaimed);
  bson_append_document_begin(&unclaimed, "rebuild_since", -1, &exists);
  AppendBool(&exists, "$exists", false);
  bson_append_document_end(&unclaimed, &exists);
  bson_append_document_end(&branches, &unclaimed);
  bson_append_document_begin(&branches, "1", -1, &stale);
  bson_append_document_begin(&stale, "rebuild_since", -1, &lte);
  AppendInt64(&lte, "$lte", now - claim_ms);
  bson_append_document_end(&stale, &lte);
  bson_append_document_end(&branches, &stale);
  bson_append_array_end(command.filter.get(), &branches);
  bson_t set;
  bson_append_document_begin(command.update.get(), "$set", -1, &set);
  AppendInt64(&set, "rebuild_since", now);
  bson_append_document_end(command.update.get(), &set);
  return command;
}

Bson DropCollectionCommand(const std::string& collection) {
  Bson command = NewBson();
  AppendText(command.get(), "drop", collection);
  return command;
}

DeleteCommand EarlierTimerFormatRecordDelete(const std::string& collection) {
  return DeleteCommand{kCollectionsRegistry, EarlierFormatFilter(collection), false};
}

Bson DuePipeline(const std::string& context, const std::vector<std::string>& collections,
                 const std::set<int>& partitions, EpochMillis until, int limit) {
  Bson per_collection = NewBson();
  bson_t stage, match, in, list, lte;
  bson_append_document_begin(per_collection.get(), "0", -1, &stage);
  bson_append_document_begin(&stage, "$match", -1, &match);
  AppendBool(&match, "due", true);
  bson_append_document_begin(&match, "partition", -1, &in);
  bson_append_array_begin(&in, "$in", -1, &list);
  int i = 0;
  for (int p : partitions) AppendInt64(&list, std::to_string(i++), p);
  bson_append_array_end(&in, &list);
  bson_append_document_end(&match, &in);
  bson_append_document_begin(&match, "due_at", -1, &lte);
  AppendInt64(&lte, "$lte", until);
  bson_append_document_end(&match, &lte);
  bson_append_document_end(&stage, &match);
  bson_append_document_end(per_collection.get(), &stage);
  const Bson sort = BsonFromJson(R"({"$sort": {"due_at": 1, "timer_id": 1}})");
  const Bson first = BsonFromJson(R"({"$limit": )" + std::to_string(limit) + "}");
  bson_append_document(per_collection.get(), "1", -1, sort.get());
  bson_append_document(per_collection.get(), "2", -1, first.get());
  return RegistryUnion(context, collections, per_collection);
}

Bson ParkedPipeline(const std::string& context, const std::vector<std::string>& collections,
                    const AggregateRef& target) {
  RequireStorableText(target.tenant_id, "timer target's tenant id");
  RequireStorableText(target.id, "timer target's id");
  Bson per_collection = NewBson();
  bson_t stage, match;
  bson_append_document_begin(per_collection.get(), "0", -1, &stage);
  bson_append_document_begin(&stage, "$match", -1, &match);
  AppendState(&match, TimerState::kParked);
  AppendText(&match, "target.context", target.context);
  AppendText(&match, "target.aggregate", target.aggregate);
  AppendText(&match, "target.tenant_id", target.tenant_id);
  AppendText(&match, "target.id", target.id);
  bson_append_document_end(&stage, &match);
  bson_append_document_end(per_collection.get(), &stage);
  return RegistryUnion(context, collections, per_collection);
}

BulkOperation SettleOperation(const TimerChange& change) {
  const Timer& loaded = change.loaded;
  BulkOperation operation;
  operation.filter = OwnerFilter(loaded.owner, loaded.partition, &loaded.key);
  AppendText(operation.filter.get(), "timer_id", loaded.timer_id);
  AppendInt64(operation.filter.get(), "version", loaded.version);
  AppendState(operation.filter.get(), loaded.state);
  AppendInt64(operation.filter.get(), "attempt", loaded.attempt);
  AppendInt64(operation.filter.get(), "due_at", loaded.due_at);
  if (change.kind == TimerChange::Kind::kDone) return operation;  // a delete
  operation.update = NewBson();
  bson_t set;
  bson_append_document_begin(operation.update.get(), "$set", -1, &set);
  switch (change.kind) {
    case TimerChange::Kind::kClaim:
      AppendState(&set, TimerState::kFiring);
      break;
    case TimerChange::Kind::kRetry:
    case TimerChange::Kind::kRearm:
      AppendState(&set, TimerState::kPending);
      break;
    case TimerChange::Kind::kPark:
      AppendState(&set, TimerState::kParked);
      AppendInt64(&set, "parked_version", change.target_version);
      break;
    case TimerChange::Kind::kDone:
      break;
  }
  if (change.kind == TimerChange::Kind::kRearm) AppendInt64(&set, "parked_version", 0);
  if (change.kind == TimerChange::Kind::kPark) {
    bson_append_document_end(operation.update.get(), &set);
    const Bson rest = BsonFromJson(R"({"$unset": {"due": ""}, "$inc": {"attempt": 1}})");
    bson_concat(operation.update.get(), rest.get());
    return operation;
  }
  AppendInt64(&set, "due_at", change.new_due_at);
  AppendBool(&set, "due", true);
  bson_append_document_end(operation.update.get(), &set);
  if (change.kind == TimerChange::Kind::kRetry) {
    const Bson inc = BsonFromJson(R"({"$inc": {"attempt": 1}})");
    bson_concat(operation.update.get(), inc.get());
  }
  return operation;
}

Timer ParseTimer(const bson_t& doc, const std::string& collection) {
  const auto names = ContextAndAggregateOf(collection, "wow_timer__");
  const auto partition = FindInteger(doc, "partition");
  const auto tenant_id = FindText(doc, "owner.tenant_id");
  const auto id = FindText(doc, "owner.id");
  const auto key = FindText(doc, "key");
  const auto timer_id = FindText(doc, "timer_id");
  const auto version = FindInteger(doc, "version");
  const auto due_at = FindInteger(doc, "due_at");
  const auto target = ParseRef(doc, "target");
  const auto command_type = FindText(doc, "command_type");
  const auto body = FindText(doc, "body");
  const auto rule_type = FindText(doc, "rule.type");
  const auto max_attempts = FindInteger(doc, "rule.max_attempts");
  const auto backoff_ms = FindInteger(doc, "rule.backoff_ms");
  const auto max_backoff_ms = FindInteger(doc, "rule.max_backoff_ms");
  const auto state = FindText(doc, "state");
  const auto attempt = FindInteger(doc, "attempt");
  if (!names || !partition ||
      !tenant_id || !id || !key || !timer_id || !version || !due_at || !target ||
      !command_type || !body || !rule_type || !max_attempts || !backoff_ms || !max_backoff_ms ||
      !state || !attempt) {
    throw Malformed(collection, doc, "a field is missing or of another type");
  }
  Timer t;
  t.owner = {names->first, names->second, std::string(*tenant_id), std::string(*id)};
  t.key = *key;
  t.partition = static_cast<int>(*partition);
  t.timer_id = *timer_id;
  t.version = *version;
  t.due_at = *due_at;
  t.target = *target;
  t.command_type = *command_type;
  t.body = *body;
  const auto kind = TimerRuleKindNamed(*rule_type);
  if (!kind) throw Malformed(collection, doc, "an unknown rule type");
  t.rule = {*kind, static_cast<int>(*max_attempts), *backoff_ms, *max_backoff_ms};
  bool known_state = false;
  for (TimerState s : kStates) {
    if (TimerStateName(s) == *state) {
      t.state = s;
      known_state = true;
    }
  }
  if (!known_state) throw Malformed(collection, doc, "an unknown state");
  t.attempt = static_cast<int>(*attempt);
  // A document written before parked_version was kept reads as 0, not known.
  if (bson_has_field(&doc, "parked_version")) {
    const auto parked_version = FindInteger(doc, "parked_version");
    if (!parked_version || *parked_version < 0) {
      throw Malformed(collection, doc, "a parked_version that is not a version");
    }
    t.parked_version = *parked_version;
  }
  return t;
}

}  // namespace wow::mongo
