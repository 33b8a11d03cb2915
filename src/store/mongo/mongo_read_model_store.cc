// The ReadModelStore on MongoDB: the commands of read_model_commands.h, sent through the
// deployment's executor. Not transactional: an Apply buffers its entry's puts and sends them as one
// unordered bulk write of conditional upserts, and the subscription runner commits the checkpoint
// in the log afterwards, so an entry may be applied again after a crash (at least once) and the
// rows' versions make that harmless. A put that meets the "row" index (a stored row the filter
// did not admit, or another node's insert of the same row racing it) is settled by a read.
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/read_model_rules.h"
#include "store/mongo/deployment.h"
#include "store/mongo/log_commands.h"
#include "store/mongo/mongo_error.h"
#include "store/mongo/read_model_commands.h"
#include "wow/error.h"
#include "wow/mongo.h"

namespace wow {
namespace {

using mongo::Bson;
using RowKey = std::tuple<std::string, std::string, std::string>;  // table, tenant, id


// How often a put that met the "row" index reads and tries again before it gives up with
// kAborted: each try follows another node's write of the same row with an earlier version.
constexpr int kMaxPutTries = 16;

class MongoReadModelStore final : public ReadModelStore {
 public:
  MongoReadModelStore(std::shared_ptr<MongoDeployment> deployment, std::string context)
      : deployment_(std::move(deployment)),
        context_(std::move(context)),
        collection_(mongo::ReadModelCollectionName(context_)) {
    Require(deployment_ != nullptr, "a MongoDB read model store needs a deployment");
    ValidateTypeName(context_, "context");
  }

  bool transactional() const override { return false; }

  bool Apply(const std::string& subscription, Position position,
             const std::function<void(ReadModelWriter&)>& work) override {
    Require(!subscription.empty(), "subscription name is empty");
    Writer writer(*this);
    work(writer);
    if (writer.written.empty()) return true;
    std::vector<mongo::BulkOperation> operations;
    std::vector<const ReadModelRow*> rows;
    for (auto& [key, put] : writer.written) {
      operations.push_back(std::move(put.operation));
      rows.push_back(&put.row);
    }
    Ensure();
    const std::string what = "applying " + subscription + "'s rows for entry " +
                             std::to_string(position.sequence) + " of partition " +
                             std::to_string(position.partition) + " to " + collection_;
    const mongo::BulkOutcome outcome = executor().BulkWrite(collection_, operations, what);
    for (const Bson& error : outcome.write_errors) {
      const auto index = mongo::FindInteger(*error, "index");
      if (!index || *index < 0 || static_cast<std::size_t>(*index) >= rows.size()) {
        throw Error(ErrorCode::kInternal, "MongoDB: " + what + ": a write error of no operation: " +
                                              mongo::ToJson(*error).substr(0, 300));
      }
      if (!mongo::IsDuplicateKeyCode(mongo::FindInteger(*error, "code").value_or(0))) {
        throw Error(ErrorCode::kInternal,
                    "MongoDB: " + what + ": the server refused row " +
                        rows[static_cast<std::size_t>(*index)]->id.substr(0, 100) + " (" +
                        mongo::ToJson(*error).substr(0, 300) +
                        "); the entry's other rows applied, and it is applied again on retry");
      }
      PutAfterDuplicate(*rows[static_cast<std::size_t>(*index)], what);
    }
    return true;
  }

  std::optional<ReadModelRow> Find(const std::string& table, const std::string& tenant_id,
                                   const std::string& id) override {
    ValidateTypeName(table, "read model table");
    const mongo::FindCommand command = mongo::FindRowCommand(context_, table, tenant_id, id);
    Ensure();
    std::vector<Bson> found =
        executor().Find(command, "reading read model row " + id.substr(0, 100) + " of " + table);
    if (found.empty()) return std::nullopt;
    return mongo::ParseRow(*found.front(), collection_);
  }

  std::vector<ReadModelRow> List(const ReadModelQuery& query) override {
    ValidateReadModelQuery(query);
    const mongo::FindCommand command = mongo::ListRowsCommand(context_, query);
    Ensure();
    std::vector<ReadModelRow> page;
    for (const Bson& doc : executor().Find(command, "listing read model " + query.table)) {
      page.push_back(mongo::ParseRow(*doc, collection_));
    }
    return page;
  }

