// MongoOptions: how a MongoDB deployment is opened (wow/mongo.h). Apart from the backend so that a
// store set's options (wow/store_set.h) name it in every build, with MongoDB or without.
//
// Thread-safety: a plain value.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace wow {

struct MongoOptions {
  // The database the stores' collections live in. Empty: the URI's own database
  // (mongodb://host/DB), else "wow".
  std::string database;
  // Whether the stores create what they need (collections, their format records, and on a mongos
  // the sharding of each collection) on first use (kAuto), or only check that it exists (kNone:
  // for deployments whose collections an operator creates; a missing one is
  // Error(kFailedPrecondition) naming it).
  enum class Ddl { kAuto, kNone };
  Ddl ddl = Ddl::kAuto;
  // On a mongos with kAuto, each collection is sharded as its layout says on creation
  // (docs/MONGODB.md); kNone leaves every collection unsharded.
  enum class Sharding { kAuto, kNone };
  Sharding sharding = Sharding::kAuto;
  // How long a socket read or write may wait (socketTimeoutMS), unless the URI sets it. A write
  // cut off by it has an unknown outcome.
  std::chrono::milliseconds socket_timeout{10'000};
  // How long the server may spend on one command (maxTimeMS on every read and write).
  std::chrono::milliseconds max_time{5'000};
  // How long a write waits for a majority of the replica set to acknowledge it (wtimeout). A
  // write past it was applied on the primary and may or may not survive: an unknown outcome.
  std::chrono::milliseconds write_timeout{10'000};
  // How long an operation waits for a connection of the pool when all are in use
  // (waitQueueTimeoutMS), unless the URI sets it; then Error(kUnavailable).
  std::chrono::milliseconds wait_queue_timeout{5'000};
};

// How the MongoDB event log (NewMongoEventLog, wow/mongo.h) runs its multi-node algorithm
// (docs/MONGODB.md).
struct MongoLogOptions {
  // Sequences a node reserves at least per block on a partition's counter. A block's unused
  // sequences hold back every tail until this node uses them or another node seals them after
  // stall_grace; 1 (the default) reserves what each call needs.
  std::int64_t block_size = 1;
  // How long a tail waits at a missing sequence before it resolves it: closes this node's own
  // unused sequence, or seals another node's block. Longer than any append takes.
  std::chrono::milliseconds stall_grace{2'000};
};

}  // namespace wow
