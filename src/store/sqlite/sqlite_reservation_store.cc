// The ReservationStore on SQLite: one table per context and aggregate type, one row per reserved
// key. Each operation reads the key's row and writes the outcome in one write transaction (BEGIN
// IMMEDIATE, batched by the database's group commit), so operations on a key are serialised
// across threads and processes: of concurrent reserves of a free key exactly one wins. The rules
// are those of the in-memory reference (DESIGN §5.1), applied to the row.
//
// Writes are lazy (WriteSync::kLazy): a pending key expires anyway, and the decision's append,
// which is durable, syncs it; a confirmation or release is re-applied from the log by the
// reservation subscription. Only a confirmation at UNVERSIONED (an import, with no stream behind
// it) is durable. A Confirm or Release that the row shows is done already only reads, on a reader
// connection: the eager confirmation after an append and the subscription's replay of the same fact
// cost no write.
#include <algorithm>

#include "store/sqlite/codec.h"
#include "store/sqlite/database.h"
#include "store/sqlite/reservation_rows.h"
#include "wow/error.h"
#include "wow/sqlite.h"
#include "wow/store_wrappers.h"

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
    bool held = false;
    db_->Write(
        [&](Connection& w) {
          const EpochMillis now = clock_->NowMillis();
          std::optional<Reservation> r = rows_.Load(w, scope, key);
          if (!r || IsExpiredPending(*r, now)) {
            rows_.Save(w, scope,
                       Reservation{key,
                                   owner,
                                   ReservationState::kPending,
                                   {hold},
                                   now + ttl.count(),
                                   kUnversioned});
            held = true;
            return;
          }
          held = r->owner == owner;
          if (held && r->state == ReservationState::kPending) {
            r->holds.insert(hold);
            r->expires_at = std::max(r->expires_at, now + ttl.count());
            rows_.Save(w, scope, *r);
          }
        },
        1, sqlite::WriteSync::kLazy);
    return held;
  }

  bool Confirm(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateReservation(scope, key, owner);
    ValidateVersion(version);
    Require(version != kAnyVersion, "ANY_VERSION is for releases; confirm a stream's version");
    if (const std::optional<bool> answer = sqlite::ReservationRows::ConfirmAnswerWithoutWrite(
            ReadRow(scope, key), owner, version, clock_->NowMillis())) {
      return *answer;
    }
    bool held = false;
    db_->Write(
        [&](Connection& w) {
          held = rows_.Confirm(w, scope, key, owner, version, clock_->NowMillis());
        },
        1, version == kUnversioned ? sqlite::WriteSync::kDurable : sqlite::WriteSync::kLazy);
    return held;
  }

  bool Release(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateReservation(scope, key, owner);
    ValidateVersion(version);
    if (!sqlite::ReservationRows::Releasable(ReadRow(scope, key), owner, version)) return false;
    bool released = false;
    db_->Write([&](Connection& w) { released = rows_.Release(w, scope, key, owner, version); }, 1,
               sqlite::WriteSync::kLazy);
    return released;
  }

  bool Abandon(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold) override {
    ValidateReservation(scope, key, owner);
    Require(!hold.empty(), "reservation hold (attempt id) is empty");
    bool abandoned = false;
    db_->Write(
        [&](Connection& w) {
          std::optional<Reservation> r = rows_.Load(w, scope, key);
          abandoned = false;
          if (!r || r->owner != owner || r->state != ReservationState::kPending) return;
          if (r->holds.erase(hold) == 0) return;
          if (r->holds.empty()) {
            rows_.Delete(w, scope, key);
          } else {
            rows_.Save(w, scope, *r);
          }
          abandoned = true;
        },
        1, sqlite::WriteSync::kLazy);
    return abandoned;
  }

  std::optional<Reservation> Find(const ReservationScope& scope, const std::string& key) override {
    ValidateReservationKey(scope, key);
    return ReadRow(scope, key);
  }

  // A SQLite log on this file applies its streams' key facts in its appends (sqlite_event_log.cc);
  // wrappers pass appends through to the log they wrap.
  bool ConfirmsOnAppend(const EventLog& log) const override {
    const EventLog* target = &log;
    while (const auto* wrapper = dynamic_cast<const EventLogWrapper*>(target)) {
      target = &wrapper->target();
    }
    const auto* sqlite_log = dynamic_cast<const SqliteBacked*>(target);
    return sqlite_log != nullptr && &sqlite_log->database() == db_.get();
  }

  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) override {
    ValidateReservationKey(scope, after_key.empty() ? "-" : after_key);
    Require(limit > 0, "list limit must be positive, got " + std::to_string(limit));
    return db_->Read([&](Connection& r) { return rows_.List(r, scope, after_key, limit); });
  }

 private:
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
