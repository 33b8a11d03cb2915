// The ReservationStore on SQLite: one table per context and aggregate type, one row per reserved
// key. Each operation reads the key's row and writes the outcome in one write transaction (BEGIN
// IMMEDIATE, batched by the database's group commit), so operations on a key are serialised
// across threads and processes: of concurrent reserves of a free key exactly one wins. The rules
// are those of DESIGN §5.1, applied to the row.
//
// Writes are lazy (WriteSync::kLazy): a pending key expires anyway, and the decision's append,
// which is durable, syncs it; a confirmation or release is re-applied from the log by the
// reservation subscription. Only a confirmation at UNVERSIONED (an import, with no stream behind
// it) is durable. The rules are core/reservation_rules.h, applied to the row by ReservationRows.
#include <algorithm>

#include "core/reservation_rules.h"
#include "store/sqlite/codec.h"
#include "store/sqlite/database.h"
#include "store/sqlite/reservation_rows.h"
#include "wow/error.h"
#include "wow/sqlite.h"

namespace wow {
namespace {

using sqlite::Connection;

class SqliteReservationStore final : public ReservationStore {
 public:
  SqliteReservationStore(std::shared_ptr<SqliteDatabase> db, std::shared_ptr<const Clock> clock)
      : db_(std::move(db)), clock_(std::move(clock)), rows_(db_.get()) {
    Require(db_ != nullptr, "a SQLite reservation store needs a database");
    Require(clock_ != nullptr, "a reservation store needs a clock");
  }

  bool Reserve(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold, std::chrono::milliseconds ttl) override {
    ValidateReserve(scope, key, owner, hold, ttl);
    sqlite::EncodeHolds({hold});  // refuses a hold JSON cannot keep, before any write
    return Apply(scope, key, core::ReservationOp::Reserve(owner, hold, ttl), kUnversioned);
  }

  bool Confirm(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateConfirm(scope, key, owner, version);
    return Apply(scope, key, core::ReservationOp::Confirm(owner, version), version);
  }

  bool Release(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateRelease(scope, key, owner, version);
    return Apply(scope, key, core::ReservationOp::Release(owner, version), version);
  }

  bool Abandon(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold) override {
    ValidateAbandon(scope, key, owner, hold);
    return Apply(scope, key, core::ReservationOp::Abandon(owner, hold), kUnversioned);
  }

  std::optional<Reservation> Find(const ReservationScope& scope, const std::string& key) override {
    ValidateReservationKey(scope, key);
    return ReadRow(scope, key);
  }

  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) override {
    ValidateReservationKey(scope, after_key.empty() ? "-" : after_key);
    Require(limit > 0, [&] { return "list limit must be positive, got " + std::to_string(limit); });
    return db_->Read([&](Connection& r) { return rows_.List(r, scope, after_key, limit); });
  }

 private:
  // Applies `op` to the key's row in a write transaction. A Confirm or Release is first judged on
  // a read, and answered from it when the rules write nothing (the eager confirmation after an
  // append and the subscription's replay of the same fact cost no write); a Reserve or Abandon
  // nearly always writes, so it goes straight to the writer. Durable only for a confirmation at
  // UNVERSIONED (`version`), which no stream backs.
  bool Apply(const ReservationScope& scope, const std::string& key, const core::ReservationOp& op,
             Version version) {
    if (op.kind == core::ReservationOp::Kind::kConfirm ||
        op.kind == core::ReservationOp::Kind::kRelease) {
      const core::ReservationOutcome seen =
          core::ApplyReservationRule(ReadRow(scope, key), key, op, clock_->NowMillis());
      if (seen.write == core::ReservationOutcome::Write::kNone) return seen.answer;
    }
    const bool durable = op.kind == core::ReservationOp::Kind::kConfirm && version == kUnversioned;
    bool answer = false;
    db_->Write(
        [&](Connection& w) { answer = rows_.Apply(w, scope, key, op, clock_->NowMillis()).answer; },
        1, durable ? sqlite::WriteSync::kDurable : sqlite::WriteSync::kLazy);
    return answer;
  }

  // The key's row as committed, read on a reader connection.
  std::optional<Reservation> ReadRow(const ReservationScope& scope, const std::string& key) {
    return db_->Read([&](Connection& r) { return rows_.Load(r, scope, key); });
  }

  const std::shared_ptr<SqliteDatabase> db_;
  const std::shared_ptr<const Clock> clock_;
  const sqlite::ReservationRows rows_;
};

}  // namespace

std::unique_ptr<ReservationStore> NewSqliteReservationStore(std::shared_ptr<SqliteDatabase> db,
                                                            std::shared_ptr<const Clock> clock) {
  return std::make_unique<SqliteReservationStore>(std::move(db), std::move(clock));
}

}  // namespace wow
