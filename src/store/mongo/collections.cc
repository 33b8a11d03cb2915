#include "store/mongo/collections.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "wow/error.h"

namespace wow::mongo {
namespace {

constexpr std::uint32_t kNamespaceExists = 48;
constexpr std::uint32_t kAlreadyInitialized = 23;  // shardCollection of a sharded collection

}  // namespace

FindCommand FormatRecordQuery(const std::string& name) {
  FindCommand command{kCollectionsRegistry, NewBson(), nullptr, 1, nullptr};
  AppendText(command.filter.get(), "_id", name);
  return command;
}

UpdateCommand FormatRecordUpsert(const CollectionSpec& spec) {
  UpdateCommand command{kCollectionsRegistry, NewBson(), NewBson(), true, false};
  AppendText(command.filter.get(), "_id", spec.name);
  bson_t set;
  bson_append_document_begin(command.update.get(), "$setOnInsert", -1, &set);
  AppendText(&set, "kind", spec.kind);
  AppendText(&set, "context", spec.context);
  AppendText(&set, "aggregate", spec.aggregate);
  AppendInt64(&set, "format", spec.format);
  bson_append_document_end(command.update.get(), &set);
  return command;
}

Bson CreateCollectionCommand(const std::string& name) {
  Bson command = NewBson();
  AppendText(command.get(), "create", name);
  return command;
}

Bson ShardCollectionCommand(const std::string& database, const CollectionSpec& spec) {
  Bson command = NewBson();
  AppendText(command.get(), "shardCollection", database + "." + spec.name);
  AppendDocument(command.get(), "key", *spec.shard_key);
  return command;
}

Bson SplitChunkCommand(const std::string& database, const std::string& collection, int partition) {
  Bson command = NewBson();
  AppendText(command.get(), "split", database + "." + collection);
  bson_t middle;
  bson_append_document_begin(command.get(), "middle", -1, &middle);
  AppendInt64(&middle, "partition", partition);
  bson_append_document_end(command.get(), &middle);
  return command;
}

Bson ListShardsCommand() { return BsonFromJson(R"({"listShards": 1})"); }

Bson MoveChunkCommand(const std::string& database, const std::string& collection, int partition,
                      const std::string& shard) {
  Bson command = NewBson();
  AppendText(command.get(), "moveChunk", database + "." + collection);
  bson_t find;
  bson_append_document_begin(command.get(), "find", -1, &find);
  AppendInt64(&find, "partition", partition);
  bson_append_document_end(command.get(), &find);
  AppendText(command.get(), "to", shard);
  return command;
}

std::vector<std::string> ShardsOfPartitions(const std::vector<std::string>& shards,
                                            int partitions) {
  std::vector<std::string> placed;
  if (shards.empty()) return placed;
  for (int p = 0; p < partitions; ++p) placed.push_back(shards[p % shards.size()]);
  return placed;
}

std::optional<std::pair<std::string, std::string>> ContextAndAggregateOf(std::string_view name,
                                                                         std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  const std::string_view rest = name.substr(prefix.size());
  const std::size_t split = rest.find("__");
  if (split == std::string_view::npos || split == 0 || split + 2 == rest.size()) {
    return std::nullopt;
  }
  return std::pair{std::string(rest.substr(0, split)), std::string(rest.substr(split + 2))};
}

FindCommand RegistryQuery(const std::string& kind, const std::string& context) {
  FindCommand query;
  query.collection = kCollectionsRegistry;
  query.filter = NewBson();
  AppendText(query.filter.get(), "kind", kind);
  AppendText(query.filter.get(), "context", context);
  query.projection = BsonFromJson(R"({"_id": 1, "format": 1})");
  return query;
}

std::vector<std::string> Collections::Registered(const std::string& kind,
                                                 const std::string& context, int format) const {
  std::vector<std::string> names;
  for (const Bson& record :
       executor_.Find(RegistryQuery(kind, context), "reading the " + kind + " registry")) {
    const auto name = FindText(*record, "_id");
    if (!name) continue;
    const auto recorded = FindInteger(*record, "format");
    if (recorded != format) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "MongoDB: collection " + std::string(*name) + " is recorded in " + kind +
                      " format " + (recorded ? std::to_string(*recorded) : "(none)") +
                      "; this build reads format " + std::to_string(format) +
                      " only; nothing was read");
    }
    names.emplace_back(*name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

int Collections::RecordedFormat(const CollectionSpec& spec) {
  const std::string& name = spec.name;
  std::vector<Bson> records =
      executor_.Find(FormatRecordQuery(name), "reading the format record of " + name);
  if (records.empty()) return -1;
  const bson_t& record = *records.front();
  const auto format = FindInteger(record, "format");
  if (!format) {
    throw Error(ErrorCode::kDataLoss, "MongoDB: the format record of " + name + " in " +
                                          kCollectionsRegistry +
                                          " has no format: " + ToJson(record));
  }
  // A name is one (kind, context, aggregate): a record of another is a collection this store
  // must not write.
  const auto kind = FindText(record, "kind");
  const auto context = FindText(record, "context");
  const auto aggregate = FindText(record, "aggregate");
  if (kind != spec.kind || context != spec.context || aggregate != spec.aggregate) {
    throw Error(ErrorCode::kFailedPrecondition,
                "MongoDB: collection " + name + " is recorded in " + kCollectionsRegistry +
                    " for another store: " + ToJson(record) + ", not the " + spec.kind +
                    " of aggregate \"" + spec.aggregate + "\" of context \"" + spec.context +
                    "\"; nothing was changed");
  }
  return static_cast<int>(*format);
}

void Collections::Create(const CollectionSpec& spec) {
  const std::string what = "creating collection " + spec.name;
  Executor::CommandOutcome created =
      executor_.TryCommand(*CreateCollectionCommand(spec.name), true);
  if (created.failure && created.failure->code != kNamespaceExists) {
    throw ToError(*created.failure, what);
  }
  if (shard_ && spec.shard_key) {
    Executor::CommandOutcome sharded =
        executor_.TryCommand(*ShardCollectionCommand(executor_.database(), spec), true, "admin");
    if (sharded.failure && sharded.failure->code != kAlreadyInitialized) {
      throw ToError(*sharded.failure, "sharding collection " + spec.name);
    }
    if (!sharded.failure) SpreadChunks(spec);  // the node that sharded it
  }
  // An upsert on the _id alone: of two nodes recording at once, the server retries the loser as
  // an update, which $setOnInsert leaves as the winner wrote it. The caller reads it back.
  executor_.Update(FormatRecordUpsert(spec), what);
}

void Collections::SpreadChunks(const CollectionSpec& spec) {
  if (spec.partitions < 2) return;
  const std::string& database = executor_.database();
  try {
    for (int p = 1; p < spec.partitions; ++p) {
      executor_.RunAdminCommand(*SplitChunkCommand(database, spec.name, p),
                                "splitting " + spec.name + " at partition " + std::to_string(p));
    }
    const Bson listed = executor_.RunAdminCommand(*ListShardsCommand(), "listing the shards");
    std::vector<std::string> shards;
    bson_t list;
    bson_iter_t it;
    if (FindDocument(*listed, "shards", &list) && bson_iter_init(&it, &list)) {
      while (bson_iter_next(&it)) {
        bson_iter_t shard;
        if (BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &shard) &&
            bson_iter_find(&shard, "_id") && BSON_ITER_HOLDS_UTF8(&shard)) {
          shards.emplace_back(bson_iter_utf8(&shard, nullptr));
        }
      }
    }
    const std::vector<std::string> placed = ShardsOfPartitions(shards, spec.partitions);
    for (int p = 0; p < static_cast<int>(placed.size()); ++p) {
      executor_.RunAdminCommand(
          *MoveChunkCommand(database, spec.name, p, placed[static_cast<std::size_t>(p)]),
          "moving the chunk of partition " + std::to_string(p) + " of " + spec.name);
    }
  } catch (const Error& e) {
    spdlog::warn("{}; the chunks are left to the balancer", e.what());
  }
}

void Collections::Ensure(const CollectionSpec& spec) {
  {
    std::lock_guard lock(mutex_);
    if (known_.contains(spec.name)) return;
  }
  int format = RecordedFormat(spec);
  if (format < 0) {
    if (ddl_ == MongoOptions::Ddl::kNone) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "MongoDB: collection " + spec.name + " has no format record in " +
                      kCollectionsRegistry +
                      " and the stores were opened with Ddl::kNone; "
                      "create it (open once with Ddl::kAuto) or check the database name");
    }
    Create(spec);
    format = RecordedFormat(spec);
  }
  if (format != spec.format) {
    throw Error(ErrorCode::kFailedPrecondition,
                "MongoDB: collection " + spec.name + " is in " + spec.kind + " format " +
                    std::to_string(format) + "; this build reads format " +
                    std::to_string(spec.format) + " only; nothing was changed");
  }
  std::lock_guard lock(mutex_);
  known_.insert(spec.name);
}

void Collections::Forget(const std::string& name) {
  std::lock_guard lock(mutex_);
  known_.erase(name);
}

}  // namespace wow::mongo
