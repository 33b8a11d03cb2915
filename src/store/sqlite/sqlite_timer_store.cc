// The TimerStore on SQLite: one table per context and aggregate type of the owners, one row per
// timer, keyed by owner and key. Puts and cancels are conditional on the stored version; a settle
// is a conditional update (or delete) per change on the timer as it was loaded, all in one write
// transaction. Due reads each registered table's partial index of PENDING and FIRING timers per
// partition, and merges by (due_at, timer_id). Every write is lazy (WriteSync::kLazy): the timers
// are rebuilt from the log's facts, and a settle lost to a power loss only fires a timer again.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/timer_rules.h"
#include "store/sqlite/codec.h"
#include "store/sqlite/database.h"
#include "wow/error.h"
#include "wow/sqlite.h"

namespace wow {
namespace {

using sqlite::Connection;
using sqlite::Query;
using sqlite::TableKind;

constexpr const char* kColumns =
    "owner_tenant_id, owner_id, key, partition, timer_id, version, due_at, target_context, "
    "target_aggregate, target_tenant_id, target_id, command_type, body, rule, state, attempt, "
    "parked_version";

// Matches a stored timer to the loaded one: ?1..?3 its owner and key, ?4..?8 the loaded fields.
constexpr const char* kAsLoaded =
    " WHERE owner_tenant_id = ?1 AND owner_id = ?2 AND key = ?3 AND timer_id = ?4 AND "
    "version = ?5 AND state = ?6 AND attempt = ?7 AND due_at = ?8";

TimerState StateFrom(std::string_view name) {
  if (name == "PENDING") return TimerState::kPending;
  if (name == "FIRING") return TimerState::kFiring;
  if (name == "PARKED") return TimerState::kParked;
  throw Error(ErrorCode::kDataLoss, "stored timer state \"" + std::string(name) +
                                        "\" is unknown; the database is damaged");
}

class SqliteTimerStore final : public TimerStore {
 public:
  SqliteTimerStore(std::shared_ptr<SqliteDatabase> db, std::string context, int partitions)
      : db_(std::move(db)), context_(std::move(context)), partitions_(partitions) {
    Require(db_ != nullptr, "a SQLite timer store needs a database");
    ValidateTypeName(context_, "context");
    ValidatePartitionCount(partitions_);
    // A count recorded already (by the log, usually) needs no write: a read-only database opens.
    const bool recorded = db_->Read([&](Connection& r) {
      Query q(r, "SELECT 1 FROM wow_contexts WHERE context = ?1 AND partitions = ?2");
      q.Bind(1, context_).Bind(2, partitions_);
      return q.Step();
    });
    if (!recorded) {
      db_->Write([&](Connection& w) { db_->ClaimPartitionCount(w, context_, partitions_); });
    }
    // Timer tables of an earlier format go now, before the timer subscription reads its
    // checkpoints; a read-only database keeps them (and refuses to write them).
    if (!db_->options().read_only &&
        db_->Read([&](Connection& r) { return db_->HasEarlierTimerTables(r, context_); })) {
      db_->Write([&](Connection& w) { db_->DropEarlierTimerTables(w, context_); });
    }
  }

  bool Put(const Timer& timer) override {
    ValidateTimer(timer);
    const std::string rule = sqlite::EncodeRule(timer.rule);
    bool put = false;
    db_->Write(
        [&](Connection& w) {
          db_->EnsureTable(w, TableKind::kTimer, context_, timer.owner.aggregate);
          Query q(w,
                  "INSERT INTO " + Table(timer.owner.aggregate) + " (" + kColumns +
                      ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                      "?16, ?17) ON CONFLICT (owner_tenant_id, owner_id, key) DO UPDATE SET "
                      "partition = excluded.partition, timer_id = excluded.timer_id, "
                      "version = excluded.version, due_at = excluded.due_at, "
                      "target_context = excluded.target_context, "
                      "target_aggregate = excluded.target_aggregate, "
                      "target_tenant_id = excluded.target_tenant_id, "
                      "target_id = excluded.target_id, command_type = excluded.command_type, "
                      "body = excluded.body, rule = excluded.rule, state = excluded.state, "
                      "attempt = excluded.attempt, parked_version = excluded.parked_version "
                      "WHERE version < excluded.version OR "
                      "(version = excluded.version AND timer_id <> excluded.timer_id)");
          q.Bind(1, timer.owner.tenant_id).Bind(2, timer.owner.id).Bind(3, timer.key);
          q.Bind(4, timer.partition).Bind(5, timer.timer_id).Bind(6, timer.version);
          q.Bind(7, timer.due_at).Bind(8, timer.target.context).Bind(9, timer.target.aggregate);
          q.Bind(10, timer.target.tenant_id).Bind(11, timer.target.id).Bind(12, timer.command_type);
          q.Bind(13, timer.body).Bind(14, rule).Bind(15, TimerStateName(timer.state));
          q.Bind(16, timer.attempt).Bind(17, timer.parked_version);
          q.Run();
          put = w.Changes() == 1;
          if (!put) {  // kept: the same fact applied already (true), or a later one stored (false)
            Query stored(w, "SELECT version, timer_id FROM " + Table(timer.owner.aggregate) +
                                " WHERE owner_tenant_id = ?1 AND owner_id = ?2 AND key = ?3");
            stored.Bind(1, timer.owner.tenant_id).Bind(2, timer.owner.id).Bind(3, timer.key);
            put =
                stored.Step() && stored.Int(0) == timer.version && stored.Text(1) == timer.timer_id;
          }
        },
        1, sqlite::WriteSync::kLazy);
    return put;
  }

