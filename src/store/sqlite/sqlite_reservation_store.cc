// The ReservationStore on SQLite: one table per context and aggregate type, one row per reserved
// key. Each operation reads the key's row and writes the outcome in one write transaction (BEGIN
// IMMEDIATE, batched by the database's group commit), so operations on a key are serialised
// across threads and processes: of concurrent reserves of a free key exactly one wins. The rules
// are those of the in-memory reference (DESIGN §5.1), applied to the row.
#include <algorithm>

#include "store/sqlite/codec.h"
#include "store/sqlite/database.h"
#include "wow/error.h"
#include "wow/sqlite.h"

namespace wow {
namespace {

using sqlite::Connection;
using sqlite::Query;
using sqlite::TableKind;

bool IsExpiredPending(const Reservation& r, EpochMillis now) {
  return r.state == ReservationState::kPending && r.expires_at <= now;
}

std::string TableOf(const ReservationScope& scope) {
  return sqlite::TableName(TableKind::kReservation, scope.context, scope.aggregate);
}

// The reservation of the row `q` is on: key, owner_tenant_id, owner_id, expires_at, holds, version.
Reservation ReadRow(const Query& q, const ReservationScope& scope) {
  Reservation r;
  r.key = q.Text(0);
  r.owner = {scope.context, scope.aggregate, q.Text(1), q.Text(2)};
  if (q.IsNull(3)) {
    r.state = ReservationState::kConfirmed;
    r.version = q.Int(5);
  } else {
    r.state = ReservationState::kPending;
    r.expires_at = q.Int(3);
    r.holds = sqlite::DecodeHolds(q.TextView(4));
  }
  return r;
}

constexpr const char* kColumns = "key, owner_tenant_id, owner_id, expires_at, holds, version";

class SqliteReservationStore final : public ReservationStore {
 public:
  SqliteReservationStore(std::shared_ptr<SqliteDatabase> db, std::shared_ptr<const Clock> clock)
      : db_(std::move(db)), clock_(std::move(clock)) {
    Require(db_ != nullptr, "a SQLite reservation store needs a database");
    Require(clock_ != nullptr, "a reservation store needs a clock");
  }

  bool Reserve(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold, std::chrono::milliseconds ttl) override {
    ValidateReserve(scope, key, owner, hold, ttl);
    sqlite::EncodeHolds({hold});  // refuses a hold JSON cannot keep, before any write
    bool held = false;
    db_->Write([&](Connection& w) {
      const EpochMillis now = clock_->NowMillis();
      std::optional<Reservation> r = Load(w, scope, key);
      if (!r || IsExpiredPending(*r, now)) {
        Save(w, scope, Reservation{key, owner, ReservationState::kPending, {hold},
                                   now + ttl.count(), kUnversioned});
        held = true;
        return;
      }
      held = r->owner == owner;
      if (held && r->state == ReservationState::kPending) {
        r->holds.insert(hold);
        r->expires_at = std::max(r->expires_at, now + ttl.count());
        Save(w, scope, *r);
      }
    });
    return held;
  }

  bool Confirm(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateReservation(scope, key, owner);
    ValidateVersion(version);
    Require(version != kAnyVersion, "ANY_VERSION is for releases; confirm a stream's version");
    bool held = false;
    db_->Write([&](Connection& w) {
      const EpochMillis now = clock_->NowMillis();
      std::optional<Reservation> r = Load(w, scope, key);
      if (r && r->owner != owner && !IsExpiredPending(*r, now)) {
        held = false;
        return;
      }
      if (!r || r->owner != owner || r->state == ReservationState::kPending) {
        Save(w, scope, Reservation{key, owner, ReservationState::kConfirmed, {}, 0, version});
      } else if (version > r->version) {
        r->version = version;
        Save(w, scope, *r);
      }
      held = true;
    });
    return held;
  }

  bool Release(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateReservation(scope, key, owner);
    ValidateVersion(version);
    bool released = false;
    db_->Write([&](Connection& w) {
      const std::optional<Reservation> r = Load(w, scope, key);
      released = false;
      if (!r || r->owner != owner) return;
      if (r->state == ReservationState::kConfirmed && version != kAnyVersion &&
          r->version > version) {
        return;  // a later fact confirmed the key again: this release is an old one, replayed
      }
      Delete(w, scope, key);
      released = true;
    });
    return released;
  }

