// The thin layer that sends the stores' commands (built by the pure functions of *_commands.h) to
// MongoDB: each call pops a client, sends one command with `w: majority` (writes) or
// `readConcern: majority` (reads) and maxTimeMS, and maps a failure once (mongo_error.h). A
// duplicate key is an outcome, returned; every other failure throws wow::Error.
//
// Thread-safety: safe for concurrent use; each call uses its own client from the pool.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/mongo/bson_doc.h"
#include "store/mongo/client_pool.h"
#include "store/mongo/mongo_error.h"
#include "wow/mongo_options.h"

namespace wow::mongo {

// One updateOne: `update` a document (operators) or a pipeline (an array document).
struct UpdateCommand {
  std::string collection;
  Bson filter;
  Bson update;
  bool upsert = false;
  bool pipeline = false;  // `update` is an aggregation pipeline
};

// One deleteOne, or a deleteMany when `many`.
struct DeleteCommand {
  std::string collection;
  Bson filter;
  bool many = false;
};

// One operation of a bulk write: an updateOne with `update` (operators), inserting when nothing
// matches if `upsert`, or a deleteOne when `update` is null.
struct BulkOperation {
  Bson filter;
  Bson update;
  bool upsert = false;
};

// One find: the documents matching `filter`, in `sort` order (null: natural), at most `limit`
// (0: all), with the fields `projection` keeps (null: all).
struct FindCommand {
  std::string collection;
  Bson filter;
  Bson sort;
  std::int64_t limit = 0;
  Bson projection;
};

// What a write did; `duplicate` is set (and the counts zero) when a unique index refused it.
struct WriteOutcome {
  std::int64_t matched = 0;
  std::int64_t modified = 0;
  std::int64_t deleted = 0;
  bool upserted = false;
  std::optional<MongoFailure> duplicate;
};

// What an insertMany did: the elements of the reply's writeErrors (each with its "index"), and
// how many documents went in. A failure that leaves the outcome unknown is thrown, not returned.
struct InsertOutcome {
  std::vector<Bson> write_errors;
  std::int64_t inserted = 0;
};

// What a bulk write did: the documents its updates matched and its deletes removed, and the
// elements of the reply's writeErrors (each with the "index" of its operation).
struct BulkOutcome {
  std::int64_t matched = 0;
  std::int64_t deleted = 0;
  std::vector<Bson> write_errors;
};

// A document lent to a callback for the length of its call. (std::function cannot take a bson_t
// itself: its alignment attribute is dropped on a template argument.)
struct BorrowedBson {
  const bson_t& doc;
};

class Executor {
 public:
  Executor(std::shared_ptr<ClientPool> pool, std::string database, const MongoOptions& options);

  const std::string& database() const { return database_; }

  // Sends the write; `what` names it in an Error ("reserving key k in C"). Throws Error for any
  // failure but a duplicate key.
  WriteOutcome Update(const UpdateCommand& command, std::string_view what) const;
  WriteOutcome Delete(const DeleteCommand& command, std::string_view what) const;

  // The matching documents (copies). Throws Error on failure.
  std::vector<Bson> Find(const FindCommand& command, std::string_view what) const;

  // Hands the matching documents to `each` one at a time, read batch by batch from the server
  // (never all held at once), until `each` returns false; a document is valid only during its
  // call. Throws Error when the read fails (what `each` throws passes through).
  void Scan(const FindCommand& command, const std::function<bool(BorrowedBson)>& each,
            std::string_view what) const;

  // Inserts `documents` into `collection` (ordered: stopping at the first that fails). The
  // documents a unique index or the server refused are in writeErrors; throws Error for anything
  // else, a write-concern error included (kUnavailable: they may be in).
  InsertOutcome InsertMany(const std::string& collection, const std::vector<Bson>& documents,
                           bool ordered, std::string_view what) const;

  // Sends `operations` on `collection` as one bulk write (unordered: each applies or fails alone).
  // The operations the server refused are in writeErrors; throws Error for anything else, a
  // write-concern error included (kUnavailable: they may have applied).
  BulkOutcome BulkWrite(const std::string& collection, const std::vector<BulkOperation>& operations,
                        std::string_view what) const;

  // findAndModify of the one document `filter` matches with `update` (a pipeline when
  // `pipeline`): the document before the update, or nullopt when none matched. Throws Error.
  std::optional<Bson> FindAndModify(const std::string& collection, const bson_t& filter,
                                    const bson_t& update, std::string_view what) const;

  // The documents `pipeline` yields on `collection` (copies). Throws Error.
  std::vector<Bson> Aggregate(const std::string& collection, const bson_t& pipeline,
                              std::string_view what) const;

  // Runs `command` on `database` ("" : this executor's) as a write (with the write concern) or a
  // read: the server's reply, and the failure classified when it failed (never thrown).
  struct CommandOutcome {
    Bson reply;
    std::optional<MongoFailure> failure;
  };
  CommandOutcome TryCommand(const bson_t& command, bool write,
                            const std::string& database = "") const;

  // TryCommand, throwing Error (naming `what`) for any failure.
  Bson RunCommand(const bson_t& command, bool write, std::string_view what,
                  const std::string& database = "") const;

  // Runs `command` on the admin database without concerns (hello, shardCollection); the reply.
  Bson RunAdminCommand(const bson_t& command, std::string_view what) const;

 private:
  // The options of every write (w: majority, wtimeout, maxTimeMS) and read (readConcern: majority,
  // maxTimeMS).
  Bson WriteOptions() const;
  Bson ReadOptions() const;
  // ReadOptions with a find's sort, limit and projection.
  Bson FindOptions(const FindCommand& command) const;

  std::shared_ptr<ClientPool> pool_;
  std::string database_;
  MongoOptions options_;
};

}  // namespace wow::mongo
