// The MongoDB timer store's commands, as pure functions (inputs in, BSON out), and the parser of
// what it stores (seed 003).
//
// Layout (format 5):
//   wow_timer__<context>__<aggregate>, one per owner aggregate type; one document per timer:
//     {partition, owner: {tenant_id, id}, key, timer_id, version, due_at,
//      target: {context, aggregate, tenant_id, id}, command_type, body: the command's JSON text,
//      rule: {type, max_attempts, backoff_ms, max_backoff_ms}, state, attempt, parked_version,
//      due: true}
//   `parked_version` (the target's version that refused a PARKED timer, else 0) reads as 0 when
//   missing: a document written before it was kept is of the same format.
//   `due` is there while the timer is PENDING or FIRING and gone when PARKED: the due index's
//   partial filter, since `$in` is not allowed in a partial filter before MongoDB 6.0.
//   indexes: "owner_key" unique {partition, owner.tenant_id, owner.id, key} (the shard key
//   first); "due" {partition, due_at, timer_id} partial on {due: true}; "parked"
//   {target.context, target.aggregate, target.tenant_id, target.id} partial on
//   {state: "PARKED"}.
//   Every filter by owner carries the owner's partition, so on a sharded cluster it reaches the
//   partition's shard alone.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "store/mongo/bson_doc.h"
#include "store/mongo/executor.h"
#include "wow/timer_store.h"

namespace wow::mongo {

inline constexpr int kTimerFormat = 5;

std::string TimerCollectionName(const std::string& context, const std::string& aggregate);
// {partition: 1}.
Bson TimerShardKey();
// createIndexes of a timer collection's three indexes.
Bson TimerIndexesCommand(const std::string& collection);

// Put's conditional upsert: it matches the stored timer of the owner and key only when its
// version is earlier, or equal with another timer_id, and sets every field; with no stored
// timer it inserts. A stored timer it does not match makes the upsert meet the owner_key index
// (a duplicate key): the store then reads it. Throws Error(kInvalidArgument) for text MongoDB
// cannot store.
UpdateCommand PutTimerCommand(const Timer& timer);
// Deletes owner's timer `key` when its version is not later than `version`.
DeleteCommand CancelTimerCommand(const AggregateRef& owner, int partition, const std::string& key,
                                 Version version);
// Deletes every timer of `owner` whose version is not later than `version` (a deleteMany).
DeleteCommand CancelAllTimersCommand(const AggregateRef& owner, int partition, Version version);
// Owner's timer `key`.
FindCommand FindTimerCommand(const AggregateRef& owner, int partition, const std::string& key);

// Rebuilding the timers of an earlier format (the timers are a view of the log): the registry
// records of `context`'s timer collections of a format before kTimerFormat, each with the
// "rebuild_since" of a node rebuilding it.
FindCommand EarlierTimerFormatsQuery(const std::string& context);
// Claims the rebuild of `collection` (recorded in an earlier format) at `now`: it matches the
// record unless another node claimed it less than `claim_ms` before.
UpdateCommand ClaimTimerRebuildCommand(const std::string& collection, EpochMillis now,
                                       std::int64_t claim_ms);
// {drop: collection}.
Bson DropCollectionCommand(const std::string& collection);
// Deletes the record of `collection` while it is of an earlier format.
DeleteCommand EarlierTimerFormatRecordDelete(const std::string& collection);

// The due read, an aggregation on the registry (wow_collections): the count of `context`'s
// timer collections ({collections: n}, none when n is 0), then through $unionWith each of
// `collections`' first `limit` due timers of `partitions` with due_at <= until, by (due_at,
// timer_id) over the due index, each tagged with its collection's index (field "_c").
Bson DuePipeline(const std::string& context, const std::vector<std::string>& collections,
                 const std::set<int>& partitions, EpochMillis until, int limit);
// The parked read, alike: the count, then each collection's PARKED timers whose target is
// `target`.
Bson ParkedPipeline(const std::string& context, const std::vector<std::string>& collections,
                    const AggregateRef& target);

// A settle change as one operation of its collection's bulk write: an update (a delete for
// kDone) whose filter is the timer as it was loaded.
BulkOperation SettleOperation(const TimerChange& change);

// The timer `doc` of `collection` stores. Throws Error(kDataLoss) naming the collection for a
// document not of the layout.
Timer ParseTimer(const bson_t& doc, const std::string& collection);

}  // namespace wow::mongo