  // Not one transaction: the checkpoints go first, then the rows, so a drop cut short leaves
  // either everything or a projection that replays the whole log over what rows are left, which
  // its versioned puts make right; a rebuild run again finishes it.
  std::int64_t Drop(const std::string& subscription,
                    const std::vector<std::string>& tables) override {
    Require(!subscription.empty(), "subscription name is empty");
    for (const std::string& table : tables) ValidateTypeName(table, "read model table");
    Ensure();
    executor().Delete(mongo::CheckpointsDropCommand(context_, subscription),
                      "deleting the checkpoints of " + subscription);
    if (tables.empty()) return 0;
    return executor()
        .Delete(mongo::DropRowsCommand(context_, tables), "deleting the rows of " + subscription)
        .deleted;
  }

 private:
  // Buffers one Apply's puts, each with its operation built (bad text refused in the work).
  struct Put {
    ReadModelRow row;
    mongo::BulkOperation operation;
  };
  struct Writer final : ReadModelWriter {
    explicit Writer(MongoReadModelStore& store) : store(store) {}
    std::optional<ReadModelRow> Find(const std::string& table, const std::string& tenant_id,
                                     const std::string& id) override {
      if (auto it = written.find({table, tenant_id, id}); it != written.end()) {
        return it->second.row;
      }
      return store.Find(table, tenant_id, id);
    }
    bool Put(const ReadModelRow& row) override {
      ValidateReadModelRow(row);
      mongo::BulkOperation operation = mongo::PutRowOperation(row);
      if (!core::ReadModelPutApplies(Find(row.table, row.tenant_id, row.id), row)) return false;
      written.insert_or_assign({row.table, row.tenant_id, row.id},
                               MongoReadModelStore::Put{row, std::move(operation)});
      return true;
    }
    MongoReadModelStore& store;
    std::map<RowKey, MongoReadModelStore::Put> written;
  };

  const mongo::Executor& executor() const { return deployment_->executor(); }

  // A put the "row" index refused: a stored row at this version or later (done: the entry was
  // applied before, or a later one was), or gone or earlier since (another node's write raced
  // this one), when it goes again.
  void PutAfterDuplicate(const ReadModelRow& row, const std::string& what) {
    for (int attempt = 0; attempt < kMaxPutTries; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(attempt));
      const std::optional<ReadModelRow> stored = Find(row.table, row.tenant_id, row.id);
      if (stored && stored->version >= row.version) return;
      std::vector<mongo::BulkOperation> again;
      again.push_back(mongo::PutRowOperation(row));
      const mongo::BulkOutcome outcome = executor().BulkWrite(collection_, again, what);
      if (outcome.write_errors.empty()) return;
      if (!mongo::IsDuplicateKeyCode(
              mongo::FindInteger(*outcome.write_errors.front(), "code").value_or(0))) {
        throw Error(ErrorCode::kInternal,
                    "MongoDB: " + what + ": the server refused row " + row.id.substr(0, 100) +
                        " (" + mongo::ToJson(*outcome.write_errors.front()).substr(0, 300) + ")");
      }
    }
    throw Error(ErrorCode::kAborted, "MongoDB: " + what + ": row " + row.id.substr(0, 100) +
                                         " met the row index " + std::to_string(kMaxPutTries) +
                                         " times while it kept changing; retry later");
  }

  // Creates the collection with its indexes and records it, once per store.
  void Ensure() {
    {
      std::lock_guard lock(mutex_);
      if (ensured_) return;
    }
    deployment_->collections().Ensure({collection_, "read_model", context_, "",
                                       mongo::kReadModelFormat, mongo::ReadModelShardKey()});
    executor().RunCommand(*mongo::ReadModelIndexesCommand(collection_), true,
                          "creating the indexes of " + collection_);
    std::lock_guard lock(mutex_);
    ensured_ = true;
  }

  const std::shared_ptr<MongoDeployment> deployment_;
  const std::string context_;
  const std::string collection_;
  std::mutex mutex_;
  bool ensured_ = false;  // guarded by mutex_
};

}  // namespace

std::unique_ptr<ReadModelStore> NewMongoReadModelStore(std::shared_ptr<MongoDeployment> deployment,
                                                       std::string context) {
  return std::make_unique<MongoReadModelStore>(std::move(deployment), std::move(context));
}

}  // namespace wow
