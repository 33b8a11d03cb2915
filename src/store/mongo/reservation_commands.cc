#include "store/mongo/reservation_commands.h"

#include "wow/error.h"

namespace wow::mongo {
namespace {

// Appends {t, n, k}: a key's _id.
void AppendKeyId(bson_t* doc, const char* field, const ReservationScope& scope,
                 std::string_view key) {
  bson_t id;
  bson_append_document_begin(doc, field, -1, &id);
  AppendText(&id, "t", scope.tenant_id);
  AppendText(&id, "n", scope.ns);
  AppendText(&id, "k", key);
  bson_append_document_end(doc, &id);
}

// The filter every write starts with: the _id and the shard key's fields.
Bson KeyFilter(const ReservationScope& scope, const std::string& key) {
  RequireStorableText(scope.tenant_id, "reservation tenant");
  RequireStorableText(scope.ns, "reservation namespace");
  RequireStorableText(key, "reservation key");
  Bson filter = NewBson();
  AppendKeyId(filter.get(), "_id", scope, key);
  AppendText(filter.get(), "tenant_id", scope.tenant_id);
  AppendText(filter.get(), "key", key);
  return filter;
}

// {tenant_id, id}: the owner as stored (its context and type are the collection's).
Bson OwnerDoc(const AggregateRef& owner) {
  RequireStorableText(owner.tenant_id, "owner tenant");
  RequireStorableText(owner.id, "owner id");
  Bson doc = NewBson();
  AppendText(doc.get(), "tenant_id", owner.tenant_id);
  AppendText(doc.get(), "id", owner.id);
  return doc;
}

// Appends {$literal: value} for a document.
void AppendLiteralDoc(bson_t* doc, const char* field, const bson_t& value) {
  bson_t literal;
  bson_append_document_begin(doc, field, -1, &literal);
  AppendDocument(&literal, "$literal", value);
  bson_append_document_end(doc, &literal);
}

// Appends {$or: [{owner: O}, {expires_at: {$lte: now}}]}: the owner's reservation or an expired
// pending one.
void AppendOwnerOrExpired(bson_t* filter, const bson_t& owner, EpochMillis now) {
  bson_t branches, mine, expired, lte;
  bson_append_array_begin(filter, "$or", -1, &branches);
  bson_append_document_begin(&branches, "0", -1, &mine);
  AppendDocument(&mine, "owner", owner);
  bson_append_document_end(&branches, &mine);
  bson_append_document_begin(&branches, "1", -1, &expired);
  bson_append_document_begin(&expired, "expires_at", -1, &lte);
  AppendInt64(&lte, "$lte", now);
  bson_append_document_end(&expired, &lte);
  bson_append_document_end(&branches, &expired);
  bson_append_array_end(filter, &branches);
}

// Appends {$and: [{$eq: ["$owner", {$literal: O}]}, {OP: ["$expires_at", VALUE]}]} where VALUE is
// null (op "$eq": the owner's confirmed reservation) or `now` (op "$gt": its live pending one).
void AppendOwnerAnd(bson_t* doc, const char* field, const bson_t& owner, const char* op,
                    std::optional<EpochMillis> now) {
  bson_t condition, terms, eq_owner, eq_args, test, test_args;
  bson_append_document_begin(doc, field, -1, &condition);
  bson_append_array_begin(&condition, "$and", -1, &terms);
  bson_append_document_begin(&terms, "0", -1, &eq_owner);
  bson_append_array_begin(&eq_owner, "$eq", -1, &eq_args);
  AppendText(&eq_args, "0", "$owner");
  AppendLiteralDoc(&eq_args, "1", owner);
  bson_append_array_end(&eq_owner, &eq_args);
  bson_append_document_end(&terms, &eq_owner);
  bson_append_document_begin(&terms, "1", -1, &test);
  bson_append_array_begin(&test, op, -1, &test_args);
  AppendText(&test_args, "0", "$expires_at");
  if (now) {
    AppendInt64(&test_args, "1", *now);
  } else {
    AppendNull(&test_args, "1");
  }
  bson_append_array_end(&test, &test_args);
  bson_append_document_end(&terms, &test);
  bson_append_array_end(&condition, &terms);
  bson_append_document_end(doc, &condition);
}

// Appends the fields of a whole new reservation document of `owner` (the _id, tenant_id and key
// taken from the document the update runs on).
void AppendFresh(bson_t* doc, const bson_t& owner) {
  AppendText(doc, "_id", "$_id");
  AppendText(doc, "tenant_id", "$tenant_id");
  AppendText(doc, "key", "$key");
  AppendLiteralDoc(doc, "owner", owner);
}

// [{$replaceWith: EXPRESSION}] with the expression built by `build` into the stage.
template <typename Build>
Bson ReplaceWithPipeline(Build build) {
  Bson pipeline = NewBson();
  bson_t stage;
  bson_append_document_begin(pipeline.get(), "0", -1, &stage);
  build(&stage);
  bson_append_document_end(pipeline.get(), &stage);
  return pipeline;
}

}  // namespace

std::string ReservationCollection(const ReservationScope& scope) {
  return "wow_reservation__" + scope.context + "__" + scope.aggregate;
}

Bson ReservationShardKey() { return BsonFromJson(R"({"tenant_id": 1, "key": "hashed"})"); }

UpdateCommand ReserveCommand(const ReservationScope& scope, const std::string& key,
                             const AggregateRef& owner, const std::string& hold,
                             std::chrono::milliseconds ttl, EpochMillis now) {
  RequireStorableText(hold, "reservation hold");
  const Bson owner_doc = OwnerDoc(owner);
  const EpochMillis expires_at = now + ttl.count();
  UpdateCommand command{ReservationCollection(scope), KeyFilter(scope, key), nullptr, true, true};
  AppendOwnerOrExpired(command.filter.get(), *owner_doc, now);
  command.update = ReplaceWithPipeline([&](bson_t* stage) {
    bson_t replace, switch_doc, branches, confirmed, live, merge, merge_args, changes, holds,
        union_args, hold_array, max, max_args, fresh, fresh_holds;
    bson_append_document_begin(stage, "$replaceWith", -1, &replace);
    bson_append_document_begin(&replace, "$switch", -1, &switch_doc);
    bson_append_array_begin(&switch_doc, "branches", -1, &branches);
    // The owner's confirmed reservation stays as it is.
    bson_append_document_begin(&branches, "0", -1, &confirmed);
    AppendOwnerAnd(&confirmed, "case", *owner_doc, "$eq", std::nullopt);
    AppendText(&confirmed, "then", "$$ROOT");
    bson_append_document_end(&branches, &confirmed);
    // The owner's live pending one gains the hold and keeps the later expiry.
    bson_append_document_begin(&branches, "1", -1, &live);
    AppendOwnerAnd(&live, "case", *owner_doc, "$gt", now);
    bson_append_document_begin(&live, "then", -1, &merge);
    bson_append_array_begin(&merge, "$mergeObjects", -1, &merge_args);
    AppendText(&merge_args, "0", "$$ROOT");
    bson_append_document_begin(&merge_args, "1", -1, &changes);
    bson_append_document_begin(&changes, "holds", -1, &holds);
    bson_append_array_begin(&holds, "$setUnion", -1, &union_args);
    AppendText(&union_args, "0", "$holds");
    bson_append_array_begin(&union_args, "1", -1, &hold_array);
    AppendLiteralText(&hold_array, "0", hold);
    bson_append_array_end(&union_args, &hold_array);
    bson_append_array_end(&holds, &union_args);
    bson_append_document_end(&changes, &holds);
    bson_append_document_begin(&changes, "expires_at", -1, &max);
    bson_append_array_begin(&max, "$max", -1, &max_args);
    AppendText(&max_args, "0", "$expires_at");
    AppendInt64(&max_args, "1", expires_at);
    bson_append_array_end(&max, &max_args);
    bson_append_document_end(&changes, &max);
    bson_append_document_end(&merge_args, &changes);
    bson_append_array_end(&merge, &merge_args);
    bson_append_document_end(&live, &merge);
    bson_append_document_end(&branches, &live);
    bson_append_array_end(&switch_doc, &branches);
    // Anything else the filter admitted (nothing, an expired pending reservation of anyone) is
    // taken afresh: pending, its only hold this attempt's.
    bson_append_document_begin(&switch_doc, "default", -1, &fresh);
    AppendFresh(&fresh, *owner_doc);
    AppendInt64(&fresh, "expires_at", expires_at);
    bson_append_array_begin(&fresh, "holds", -1, &fresh_holds);
    AppendLiteralText(&fresh_holds, "0", hold);
    bson_append_array_end(&fresh, &fresh_holds);
    AppendNull(&fresh, "version");
    bson_append_document_end(&switch_doc, &fresh);
    bson_append_document_end(&replace, &switch_doc);
    bson_append_document_end(stage, &replace);
  });
  return command;
}

UpdateCommand ConfirmCommand(const ReservationScope& scope, const std::string& key,
                             const AggregateRef& owner, Version version, EpochMillis now) {
  const Bson owner_doc = OwnerDoc(owner);
  UpdateCommand command{ReservationCollection(scope), KeyFilter(scope, key), nullptr, true, true};
  AppendOwnerOrExpired(command.filter.get(), *owner_doc, now);
  command.update = ReplaceWithPipeline([&](bson_t* stage) {
    bson_t replace, cond, merge, merge_args, changes, max, max_args, fresh, empty;
    bson_append_document_begin(stage, "$replaceWith", -1, &replace);
    bson_append_document_begin(&replace, "$cond", -1, &cond);
    // The owner's confirmed reservation keeps the greater version.
    AppendOwnerAnd(&cond, "if", *owner_doc, "$eq", std::nullopt);
    bson_append_document_begin(&cond, "then", -1, &merge);
    bson_append_array_begin(&merge, "$mergeObjects", -1, &merge_args);
    AppendText(&merge_args, "0", "$$ROOT");
    bson_append_document_begin(&merge_args, "1", -1, &changes);
    bson_append_document_begin(&changes, "version", -1, &max);
    bson_append_array_begin(&max, "$max", -1, &max_args);
    AppendText(&max_args, "0", "$version");
    AppendInt64(&max_args, "1", version);
    bson_append_array_end(&max, &max_args);
    bson_append_document_end(&changes, &max);
    bson_append_document_end(&merge_args, &changes);
    bson_append_array_end(&merge, &merge_args);
    bson_append_document_end(&cond, &merge);
    // Anything else the filter admitted becomes the owner's, confirmed at `version`.
    bson_append_document_begin(&cond, "else", -1, &fresh);
    AppendFresh(&fresh, *owner_doc);
    AppendNull(&fresh, "expires_at");
    bson_append_array_begin(&fresh, "holds", -1, &empty);
    bson_append_array_end(&fresh, &empty);
    AppendInt64(&fresh, "version", version);
    bson_append_document_end(&cond, &fresh);
    bson_append_document_end(&replace, &cond);
    bson_append_document_end(stage, &replace);
  });
  return command;
}

DeleteCommand ReleaseCommand(const ReservationScope& scope, const std::string& key,
                             const AggregateRef& owner, Version version, EpochMillis now) {
  DeleteCommand command{ReservationCollection(scope), KeyFilter(scope, key)};
  AppendDocument(command.filter.get(), "owner", *OwnerDoc(owner));
  if (version == kAnyVersion) return command;
  bson_t branches, expired, lte, confirmed, version_lte;
  bson_append_array_begin(command.filter.get(), "$or", -1, &branches);
  bson_append_document_begin(&branches, "0", -1, &expired);
  bson_append_document_begin(&expired, "expires_at", -1, &lte);
  AppendInt64(&lte, "$lte", now);
  bson_append_document_end(&expired, &lte);
  bson_append_document_end(&branches, &expired);
  bson_append_document_begin(&branches, "1", -1, &confirmed);
  AppendNull(&confirmed, "expires_at");
  bson_append_document_begin(&confirmed, "version", -1, &version_lte);
  AppendInt64(&version_lte, "$lte", version);
  bson_append_document_end(&confirmed, &version_lte);
  bson_append_document_end(&branches, &confirmed);
  bson_append_array_end(command.filter.get(), &branches);
  return command;
}

namespace {

// The filter of the owner's pending reservation: {..., owner: O, expires_at: {$ne: null}}.
Bson PendingOfOwnerFilter(const ReservationScope& scope, const std::string& key,
                          const AggregateRef& owner) {
  Bson filter = KeyFilter(scope, key);
  AppendDocument(filter.get(), "owner", *OwnerDoc(owner));
  bson_t ne;
  bson_append_document_begin(filter.get(), "expires_at", -1, &ne);
  AppendNull(&ne, "$ne");
  bson_append_document_end(filter.get(), &ne);
  return filter;
}

}  // namespace

UpdateCommand AbandonPullCommand(const ReservationScope& scope, const std::string& key,
                                 const AggregateRef& owner, const std::string& hold) {
  RequireStorableText(hold, "reservation hold");
  UpdateCommand command{ReservationCollection(scope), PendingOfOwnerFilter(scope, key, owner),
                        NewBson(), false, false};
  AppendText(command.filter.get(), "holds", hold);
  bson_t pull;
  bson_append_document_begin(command.update.get(), "$pull", -1, &pull);
  AppendText(&pull, "holds", hold);
  bson_append_document_end(command.update.get(), &pull);
  return command;
}

DeleteCommand AbandonDeleteCommand(const ReservationScope& scope, const std::string& key,
                                   const AggregateRef& owner) {
  DeleteCommand command{ReservationCollection(scope), PendingOfOwnerFilter(scope, key, owner)};
  bson_t size;
  bson_append_document_begin(command.filter.get(), "holds", -1, &size);
  BSON_APPEND_INT32(&size, "$size", 0);
  bson_append_document_end(command.filter.get(), &size);
  return command;
}

FindCommand FindReservationCommand(const ReservationScope& scope, const std::string& key) {
  RequireStorableText(scope.tenant_id, "reservation tenant");
  RequireStorableText(scope.ns, "reservation namespace");
  RequireStorableText(key, "reservation key");
  FindCommand command{ReservationCollection(scope), NewBson(), nullptr, 1, nullptr};
  AppendKeyId(command.filter.get(), "_id", scope, key);
  return command;
}

FindCommand ListReservationsCommand(const ReservationScope& scope, const std::string& after_key,
                                    int limit) {
  RequireStorableText(scope.tenant_id, "reservation tenant");
  RequireStorableText(scope.ns, "reservation namespace");
  RequireStorableText(after_key, "reservation key");
  FindCommand command{ReservationCollection(scope), NewBson(), BsonFromJson(R"({"_id": 1})"),
                      limit, nullptr};
  bson_t gt;
  bson_append_document_begin(command.filter.get(), "_id", -1, &gt);
  AppendKeyId(&gt, "$gt", scope, after_key);
  bson_append_document_end(command.filter.get(), &gt);
  AppendText(command.filter.get(), "_id.t", scope.tenant_id);
  AppendText(command.filter.get(), "_id.n", scope.ns);
  return command;
}

Reservation ParseReservation(const ReservationScope& scope, const bson_t& doc) {
  const auto corrupt = [&](const char* why) {
    return Error(ErrorCode::kDataLoss,
                 "MongoDB: collection " + ReservationCollection(scope) + " holds a document " +
                     why + ", not of reservation format " + std::to_string(kReservationFormat) +
                     ": " + ToJson(doc).substr(0, 300) +
                     "; restore it from a backup or delete the document");
  };
  Reservation r;
  const auto key = FindText(doc, "_id.k");
  const auto owner_tenant = FindText(doc, "owner.tenant_id");
  const auto owner_id = FindText(doc, "owner.id");
  if (!key || !owner_tenant || !owner_id) throw corrupt("without a key or an owner");
  r.key = std::string(*key);
  r.owner = {scope.context, scope.aggregate, std::string(*owner_tenant), std::string(*owner_id)};
  if (HoldsNull(doc, "expires_at")) {
    r.state = ReservationState::kConfirmed;
    const auto version = FindInteger(doc, "version");
    if (!version) throw corrupt("confirmed without a version");
    r.version = *version;
    return r;
  }
  const auto expires_at = FindInteger(doc, "expires_at");
  bson_t holds;
  if (!expires_at || !FindDocument(doc, "holds", &holds)) {
    throw corrupt("pending without an expiry or holds");
  }
  r.state = ReservationState::kPending;
  r.expires_at = *expires_at;
  bson_iter_t it;
  if (bson_iter_init(&it, &holds)) {
    while (bson_iter_next(&it)) {
      if (!BSON_ITER_HOLDS_UTF8(&it)) throw corrupt("with a hold that is not text");
      std::uint32_t length = 0;
      const char* hold = bson_iter_utf8(&it, &length);
      r.holds.emplace(hold, length);
    }
  }
  return r;
}

}  // namespace wow::mongo
