// ReservationRows (private): a key's row of the SQLite file, read, written, and changed by the
// reservation rules (core/reservation_rules.h) on a connection the caller holds. The reservation
// store runs them in its own write transactions; the event log confirms and releases a stream's
// keys inside the transaction that appends the stream.
//
// Thread-safety: stateless apart from the database it was made with; use each connection from
// one thread at a time, as SqliteDatabase hands them out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/reservation_rules.h"
#include "store/sqlite/connection.h"
#include "wow/model.h"
#include "wow/reservation_store.h"

namespace wow {

class SqliteDatabase;

namespace sqlite {

class ReservationRows {
 public:
  // REQUIRES: `db` is not null when a method runs, and outlives this.
  explicit ReservationRows(SqliteDatabase* db) : db_(db) {}

  // The reservation of `key` in `scope` as stored (an expired pending one included), or nullopt.
  std::optional<Reservation> Load(Connection& c, const ReservationScope& scope,
                                  const std::string& key) const;
  // The reservations of `scope` with keys after `after_key`, by key, at most `limit`.
  std::vector<Reservation> List(Connection& c, const ReservationScope& scope,
                                const std::string& after_key, int limit) const;
  // In a write transaction: stores `r` as the row of `r.key`, creating the table when missing.
  void Save(Connection& w, const ReservationScope& scope, const Reservation& r) const;
  // In a write transaction: deletes the row of `key`, if any. REQUIRES: the scope's table exists
  // (its callers have just loaded the row from it).
  void Delete(Connection& w, const ReservationScope& scope, const std::string& key) const;

  // In a write transaction: applies `op` to the key's row by the reservation rules
  // (core/reservation_rules.h) at `now`, and returns the outcome (its answer, and what it wrote).
  core::ReservationOutcome Apply(Connection& w, const ReservationScope& scope,
                                 const std::string& key, const core::ReservationOp& op,
                                 EpochMillis now) const;

 private:
  SqliteDatabase* const db_;
};

}  // namespace sqlite
}  // namespace wow
