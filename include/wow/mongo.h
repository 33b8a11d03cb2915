// The MongoDB backend, for services that outgrow one machine: the stores of a context on a MongoDB
// replica set or sharded cluster, through one client pool (libmongoc).
//
// OpenMongoDeployment opens the pool and checks the deployment; the factories below build stores
// on it. Every operation pops a client from the pool and returns it when done, so the stores are
// safe to share between threads. Reads are `readConcern: majority` and writes `w: majority`, so a
// reader never sees a write that a failover could roll back; that needs a replica set (or a
// mongos in front of replica-set shards): a standalone server is refused when opened.
//
// Layout (docs/MONGODB.md): a collection per aggregate type per store, named
// "wow_reservation__<context>__<aggregate>" (and the log's and timers' alike; the read models'
// one per context, "wow_read_model__<context>"), created on first use with a format record in the
// collection "wow_collections"; a collection of another format is refused. Collection names come
// only from validated type names (ValidateTypeName).
//
// Errors: failures throw wow::Error, with the code of the failure and a message saying what failed
// and MongoDB's (or libmongoc's) code and text:
//   kUnavailable        the deployment cannot be reached, no primary, the pool had no free
//                       connection within wait_queue_timeout, a timeout, a network error; and a
//                       write whose outcome is unknown (cut off after it was sent, or not
//                       acknowledged by a majority): the message says so. Reservation operations
//                       are idempotent: repeating the call is safe.
//   kPermissionDenied   authentication failed, or the user may not do the operation
//   kFailedPrecondition a standalone server; a collection of another format; with Ddl::kNone, a
//                       collection or format record that is missing
//   kInvalidArgument    bad input, and text MongoDB cannot store (not UTF-8, or with a NUL byte)
//   kDataLoss           a stored document that is not of the layout its format record says
//   kInternal           a reply this build does not understand (a bug; report it)
//
// Thread-safety: MongoDeployment and every store built on it are safe for concurrent use. Do not
// carry an open MongoDeployment across fork(): open it in the child.
#pragma once

#include <memory>
#include <string>

#include "wow/event_log.h"
#include "wow/model.h"
#include "wow/mongo_options.h"
#include "wow/read_model.h"
#include "wow/reservation_store.h"
#include "wow/timer_store.h"

namespace wow {

// An open MongoDB deployment: a client pool and what the deployment said of itself. Opaque;
// shared by the stores built on it, closed when the last of them goes.
class MongoDeployment;

// What a deployment said of itself when it was opened.
struct MongoDeploymentInfo {
  std::string database;  // where the stores' collections live
  std::string set_name;  // the replica set's name; empty behind a mongos
  bool mongos = false;   // a sharded cluster's router
};

// Opens a client pool on `uri` (mongodb:// or mongodb+srv://, libmongoc's options in its query)
// and asks the deployment what it is. Throws Error(kInvalidArgument) for a malformed URI or
// options, Error(kUnavailable) when no server answers within the URI's serverSelectionTimeoutMS
// (30 s by default), Error(kFailedPrecondition) for a standalone server (majority reads and
// writes need a replica set).
std::shared_ptr<MongoDeployment> OpenMongoDeployment(const std::string& uri,
                                                     const MongoOptions& options = {});

// What `deployment` said of itself when opened.
const MongoDeploymentInfo& Describe(const MongoDeployment& deployment);

// The reservations of every aggregate type on `deployment` (seed 000): a collection per aggregate
// type, a document per key, each operation one conditional write (an abandon two). Expiry is
// judged by `clock`. Keys, namespaces, tenants, ids and holds must be UTF-8 without NUL bytes
// (Error(kInvalidArgument) otherwise).
std::unique_ptr<ReservationStore> NewMongoReservationStore(
    std::shared_ptr<MongoDeployment> deployment, std::shared_ptr<const Clock> clock);

// The event log of `context` on `deployment` (seed 002): a collection per aggregate type, a
// counter per partition, appends without transactions that several processes (nodes) may make
// at once, and a tail that never steps over a sequence where a stream may still land
// (docs/MONGODB.md). `clock` judges leases and times stalls. Tenants, ids and request ids must
// be UTF-8 without NUL bytes (a stream with one is refused). Throws Error(kInvalidArgument) for
// a malformed context or options.
std::unique_ptr<EventLog> NewMongoEventLog(std::shared_ptr<MongoDeployment> deployment,
                                           std::string context,
                                           std::shared_ptr<const Clock> clock,
                                           MongoLogOptions options = {});

// The timers of `context`, whose log has `partitions` partitions, on `deployment` (seed 003): a
// collection per owner aggregate type, a document per timer, each write one conditional
// single-document operation (CancelAll one deleteMany, Settle one unordered bulk write per
// collection), the due and parked reads one aggregation over the registry. Keys, ids and bodies
// must be UTF-8 without NUL bytes (Error(kInvalidArgument) otherwise). Settle throws Error when
// a bulk write fails; the changes it applied before stay applied (each applies at most once, on
// the timer as it was loaded), so the caller reloads the timers and decides again. Opening it
// reads the registry, and drops the context's timer collections of an earlier format with its
// wow.timers checkpoints (kTimerSubscriptionName: the timer subscription, started after, puts
// them again from the log), waiting for another node that drops them at most 60 s. Throws
// Error(kInvalidArgument) for a malformed context or partition count, and the deployment's
// Error (kUnavailable: unreachable, or another node's drop lasting longer) when that read fails.
std::unique_ptr<TimerStore> NewMongoTimerStore(std::shared_ptr<MongoDeployment> deployment,
                                               std::string context, int partitions);

// The read models of `context` on `deployment`: one collection (wow_read_model__<context>), a
// document per row. Not transactional (wow/read_model.h): an Apply's puts go as one unordered bulk
// write of conditional upserts (only a later version replaces a row) and the log's checkpoint is
// committed after them, so an entry may be applied again after a crash: handlers must be
// idempotent. Apply throws Error when the write fails; the puts it applied stay applied, and the
// entry is applied again. Drop deletes the subscription's checkpoints, then the tables' rows (not
// atomically: see docs/MONGODB.md). Ids, keys and bodies must be UTF-8 without NUL bytes, a row at
// most 16 MiB (Error(kInvalidArgument) otherwise). Throws Error(kInvalidArgument) for a malformed
// context.
std::unique_ptr<ReadModelStore> NewMongoReadModelStore(std::shared_ptr<MongoDeployment> deployment,
                                                       std::string context);

}  // namespace wow
