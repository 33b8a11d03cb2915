#include "store/mongo/executor.h"

#include <mongoc/mongoc.h>

#include <functional>

#include "wow/error.h"

namespace wow::mongo {
namespace {

struct CollectionDeleter {
  void operator()(mongoc_collection_t* collection) const { mongoc_collection_destroy(collection); }
};
using Collection = std::unique_ptr<mongoc_collection_t, CollectionDeleter>;

struct CursorDeleter {
  void operator()(mongoc_cursor_t* cursor) const { mongoc_cursor_destroy(cursor); }
};
using Cursor = std::unique_ptr<mongoc_cursor_t, CursorDeleter>;

struct WriteConcernDeleter {
  void operator()(mongoc_write_concern_t* concern) const { mongoc_write_concern_destroy(concern); }
};
struct ReadConcernDeleter {
  void operator()(mongoc_read_concern_t* concern) const { mongoc_read_concern_destroy(concern); }
};

// Hands every document `cursor` yields to `each` in turn, until `each` returns false; throws
// Error naming `what` when the read fails.
void Drain(const Cursor& cursor, const std::function<bool(BorrowedBson)>& each,
           std::string_view what) {
  const bson_t* doc = nullptr;
  while (mongoc_cursor_next(cursor.get(), &doc)) {
    if (!each(BorrowedBson{*doc})) return;
  }
  bson_error_t error;
  const bson_t* reply = nullptr;
  if (mongoc_cursor_error_document(cursor.get(), &error, &reply)) {
    throw ToError(ClassifyMongoError(error.domain, error.code, error.message, reply, false), what);
  }
}

// Every document `cursor` yields (copies); throws Error naming `what` when the read fails.
std::vector<Bson> Drain(const Cursor& cursor, std::string_view what) {
  std::vector<Bson> documents;
  Drain(
      cursor,
      [&](BorrowedBson borrowed) {
        documents.push_back(CopyBson(borrowed.doc));
        return true;
      },
      what);
  return documents;
}

struct BsonFreeDeleter {
  void operator()(void* memory) const { bson_free(memory); }
};

struct BulkDeleter {
  void operator()(mongoc_bulk_operation_t* bulk) const { mongoc_bulk_operation_destroy(bulk); }
};

// The writeErrors of a failed write's `reply`, when they are all that failed; throws Error naming
// `what` for any other failure (a network error, a write-concern error: the outcome is unknown).
std::vector<Bson> WriteErrorsOnly(const bson_error_t& error, const Bson& reply,
                                  std::string_view what) {
  bson_t errors;
  bson_t concern_errors;
  const bool has_concern_errors =
      FindDocument(*reply, "writeConcernErrors", &concern_errors) && !bson_empty(&concern_errors);
  if (error.domain != MONGOC_ERROR_SERVER || has_concern_errors ||
      !FindDocument(*reply, "writeErrors", &errors) || bson_empty(&errors)) {
    throw ToError(ClassifyMongoError(error.domain, error.code, error.message, reply.get(), true),
                  what);
  }
  std::vector<Bson> out;
  bson_iter_t it;
  bson_iter_init(&it, &errors);
  while (bson_iter_next(&it)) {
    if (!BSON_ITER_HOLDS_DOCUMENT(&it)) continue;
    std::uint32_t size = 0;
    const std::uint8_t* data = nullptr;
    bson_iter_document(&it, &size, &data);
    out.emplace_back(bson_new_from_data(data, size));
  }
  return out;
}

struct FindAndModifyOptsDeleter {
  void operator()(mongoc_find_and_modify_opts_t* opts) const {
    mongoc_find_and_modify_opts_destroy(opts);
  }
};

Collection CollectionOf(const ClientPool::Lease& client, const std::string& database,
                        const std::string& name) {
  return Collection(mongoc_client_get_collection(client.get(), database.c_str(), name.c_str()));
}

std::int64_t CountIn(const bson_t& reply, const char* field) {
  return FindInteger(reply, field).value_or(0);
}

// The outcome of a failed write: a duplicate key is returned, anything else thrown.
WriteOutcome FailedWrite(const bson_error_t& error, const bson_t& reply, std::string_view what) {
  MongoFailure failure = ClassifyMongoError(error.domain, error.code, error.message, &reply, true);
  if (failure.kind != MongoFailure::Kind::kDuplicateKey) throw ToError(failure, what);
  WriteOutcome outcome;
  outcome.duplicate = std::move(failure);
  return outcome;
}

}  // namespace

Executor::Executor(std::shared_ptr<ClientPool> pool, std::string database,
                   const MongoOptions& options)
    : pool_(std::move(pool)), database_(std::move(database)), options_(options) {}

Bson Executor::WriteOptions() const {
  Bson opts = NewBson();
  std::unique_ptr<mongoc_write_concern_t, WriteConcernDeleter> concern(mongoc_write_concern_new());
  mongoc_write_concern_set_wmajority(concern.get(),
                                     static_cast<std::int32_t>(options_.write_timeout.count()));
  mongoc_write_concern_append(concern.get(), opts.get());
  AppendInt64(opts.get(), "maxTimeMS", options_.max_time.count());
  return opts;
}

Bson Executor::ReadOptions() const {
  Bson opts = NewBson();
  std::unique_ptr<mongoc_read_concern_t, ReadConcernDeleter> concern(mongoc_read_concern_new());
  mongoc_read_concern_set_level(concern.get(), MONGOC_READ_CONCERN_LEVEL_MAJORITY);
  mongoc_read_concern_append(concern.get(), opts.get());
  AppendInt64(opts.get(), "maxTimeMS", options_.max_time.count());
  return opts;
}

WriteOutcome Executor::Update(const UpdateCommand& command, std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, command.collection);
  Bson opts = WriteOptions();
  AppendBool(opts.get(), "upsert", command.upsert);
  bson_t reply;
  bson_error_t error;
  const bool ok = mongoc_collection_update_one(collection.get(), command.filter.get(),
                                               command.update.get(), opts.get(), &reply, &error);
  Bson owned(bson_copy(&reply));
  bson_destroy(&reply);
  if (!ok) return FailedWrite(error, *owned, what);
  WriteOutcome outcome;
  outcome.matched = CountIn(*owned, "matchedCount");
  outcome.modified = CountIn(*owned, "modifiedCount");
  outcome.upserted = CountIn(*owned, "upsertedCount") > 0;
  return outcome;
}