  bool Abandon(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold) override {
    ValidateReservation(scope, key, owner);
    Require(!hold.empty(), "reservation hold (attempt id) is empty");
    bool abandoned = false;
    db_->Write([&](Connection& w) {
      std::optional<Reservation> r = Load(w, scope, key);
      abandoned = false;
      if (!r || r->owner != owner || r->state != ReservationState::kPending) return;
      if (r->holds.erase(hold) == 0) return;
      if (r->holds.empty()) {
        Delete(w, scope, key);
      } else {
        Save(w, scope, *r);
      }
      abandoned = true;
    });
    return abandoned;
  }

  std::optional<Reservation> Find(const ReservationScope& scope, const std::string& key) override {
    ValidateReservationKey(scope, key);
    return db_->Read([&](Connection& r) { return Load(r, scope, key); });
  }

  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) override {
    ValidateReservationKey(scope, after_key.empty() ? "-" : after_key);
    Require(limit > 0, "list limit must be positive, got " + std::to_string(limit));
    return db_->Read([&](Connection& r) {
      std::vector<Reservation> page;
      const std::string table = TableOf(scope);
      if (!db_->TableExists(r, table)) return page;
      Query q(r, std::string("SELECT ") + kColumns + " FROM " + sqlite::Quoted(table) +
                     " WHERE tenant_id = ?1 AND ns = ?2 AND key > ?3 ORDER BY key LIMIT ?4");
      q.Bind(1, scope.tenant_id).Bind(2, scope.ns).Bind(3, after_key).Bind(4, limit);
      while (q.Step()) page.push_back(ReadRow(q, scope));
      return page;
    });
  }

 private:
  std::optional<Reservation> Load(Connection& c, const ReservationScope& scope,
                                  const std::string& key) {
    const std::string table = TableOf(scope);
    if (!db_->TableExists(c, table)) return std::nullopt;
    Query q(c, std::string("SELECT ") + kColumns + " FROM " + sqlite::Quoted(table) +
                   " WHERE tenant_id = ?1 AND ns = ?2 AND key = ?3");
    q.Bind(1, scope.tenant_id).Bind(2, scope.ns).Bind(3, key);
    if (!q.Step()) return std::nullopt;
    return ReadRow(q, scope);
  }

  void Save(Connection& w, const ReservationScope& scope, const Reservation& r) {
    db_->EnsureTable(w, TableKind::kReservation, scope.context, scope.aggregate);
    Query q(w, "INSERT OR REPLACE INTO " + sqlite::Quoted(TableOf(scope)) +
                   " (tenant_id, ns, key, owner_tenant_id, owner_id, expires_at, holds, version) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    q.Bind(1, scope.tenant_id).Bind(2, scope.ns).Bind(3, r.key);
    q.Bind(4, r.owner.tenant_id).Bind(5, r.owner.id);
    if (r.state == ReservationState::kPending) {
      q.Bind(6, r.expires_at).Bind(7, sqlite::EncodeHolds(r.holds)).BindNull(8);
    } else {
      q.BindNull(6).Bind(7, "[]").Bind(8, r.version);
    }
    q.Run();
  }

  void Delete(Connection& w, const ReservationScope& scope, const std::string& key) {
    Query(w, "DELETE FROM " + sqlite::Quoted(TableOf(scope)) +
                 " WHERE tenant_id = ?1 AND ns = ?2 AND key = ?3")
        .Bind(1, scope.tenant_id)
        .Bind(2, scope.ns)
        .Bind(3, key)
        .Run();
  }

  const std::shared_ptr<SqliteDatabase> db_;
  const std::shared_ptr<const Clock> clock_;
};

}  // namespace

std::unique_ptr<ReservationStore> NewSqliteReservationStore(std::shared_ptr<SqliteDatabase> db,
                                                            std::shared_ptr<const Clock> clock) {
  return std::make_unique<SqliteReservationStore>(std::move(db), std::move(clock));
}

}  // namespace wow
