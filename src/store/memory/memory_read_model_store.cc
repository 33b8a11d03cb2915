// The in-memory ReadModelStore: rows in a map, one mutex; each Apply's writes land together.
#include <map>
#include <mutex>
#include <tuple>

#include "core/read_model_rules.h"
#include "wow/error.h"
#include "wow/read_model.h"

namespace wow {
namespace {

using RowKey = std::tuple<std::string, std::string, std::string>;  // table, tenant, id

class MemoryReadModelStore final : public ReadModelStore {
 public:
  bool transactional() const override { return false; }

  bool Apply(const std::string& subscription, Position,
             const std::function<void(ReadModelWriter&)>& work) override {
    Require(!subscription.empty(), "subscription name is empty");
    std::lock_guard lock(mutex_);
    Writer writer(rows_);
    work(writer);
    for (auto& [key, row] : writer.written) rows_.insert_or_assign(key, std::move(row));
    return true;
  }

  std::optional<ReadModelRow> Find(const std::string& table, const std::string& tenant_id,
                                   const std::string& id) override {
    std::lock_guard lock(mutex_);
    auto it = rows_.find({table, tenant_id, id});
    if (it == rows_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<ReadModelRow> List(const ReadModelQuery& query) override {
    ValidateReadModelQuery(query);
    std::lock_guard lock(mutex_);
    std::vector<ReadModelRow> page;
    for (auto it = rows_.upper_bound({query.table, query.tenant_id, query.after});
         it != rows_.end() && std::get<0>(it->first) == query.table &&
         std::get<1>(it->first) == query.tenant_id && static_cast<int>(page.size()) < query.limit;
         ++it) {
      if (core::ReadModelQueryMatches(query, it->second)) page.push_back(it->second);
    }
    return page;
  }

  std::int64_t Drop(const std::string&, const std::vector<std::string>&) override {
    throw Error(ErrorCode::kFailedPrecondition,
                "memory read models cannot be rebuilt: the log keeps their checkpoints; a "
                "memory store set starts empty with its process");
  }

 private:
  // Buffers one Apply's writes over the rows, so a work that throws leaves them as they were.
  struct Writer final : ReadModelWriter {
    explicit Writer(const std::map<RowKey, ReadModelRow>& stored) : rows(stored) {}
    std::optional<ReadModelRow> Find(const std::string& table, const std::string& tenant_id,
                                     const std::string& id) override {
      const RowKey key{table, tenant_id, id};
      if (auto it = written.find(key); it != written.end()) return it->second;
      if (auto it = rows.find(key); it != rows.end()) return it->second;
      return std::nullopt;
    }
    bool Put(const ReadModelRow& row) override {
      ValidateReadModelRow(row);
      if (!core::ReadModelPutApplies(Find(row.table, row.tenant_id, row.id), row)) return false;
      written.insert_or_assign({row.table, row.tenant_id, row.id}, row);
      return true;
    }
    const std::map<RowKey, ReadModelRow>& rows;
    std::map<RowKey, ReadModelRow> written;
  };

  std::mutex mutex_;
  std::map<RowKey, ReadModelRow> rows_;  // guarded by mutex_
};

}  // namespace

std::unique_ptr<ReadModelStore> NewMemoryReadModelStore() {
  return std::make_unique<MemoryReadModelStore>();
}

}  // namespace wow