WriteOutcome Executor::Delete(const DeleteCommand& command, std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, command.collection);
  Bson opts = WriteOptions();
  bson_t reply;
  bson_error_t error;
  const bool ok =
      command.many ? mongoc_collection_delete_many(collection.get(), command.filter.get(),
                                                   opts.get(), &reply, &error)
                   : mongoc_collection_delete_one(collection.get(), command.filter.get(),
                                                  opts.get(), &reply, &error);
  Bson owned(bson_copy(&reply));
  bson_destroy(&reply);
  if (!ok) return FailedWrite(error, *owned, what);
  WriteOutcome outcome;
  outcome.deleted = CountIn(*owned, "deletedCount");
  return outcome;
}

Bson Executor::FindOptions(const FindCommand& command) const {
  Bson opts = ReadOptions();
  if (command.sort) AppendDocument(opts.get(), "sort", *command.sort);
  if (command.limit > 0) AppendInt64(opts.get(), "limit", command.limit);
  if (command.projection) AppendDocument(opts.get(), "projection", *command.projection);
  return opts;
}

std::vector<Bson> Executor::Find(const FindCommand& command, std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, command.collection);
  Cursor cursor(mongoc_collection_find_with_opts(collection.get(), command.filter.get(),
                                                 FindOptions(command).get(), nullptr));
  return Drain(cursor, what);
}

void Executor::Scan(const FindCommand& command, const std::function<bool(BorrowedBson)>& each,
                    std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, command.collection);
  Cursor cursor(mongoc_collection_find_with_opts(collection.get(), command.filter.get(),
                                                 FindOptions(command).get(), nullptr));
  Drain(cursor, each, what);
}

InsertOutcome Executor::InsertMany(const std::string& collection_name,
                                   const std::vector<Bson>& documents, bool ordered,
                                   std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, collection_name);
  Bson opts = WriteOptions();
  AppendBool(opts.get(), "ordered", ordered);
  // An array of the documents' pointers (not a std::vector: bson_t's alignment attribute is
  // dropped on a template argument).
  std::unique_ptr<void, BsonFreeDeleter> storage(
      bson_malloc0(sizeof(bson_t*) * (documents.size() + 1)));
  auto* pointers = static_cast<const bson_t**>(storage.get());
  for (std::size_t i = 0; i < documents.size(); ++i) pointers[i] = documents[i].get();
  bson_t reply;
  bson_error_t error;
  const bool ok = mongoc_collection_insert_many(collection.get(), pointers, documents.size(),
                                                opts.get(), &reply, &error);
  Bson owned(bson_copy(&reply));
  bson_destroy(&reply);
  InsertOutcome outcome;
  outcome.inserted = CountIn(*owned, "insertedCount");
  if (!ok) outcome.write_errors = WriteErrorsOnly(error, owned, what);
  return outcome;
}

