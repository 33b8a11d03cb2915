#include "store/sqlite/reservation_rows.h"

#include "store/sqlite/codec.h"
#include "store/sqlite/database.h"

namespace wow::sqlite {
namespace {

constexpr const char* kColumns = "key, owner_tenant_id, owner_id, expires_at, holds, version";

std::string TableOf(const ReservationScope& scope) {
  return TableName(TableKind::kReservation, scope.context, scope.aggregate);
}

// The reservation of the row `q` is on, read from kColumns.
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
    r.holds = DecodeHolds(q.TextView(4));
  }
  return r;
}

}  // namespace

std::optional<Reservation> ReservationRows::Load(Connection& c, const ReservationScope& scope,
                                                 const std::string& key) const {
  const std::string table = TableOf(scope);
  if (!db_->TableExists(c, table)) return std::nullopt;
  Query q(c, std::string("SELECT ") + kColumns + " FROM " + Quoted(table) +
                 " WHERE tenant_id = ?1 AND ns = ?2 AND key = ?3");
  q.Bind(1, scope.tenant_id).Bind(2, scope.ns).Bind(3, key);
  if (!q.Step()) return std::nullopt;
  return ReadRow(q, scope);
}

std::vector<Reservation> ReservationRows::List(Connection& c, const ReservationScope& scope,
                                               const std::string& after_key, int limit) const {
  std::vector<Reservation> page;
  const std::string table = TableOf(scope);
  if (!db_->TableExists(c, table)) return page;
  Query q(c, std::string("SELECT ") + kColumns + " FROM " + Quoted(table) +
                 " WHERE tenant_id = ?1 AND ns = ?2 AND key > ?3 ORDER BY key LIMIT ?4");
  q.Bind(1, scope.tenant_id).Bind(2, scope.ns).Bind(3, after_key).Bind(4, limit);
  while (q.Step()) page.push_back(ReadRow(q, scope));
  return page;
}

void ReservationRows::Save(Connection& w, const ReservationScope& scope,
                           const Reservation& r) const {
  db_->EnsureTable(w, TableKind::kReservation, scope.context, scope.aggregate);
  // An upsert, not INSERT OR REPLACE: a key's row changes in place, so its index entry stays.
  Query q(w, "INSERT INTO " + Quoted(TableOf(scope)) +
                 " (tenant_id, ns, key, owner_tenant_id, owner_id, expires_at, holds, version) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (tenant_id, ns, key) DO "
                 "UPDATE SET owner_tenant_id = excluded.owner_tenant_id, owner_id = "
                 "excluded.owner_id, expires_at = excluded.expires_at, holds = excluded.holds, "
                 "version = excluded.version");
  q.Bind(1, scope.tenant_id).Bind(2, scope.ns).Bind(3, r.key);
  q.Bind(4, r.owner.tenant_id).Bind(5, r.owner.id);
  if (r.state == ReservationState::kPending) {
    q.Bind(6, r.expires_at).Bind(7, EncodeHolds(r.holds)).BindNull(8);
  } else {
    q.BindNull(6).Bind(7, "[]").Bind(8, r.version);
  }
  q.Run();
}

void ReservationRows::Delete(Connection& w, const ReservationScope& scope,
                             const std::string& key) const {
  Query(w,
        "DELETE FROM " + Quoted(TableOf(scope)) + " WHERE tenant_id = ?1 AND ns = ?2 AND key = ?3")
      .Bind(1, scope.tenant_id)
      .Bind(2, scope.ns)
      .Bind(3, key)
      .Run();
}

core::ReservationOutcome ReservationRows::Apply(Connection& w, const ReservationScope& scope,
                                                const std::string& key,
                                                const core::ReservationOp& op,
                                                EpochMillis now) const {
  const std::string table = TableOf(scope);
  if (op.kind == core::ReservationOp::Kind::kConfirm && db_->TableExists(w, table)) {
    // The common confirmation, of the owner's pending reservation (live or expired: the fact
    // committed), is the rules' outcome written by one UPDATE in place, without reading the row.
    Query(w, "UPDATE " + Quoted(table) +
                 " SET expires_at = NULL, holds = '[]', version = ?6 WHERE tenant_id = ?1 AND "
                 "ns = ?2 AND key = ?3 AND owner_tenant_id = ?4 AND owner_id = ?5 AND "
                 "expires_at IS NOT NULL")
        .Bind(1, scope.tenant_id)
        .Bind(2, scope.ns)
        .Bind(3, key)
        .Bind(4, op.owner.tenant_id)
        .Bind(5, op.owner.id)
        .Bind(6, op.version)
        .Run();
    if (w.Changes() == 1) {
      return {true, core::ReservationOutcome::Write::kStore,
              Reservation{key, op.owner, ReservationState::kConfirmed, {}, 0, op.version}};
    }
  }
  core::ReservationOutcome outcome = core::ApplyReservationRule(Load(w, scope, key), key, op, now);
  switch (outcome.write) {
    case core::ReservationOutcome::Write::kNone:
      break;
    case core::ReservationOutcome::Write::kStore:
      Save(w, scope, outcome.stored);
      break;
    case core::ReservationOutcome::Write::kDelete:
      Delete(w, scope, key);
      break;
  }
  return outcome;
}

}  // namespace wow::sqlite
