// The ReadModelStore on SQLite: the rows of a context's projections in one table,
// wow_read_models, keyed by (context, table, tenant, id). Apply runs in one write transaction that
// checks and commits the projection's checkpoint in the log's wow_checkpoints, so an entry is
// applied exactly once. Writes are lazy (WriteSync::kLazy): read models are rebuilt from the log,
// and a power loss loses a commit only with every later one, rows and checkpoint together.
#include "core/read_model_rules.h"
#include "store/sqlite/database.h"
#include "wow/error.h"
#include "wow/sqlite.h"

namespace wow {
namespace {

using sqlite::Connection;
using sqlite::Query;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS wow_read_models (
  context TEXT NOT NULL,
  tbl TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  version INTEGER NOT NULL,
  index_key TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (context, tbl, tenant_id, id)
) WITHOUT ROWID;
)sql";

constexpr const char* kSelect =
    "SELECT tbl, tenant_id, id, version, index_key, body FROM wow_read_models ";

ReadModelRow RowFrom(const Query& q) {
  return {q.Text(0), q.Text(1), q.Text(2), q.Int(3), q.Text(4), q.Text(5)};
}

std::optional<ReadModelRow> FindRow(Connection& c, const std::string& context,
                                    const std::string& table, const std::string& tenant_id,
                                    const std::string& id) {
  Query q(c,
          std::string(kSelect) + "WHERE context = ?1 AND tbl = ?2 AND tenant_id = ?3 AND id = ?4");
  q.Bind(1, context).Bind(2, table).Bind(3, tenant_id).Bind(4, id);
  if (!q.Step()) return std::nullopt;
  return RowFrom(q);
}

class Writer final : public ReadModelWriter {
 public:
  Writer(Connection& w, const std::string& context) : w_(w), context_(context) {}
  std::optional<ReadModelRow> Find(const std::string& table, const std::string& tenant_id,
                                   const std::string& id) override {
    return FindRow(w_, context_, table, tenant_id, id);
  }
  bool Put(const ReadModelRow& row) override {
    ValidateReadModelRow(row);
    if (!core::ReadModelPutApplies(Find(row.table, row.tenant_id, row.id), row)) return false;
    Query(w_,
          "INSERT OR REPLACE INTO wow_read_models "
          "(context, tbl, tenant_id, id, version, index_key, body) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        .Bind(1, context_)
        .Bind(2, row.table)
        .Bind(3, row.tenant_id)
        .Bind(4, row.id)
        .Bind(5, row.version)
        .Bind(6, row.index_key)
        .Bind(7, row.body)
        .Run();
    return true;
  }

 private:
  Connection& w_;
  const std::string& context_;
};

class SqliteReadModelStore final : public ReadModelStore {
 public:
  SqliteReadModelStore(std::shared_ptr<SqliteDatabase> db, std::string context)
      : db_(std::move(db)), context_(std::move(context)) {
    Require(db_ != nullptr, "a SQLite read model store needs a database");
    ValidateTypeName(context_, "context");
    db_->Write([](Connection& w) { w.Execute(kSchema); }, 1, sqlite::WriteSync::kLazy);
  }

  bool transactional() const override { return true; }

  bool Apply(const std::string& subscription, Position position,
             const std::function<void(ReadModelWriter&)>& work) override {
    Require(!subscription.empty(), "subscription name is empty");
    bool applied = false;
    db_->Write(
        [&](Connection& w) {
          applied = false;
          Query checkpoint(w,
                           "SELECT sequence FROM wow_checkpoints "
                           "WHERE context = ?1 AND partition = ?2 AND subscription = ?3");
          checkpoint.Bind(1, context_).Bind(2, position.partition).Bind(3, subscription);
          if (checkpoint.Step() && checkpoint.Int(0) >= position.sequence) return;
          Writer writer(w, context_);
          work(writer);
          Query(w,
                "INSERT INTO wow_checkpoints (context, partition, subscription, sequence) "
                "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (context, partition, subscription) "
                "DO UPDATE SET sequence = max(sequence, excluded.sequence)")
              .Bind(1, context_)
              .Bind(2, position.partition)
              .Bind(3, subscription)
              .Bind(4, position.sequence)
              .Run();
          applied = true;
        },
        1, sqlite::WriteSync::kLazy);
    return applied;
  }

  std::optional<ReadModelRow> Find(const std::string& table, const std::string& tenant_id,
                                   const std::string& id) override {
    return db_->Read([&](Connection& r) { return FindRow(r, context_, table, tenant_id, id); });
  }

  std::vector<ReadModelRow> List(const ReadModelQuery& query) override {
    ValidateReadModelQuery(query);
    return db_->Read([&](Connection& r) {
      Query q(r, std::string(kSelect) +
                     "WHERE context = ?1 AND tbl = ?2 AND tenant_id = ?3 AND id > ?4 AND "
                     "(?5 = '' OR instr(index_key, ?5) = 1) ORDER BY id LIMIT ?6");
      q.Bind(1, context_)
          .Bind(2, query.table)
          .Bind(3, query.tenant_id)
          .Bind(4, query.after)
          .Bind(5, query.prefix)
          .Bind(6, query.limit);
      std::vector<ReadModelRow> page;
      while (q.Step()) page.push_back(RowFrom(q));
      return page;
    });
  }

  std::int64_t Drop(const std::string& subscription,
                    const std::vector<std::string>& tables) override {
    Require(!subscription.empty(), "subscription name is empty");
    std::int64_t dropped = 0;
    db_->Write([&](Connection& w) {
      dropped = 0;
      for (const std::string& table : tables) {
        ValidateTypeName(table, "read model table");
        Query(w, "DELETE FROM wow_read_models WHERE context = ?1 AND tbl = ?2")
            .Bind(1, context_)
            .Bind(2, table)
            .Run();
        dropped += w.Changes();
      }
      Query(w, "DELETE FROM wow_checkpoints WHERE context = ?1 AND subscription = ?2")
          .Bind(1, context_)
          .Bind(2, subscription)
          .Run();
    });
    return dropped;
  }

 private:
  std::shared_ptr<SqliteDatabase> db_;
  std::string context_;
};

}  // namespace

std::unique_ptr<ReadModelStore> NewSqliteReadModelStore(std::shared_ptr<SqliteDatabase> db,
                                                        std::string_view context) {
  return std::make_unique<SqliteReadModelStore>(std::move(db), std::string(context));
}

}  // namespace wow