BulkOutcome Executor::BulkWrite(const std::string& collection_name,
                                const std::vector<BulkOperation>& operations,
                                std::string_view what) const {
  BulkOutcome outcome;
  if (operations.empty()) return outcome;
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, collection_name);
  Bson opts = NewBson();
  std::unique_ptr<mongoc_write_concern_t, WriteConcernDeleter> concern(mongoc_write_concern_new());
  mongoc_write_concern_set_wmajority(concern.get(),
                                     static_cast<std::int32_t>(options_.write_timeout.count()));
  mongoc_write_concern_append(concern.get(), opts.get());
  AppendBool(opts.get(), "ordered", false);
  std::unique_ptr<mongoc_bulk_operation_t, BulkDeleter> bulk(
      mongoc_collection_create_bulk_operation_with_opts(collection.get(), opts.get()));
  bson_error_t error;
  const Bson upsert = BsonFromJson(R"({"upsert": true})");
  for (const BulkOperation& operation : operations) {
    const bool added = operation.update
                           ? mongoc_bulk_operation_update_one_with_opts(
                                 bulk.get(), operation.filter.get(), operation.update.get(),
                                 operation.upsert ? upsert.get() : nullptr, &error)
                           : mongoc_bulk_operation_remove_one_with_opts(
                                 bulk.get(), operation.filter.get(), nullptr, &error);
    if (!added) {
      throw Error(ErrorCode::kInternal, std::string(what) + ": libmongoc refused an operation (" +
                                            error.message + ")");
    }
  }
  bson_t reply;
  const bool ok = mongoc_bulk_operation_execute(bulk.get(), &reply, &error) != 0;
  Bson owned(bson_copy(&reply));
  bson_destroy(&reply);
  outcome.matched = CountIn(*owned, "nMatched");
  outcome.deleted = CountIn(*owned, "nRemoved");
  if (!ok) outcome.write_errors = WriteErrorsOnly(error, owned, what);
  return outcome;
}

std::optional<Bson> Executor::FindAndModify(const std::string& collection_name,
                                            const bson_t& filter, const bson_t& update,
                                            std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, collection_name);
  std::unique_ptr<mongoc_find_and_modify_opts_t, FindAndModifyOptsDeleter> opts(
      mongoc_find_and_modify_opts_new());
  mongoc_find_and_modify_opts_set_update(opts.get(), &update);
  mongoc_find_and_modify_opts_set_flags(opts.get(), MONGOC_FIND_AND_MODIFY_NONE);
  Bson extra = WriteOptions();
  mongoc_find_and_modify_opts_append(opts.get(), extra.get());
  bson_t reply;
  bson_error_t error;
  const bool ok = mongoc_collection_find_and_modify_with_opts(collection.get(), &filter, opts.get(),
                                                              &reply, &error);
  Bson owned(bson_copy(&reply));
  bson_destroy(&reply);
  if (!ok) {
    throw ToError(ClassifyMongoError(error.domain, error.code, error.message, owned.get(), true),
                  what);
  }
  bson_t value;
  if (!FindDocument(*owned, "value", &value)) return std::nullopt;
  return CopyBson(value);
}

std::vector<Bson> Executor::Aggregate(const std::string& collection_name, const bson_t& pipeline,
                                      std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, collection_name);
  Bson opts = ReadOptions();
  Cursor cursor(mongoc_collection_aggregate(collection.get(), MONGOC_QUERY_NONE, &pipeline,
                                            opts.get(), nullptr));
  return Drain(cursor, what);
}

Executor::CommandOutcome Executor::TryCommand(const bson_t& command, bool write,
                                              const std::string& database) const {
  ClientPool::Lease client = pool_->Pop();
  const std::string& db = database.empty() ? database_ : database;
  Bson opts = write ? WriteOptions() : ReadOptions();
  bson_t reply;
  bson_error_t error;
  const bool ok = write ? mongoc_client_write_command_with_opts(client.get(), db.c_str(), &command,
                                                                opts.get(), &reply, &error)
                        : mongoc_client_read_command_with_opts(client.get(), db.c_str(), &command,
                                                               nullptr, opts.get(), &reply, &error);
  CommandOutcome outcome{Bson(bson_copy(&reply)), std::nullopt};
  bson_destroy(&reply);
  if (!ok) {
    outcome.failure =
        ClassifyMongoError(error.domain, error.code, error.message, outcome.reply.get(), write);
  }
  return outcome;
}

Bson Executor::RunCommand(const bson_t& command, bool write, std::string_view what,
                          const std::string& database) const {
  CommandOutcome outcome = TryCommand(command, write, database);
  if (outcome.failure) throw ToError(*outcome.failure, what);
  return std::move(outcome.reply);
}

Bson Executor::RunAdminCommand(const bson_t& command, std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  bson_t reply;
  bson_error_t error;
  const bool ok =
      mongoc_client_command_simple(client.get(), "admin", &command, nullptr, &reply, &error);
  Bson owned(bson_copy(&reply));
  bson_destroy(&reply);
  if (!ok) {
    throw ToError(ClassifyMongoError(error.domain, error.code, error.message, owned.get(), false),
                  what);
  }
  return owned;
}

}  // namespace wow::mongo
