// The MongoDB log's commands, as pure functions (inputs in, BSON out), and the parsers of what it
// stores (seed 002; the algorithm is store/mongo/log/multi_node_log.h).
//
// Layout:
//   wow_log__<context>__<aggregate>, one per aggregate type; one document per sequence:
//     an entry        {partition, sequence, kind: "entry", tenant_id, id, version, request_id,
//                      time, events: [{type, payload}], facts: {reserved, released, timers},
//                      transport: binary}
//     the payloads and the facts exact BSON (exact_bson.h); a fact's names as in stream_json.h
//     a placeholder   {partition, sequence, kind: "own" | "seal"}
//   unique keys: "position" {partition, sequence}; "version" {partition, tenant_id, id, version}
//   and "request" {tenant_id, request_id} ({partition, tenant_id, request_id} on a sharded
//   cluster), both partial on {kind: "entry"} so placeholders skip them.
//   wow_log_counters__<context>, one document per partition:
//     {_id: partition, next, blocks: [{node, first, last, sealing}], parent: null, epoch: 0,
//      lease: {node, expires_at}}
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/mongo/bson_doc.h"
#include "store/mongo/executor.h"
#include "store/mongo/log/log_layer.h"

namespace wow::mongo {

inline constexpr int kLogFormat = 2;  // 1: the stream as one binary field

std::string LogCollectionName(const std::string& context, const std::string& aggregate);
std::string CountersCollectionName(const std::string& context);

// The stored document of `doc`. Throws Error(kInvalidArgument) for text MongoDB cannot store and
// for a payload it cannot store exactly (exact_bson.h).
Bson LogDocument(const mongo_log::LogDoc& doc);
// Why MongoDB cannot store `stream`'s document (the refusal LogDocument would throw), or nullopt.
std::optional<std::string> UnstorableStreamReason(const Stream& stream);
// The LogDoc `doc` stores (entries with their stream and transport). Throws Error(kDataLoss)
// naming `collection` for a document not of the layout.
mongo_log::LogDoc ParseLogDocument(const bson_t& doc, const std::string& collection);

// createIndexes of an aggregate collection's three unique keys. The version key starts with the
// partition (a function of the aggregate, so its meaning stays); on a sharded cluster (`sharded`),
// whose unique keys must start with the shard key {partition: 1}, the request key does too, and
// a request id is then unique per partition, not per aggregate type.
Bson LogIndexesCommand(const std::string& collection, bool sharded);
// The insert-once upsert of `partition`'s counter.
UpdateCommand CounterUpsert(const std::string& context, int partition);
// The pipeline update that reserves `size` sequences for `node` and removes the blocks starting at
// `finished`: the new block starts at the pre-image's `next` (findAndModify returns the document
// before it).
Bson ReserveBlockPipeline(const std::string& node, Sequence size,
                          const std::vector<Sequence>& finished);
// The pipeline update that marks the open block starting at `first` sealing.
Bson MarkSealingPipeline(Sequence first);
// The update that removes the block starting at `first`.
Bson RemoveBlockUpdate(Sequence first);
// The counter `doc` stores. Throws Error(kDataLoss) for a document not of the layout.
mongo_log::Counter ParseCounter(const bson_t& doc);

// The tail's aggregation on the counters collection: the partition's counter, then through
// $unionWith each collection's first `limit` documents after `after` by sequence, each tagged
// with its collection's index in `collections` (field "_c").
Bson TailPipeline(int partition, Sequence after, const std::vector<std::string>& collections,
                  int limit);

// The entry of (tenant, id) at `version`; the entry of (tenant, request_id) without its
// transport: lookups by the version and request keys, entries only.
FindCommand VersionQuery(const std::string& collection, int partition, const std::string& tenant_id,
                         const std::string& id, Version version);
FindCommand RequestQuery(const std::string& collection, const std::string& tenant_id,
                         const std::string& request_id);

// The aggregation, run on collections[0], whose one document holds the highest sequence of an
// entry of `partition` in `collections` (none when they hold none): each collection's highest
// entry by the position key, through $unionWith, then the highest of them. `collections` is not
// empty.
Bson HeadPipeline(int partition, const std::vector<std::string>& collections);

// The lease of `partition` taken for `node` until `expires_at`: one update of its counter that
// matches only while the lease is the node's, expired at `now`, or missing.
UpdateCommand LeaseTakeCommand(const std::string& context, int partition, const std::string& node,
                               EpochMillis now, EpochMillis expires_at);
// The lease of `partition` given up by `node`: its expiry moved down to `now`, kept as stored.
UpdateCommand LeaseReleaseCommand(const std::string& context, int partition,
                                  const std::string& node, EpochMillis now);

// wow_log_checkpoints__<context>: {_id: {p, s: subscription}, sequence}.
std::string CheckpointsCollectionName(const std::string& context);
FindCommand CheckpointQuery(const std::string& context, int partition,
                            const std::string& subscription);
// The checkpoint moved up to `sequence` ($max, upserted): it never moves back.
UpdateCommand CheckpointCommitCommand(const std::string& context, int partition,
                                      const std::string& subscription, Sequence sequence);
// Every checkpoint of `subscription` deleted (a deleteMany), for a read model's rebuild: the one
// way a checkpoint moves back.
DeleteCommand CheckpointsDropCommand(const std::string& context, const std::string& subscription);

// The outcome of one element of an insert's writeErrors: a taken position, version or request
// (11000, told apart by its keyPattern), a document the server refuses (too large, not storable),
// or nullopt for any other failure.
std::optional<mongo_log::WriteStatus> StatusOfWriteError(const bson_t& write_error);

}  // namespace wow::mongo
