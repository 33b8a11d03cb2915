#include "store/mongo/executor.h"

#include <mongoc/mongoc.h>

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
  std::unique_ptr<mongoc_write_concern_t, WriteConcernDeleter> concern(
      mongoc_write_concern_new());
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
  const bool ok = mongoc_collection_delete_one(collection.get(), command.filter.get(), opts.get(),
                                               &reply, &error);
  Bson owned(bson_copy(&reply));
  bson_destroy(&reply);
  if (!ok) return FailedWrite(error, *owned, what);
  WriteOutcome outcome;
  outcome.deleted = CountIn(*owned, "deletedCount");
  return outcome;
}

std::vector<Bson> Executor::Find(const FindCommand& command, std::string_view what) const {
  ClientPool::Lease client = pool_->Pop();
  Collection collection = CollectionOf(client, database_, command.collection);
  Bson opts = ReadOptions();
  if (command.sort) AppendDocument(opts.get(), "sort", *command.sort);
  if (command.limit > 0) AppendInt64(opts.get(), "limit", command.limit);
  Cursor cursor(
      mongoc_collection_find_with_opts(collection.get(), command.filter.get(), opts.get(), nullptr));
  std::vector<Bson> documents;
  const bson_t* doc = nullptr;
  while (mongoc_cursor_next(cursor.get(), &doc)) documents.push_back(CopyBson(*doc));
  bson_error_t error;
  const bson_t* reply = nullptr;
  if (mongoc_cursor_error_document(cursor.get(), &error, &reply)) {
    throw ToError(ClassifyMongoError(error.domain, error.code, error.message, reply, false), what);
  }
  return documents;
}

Executor::CommandOutcome Executor::TryCommand(const bson_t& command, bool write,
                                              const std::string& database) const {
  ClientPool::Lease client = pool_->Pop();
  const std::string& db = database.empty() ? database_ : database;
  Bson opts = write ? WriteOptions() : ReadOptions();
  bson_t reply;
  bson_error_t error;
  const bool ok =
      write ? mongoc_client_write_command_with_opts(client.get(), db.c_str(), &command, opts.get(),
                                                    &reply, &error)
            : mongoc_client_read_command_with_opts(client.get(), db.c_str(), &command, nullptr,
                                                   opts.get(), &reply, &error);
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
  const bool ok = mongoc_client_command_simple(client.get(), "admin", &command, nullptr, &reply,
                                               &error);
  Bson owned(bson_copy(&reply));
  bson_destroy(&reply);
  if (!ok) {
    throw ToError(ClassifyMongoError(error.domain, error.code, error.message, owned.get(), false),
                  what);
  }
  return owned;
}

}  // namespace wow::mongo
