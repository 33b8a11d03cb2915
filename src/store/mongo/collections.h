// The stores' collections and their format records. Every collection a store writes is recorded
// in "wow_collections" as {_id: name, kind, context, aggregate, format} before its first document,
// so a build that reads another format refuses it instead of misreading it. With Ddl::kAuto a
// missing collection is created (and, on a mongos with Sharding::kAuto, sharded by its layout's
// key) on first use; with Ddl::kNone it must exist with its record.
//
// Thread-safety: Collections is safe for concurrent use; the builders are pure functions.
#pragma once

#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <set>
#include <string>
#include <vector>

#include "store/mongo/bson_doc.h"
#include "store/mongo/executor.h"
#include "wow/mongo_options.h"

namespace wow::mongo {

inline constexpr const char* kCollectionsRegistry = "wow_collections";

struct CollectionSpec {
  std::string name;  // "wow_reservation__<context>__<aggregate>"
  std::string kind;  // "reservation", "log", "timer"
  std::string context;
  std::string aggregate;
  int format = 0;
  Bson shard_key;  // the shard key on a sharded cluster; null: never sharded
  // A collection sharded by {partition: 1}: the partition count, for one chunk per partition
  // spread over the shards when it is created; 0: the chunks are left to the cluster.
  int partitions = 0;
};

// The command builders (pure): the record's lookup, its insert-once upsert ($setOnInsert, so two
// nodes creating one collection agree), `create`, and `shardCollection` (for the admin database).
FindCommand FormatRecordQuery(const std::string& name);
UpdateCommand FormatRecordUpsert(const CollectionSpec& spec);
Bson CreateCollectionCommand(const std::string& name);
Bson ShardCollectionCommand(const std::string& database, const CollectionSpec& spec);
// A new collection's chunks, one per partition (for the admin database): `split` at
// {partition: p}, `listShards`, and `moveChunk` of the chunk of {partition: p} to `shard`.
Bson SplitChunkCommand(const std::string& database, const std::string& collection, int partition);
Bson ListShardsCommand();
Bson MoveChunkCommand(const std::string& database, const std::string& collection, int partition,
                      const std::string& shard);
// The shard each partition's chunk goes to: shard p mod the count, in listShards' order.
std::vector<std::string> ShardsOfPartitions(const std::vector<std::string>& shards,
                                            int partitions);
// The context and the aggregate type a collection named `<prefix><context>__<aggregate>` is of
// (type names hold no '_', so the split is unambiguous); nullopt for a name not of that form.
std::optional<std::pair<std::string, std::string>> ContextAndAggregateOf(std::string_view name,
                                                                         std::string_view prefix);
// The records of `context`'s collections of `kind` (their _id, the collection's name, and their
// format): a store's registry, which the log's tail and the timers' due read go through.
FindCommand RegistryQuery(const std::string& kind, const std::string& context);

class Collections {
 public:
  // `shard`: collections are sharded when created (a mongos with Sharding::kAuto).
  Collections(const Executor& executor, MongoOptions::Ddl ddl, bool shard)
      : executor_(executor), ddl_(ddl), shard_(shard) {}

  // Makes sure `spec`'s collection is there in `spec.format`, once per process and name. Throws
  // Error(kFailedPrecondition) for a record of another format (naming both) or of another kind,
  // context or aggregate, and, with Ddl::kNone, a missing record; the executor's Error when
  // MongoDB fails.
  void Ensure(const CollectionSpec& spec);

  // Forgets that `name` was checked, so that the next Ensure of it checks (and creates) it again:
  // after it was dropped.
  void Forget(const std::string& name);

  // The names of `context`'s collections of `kind` recorded now, sorted. Throws
  // Error(kFailedPrecondition) when one is recorded in another format than `format` (this build
  // would misread it), and the executor's Error.
  std::vector<std::string> Registered(const std::string& kind, const std::string& context,
                                      int format) const;

  // Whether collections, records and indexes are made on first use (Ddl::kAuto), or only checked.
  MongoOptions::Ddl ddl() const { return ddl_; }

  // Whether new collections are sharded (a mongos with Sharding::kAuto).
  bool sharded() const { return shard_; }

 private:
  // The format recorded for `spec`'s name, or -1 when none is. Throws Error(kFailedPrecondition)
  // when the record is of another kind, context or aggregate.
  int RecordedFormat(const CollectionSpec& spec);
  void Create(const CollectionSpec& spec);
  // Splits a collection just sharded into one chunk per partition and moves chunk p to shard p
  // mod the shard count, while it is empty and the moves cost nothing. A command the cluster
  // refuses is logged and ends the spreading (the balancer spreads the chunks in its own time):
  // where chunks lie changes no outcome.
  void SpreadChunks(const CollectionSpec& spec);

  const Executor& executor_;
  const MongoOptions::Ddl ddl_;
  const bool shard_;
  std::mutex mutex_;
  std::set<std::string> known_;  // names checked in this process
};

}  // namespace wow::mongo