  bool Cancel(const AggregateRef& owner, const std::string& key, Version version) override {
    ValidateOwnerKey(owner, key);
    ValidateVersion(version, "timer version");
    bool cancelled = false;
    db_->Write(
        [&](Connection& w) {
          cancelled = false;
          if (!db_->TableExists(w, TableName(owner.aggregate))) return;
          Query(w,
                "DELETE FROM " + Table(owner.aggregate) +
                    " WHERE owner_tenant_id = ?1 AND owner_id = ?2 AND key = ?3 AND version <= ?4")
              .Bind(1, owner.tenant_id)
              .Bind(2, owner.id)
              .Bind(3, key)
              .Bind(4, version)
              .Run();
          cancelled = w.Changes() == 1;
        },
        1, sqlite::WriteSync::kLazy);
    return cancelled;
  }

  int CancelAll(const AggregateRef& owner, Version version) override {
    ValidateOwner(owner);
    ValidateVersion(version, "timer version");
    int cancelled = 0;
    db_->Write(
        [&](Connection& w) {
          cancelled = 0;
          if (!db_->TableExists(w, TableName(owner.aggregate))) return;
          Query(w, "DELETE FROM " + Table(owner.aggregate) +
                       " WHERE owner_tenant_id = ?1 AND owner_id = ?2 AND version <= ?3")
              .Bind(1, owner.tenant_id)
              .Bind(2, owner.id)
              .Bind(3, version)
              .Run();
          cancelled = w.Changes();
        },
        1, sqlite::WriteSync::kLazy);
    return cancelled;
  }

  std::optional<Timer> Find(const AggregateRef& owner, const std::string& key) override {
    ValidateOwnerKey(owner, key);
    return db_->Read([&](Connection& r) -> std::optional<Timer> {
      if (!db_->TableExists(r, TableName(owner.aggregate))) return std::nullopt;
      Query q(r, std::string("SELECT ") + kColumns + " FROM " + Table(owner.aggregate) +
                     " WHERE owner_tenant_id = ?1 AND owner_id = ?2 AND key = ?3");
      q.Bind(1, owner.tenant_id).Bind(2, owner.id).Bind(3, key);
      if (!q.Step()) return std::nullopt;
      return ReadRow(q, owner.aggregate);
    });
  }

  // Two passes in one read snapshot. First each table's partial index gives, per partition, the
  // earliest `limit` candidates as (due_at, timer_id, rowid), read from the index alone; then only
  // the `limit` earliest of all candidates are read in full, by rowid. Reading every partition's
  // earliest timers in full would read up to partitions x limit rows, each on its own page, to
  // return `limit` of them.
  std::vector<Timer> Due(const std::set<int>& partitions, EpochMillis until, int limit) override {
    for (int p : partitions) ValidatePartition(p, partitions_);
    Require(limit > 0, [&] { return "due limit must be positive, got " + std::to_string(limit); });
    return db_->Read([&](Connection& r) {
      struct Candidate {
        EpochMillis due_at;
        std::string timer_id;
        size_t table;
        std::int64_t rowid;
      };
      std::vector<Candidate> candidates;
      sqlite::Transaction snapshot(r, sqlite::Transaction::Kind::kRead);
      const std::vector<sqlite::RegisteredTable> tables =
          db_->Tables(r, TableKind::kTimer, context_);
      for (size_t t = 0; t < tables.size(); ++t) {
        for (int p : partitions) {
          Query q(r, "SELECT due_at, timer_id, rowid FROM " + sqlite::Quoted(tables[t].name) +
                         " WHERE partition = ?1 AND state <> 'PARKED' AND due_at <= ?2 "
                         "ORDER BY due_at, timer_id LIMIT ?3");
          q.Bind(1, p).Bind(2, until).Bind(3, limit);
          while (q.Step()) candidates.push_back({q.Int(0), q.Text(1), t, q.Int(2)});
        }
      }
      core::KeepEarliestDue(candidates, limit);
      std::vector<std::string> by_rowid;
      for (const sqlite::RegisteredTable& table : tables) {
        by_rowid.push_back(std::string("SELECT ") + kColumns + " FROM " +
                           sqlite::Quoted(table.name) + " WHERE rowid = ?1");
      }
      std::vector<Timer> due;
      due.reserve(candidates.size());
      for (const Candidate& candidate : candidates) {
        Query q(r, by_rowid[candidate.table]);
        q.Bind(1, candidate.rowid);
        if (q.Step()) due.push_back(ReadRow(q, tables[candidate.table].aggregate));
      }
      snapshot.Commit();
      return due;
    });
  }

  std::vector<Timer> Parked(const AggregateRef& target) override {
    ValidateRef(target);
    return db_->Read([&](Connection& r) {
      std::vector<Timer> parked;
      sqlite::Transaction snapshot(r, sqlite::Transaction::Kind::kRead);
      for (const sqlite::RegisteredTable& table : db_->Tables(r, TableKind::kTimer, context_)) {
        Query q(r, std::string("SELECT ") + kColumns + " FROM " + sqlite::Quoted(table.name) +
                       " WHERE state = 'PARKED' AND target_context = ?1 AND "
                       "target_aggregate = ?2 AND target_tenant_id = ?3 AND target_id = ?4");
        q.Bind(1, target.context).Bind(2, target.aggregate).Bind(3, target.tenant_id);
        q.Bind(4, target.id);
        while (q.Step()) parked.push_back(ReadRow(q, table.aggregate));
      }
      snapshot.Commit();
      std::sort(parked.begin(), parked.end(), core::DueFirst<Timer>);
      return parked;
    });
  }

  int Settle(const std::vector<TimerChange>& changes) override {
    ValidateSettle(changes, context_, partitions_);
    if (changes.empty()) return 0;
    int applied = 0;
    db_->Write(
        [&](Connection& w) {
          applied = 0;
          for (const TimerChange& change : changes) applied += Apply(w, change) ? 1 : 0;
        },
        1, sqlite::WriteSync::kLazy);
    return applied;
  }

 private:
  bool Apply(Connection& w, const TimerChange& change) {
    const Timer& t = change.loaded;
    if (!db_->TableExists(w, TableName(t.owner.aggregate))) return false;
    std::string set;
    switch (change.kind) {
      case TimerChange::Kind::kClaim:
        set = "SET state = 'FIRING', due_at = ?9";
        break;
      case TimerChange::Kind::kRetry:
        set = "SET state = 'PENDING', due_at = ?9, attempt = attempt + 1";
        break;
      case TimerChange::Kind::kPark:
        set = "SET state = 'PARKED', attempt = attempt + 1, parked_version = ?10";
        break;
      case TimerChange::Kind::kRearm:
        set = "SET state = 'PENDING', due_at = ?9, parked_version = 0";
        break;
      case TimerChange::Kind::kDone:
        break;
    }
    const std::string sql = set.empty()
                                ? "DELETE FROM " + Table(t.owner.aggregate) + kAsLoaded
                                : "UPDATE " + Table(t.owner.aggregate) + " " + set + kAsLoaded;
    Query q(w, sql);
    q.Bind(1, t.owner.tenant_id).Bind(2, t.owner.id).Bind(3, t.key).Bind(4, t.timer_id);
    q.Bind(5, t.version).Bind(6, TimerStateName(t.state)).Bind(7, t.attempt).Bind(8, t.due_at);
    if (sql.find("?9") != std::string::npos) q.Bind(9, change.new_due_at);
    if (sql.find("?10") != std::string::npos) q.Bind(10, change.target_version);
    q.Run();
    return w.Changes() == 1;
  }

  Timer ReadRow(const Query& q, const std::string& aggregate) const {
    Timer t;
    t.owner = {context_, aggregate, q.Text(0), q.Text(1)};
    t.key = q.Text(2);
    t.partition = static_cast<int>(q.Int(3));
    t.timer_id = q.Text(4);
    t.version = q.Int(5);
    t.due_at = q.Int(6);
    t.target = {q.Text(7), q.Text(8), q.Text(9), q.Text(10)};
    t.command_type = q.Text(11);
    t.body = q.Text(12);
    t.rule = sqlite::DecodeRule(q.TextView(13), "timer \"" + t.key + "\" of " + ToString(t.owner));
    t.state = StateFrom(q.TextView(14));
    t.attempt = static_cast<int>(q.Int(15));
    t.parked_version = q.Int(16);
    return t;
  }

  std::string TableName(const std::string& aggregate) const {
    return sqlite::TableName(TableKind::kTimer, context_, aggregate);
  }
  std::string Table(const std::string& aggregate) const {
    return sqlite::Quoted(TableName(aggregate));
  }

  void ValidateOwner(const AggregateRef& owner) const { ValidateTimerOwner(owner, context_); }
  void ValidateOwnerKey(const AggregateRef& owner, const std::string& key) const {
    ValidateTimerKey(owner, key, context_);
  }
  void ValidateTimer(const Timer& t) const { wow::ValidateTimer(t, context_, partitions_); }

  const std::shared_ptr<SqliteDatabase> db_;
  const std::string context_;
  const int partitions_;
};

}  // namespace

std::unique_ptr<TimerStore> NewSqliteTimerStore(std::shared_ptr<SqliteDatabase> db,
                                                std::string_view context, int partitions) {
  return std::make_unique<SqliteTimerStore>(std::move(db), std::string(context), partitions);
}

}  // namespace wow
