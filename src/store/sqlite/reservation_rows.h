// ReservationRows (private): the reservation rules of DESIGN §5.1 applied to a key's row in the
// SQLite file, on a connection the caller holds. The reservation store runs them in its own write
// transactions; the event log runs Confirm and Release for a stream's key facts inside the
// transaction that appends the stream.
//
// Thread-safety: stateless apart from the database it was made with; use each connection from
// one thread at a time, as SqliteDatabase hands them out.
#pragma once

#include <optional>
#include <string>
#include <vector>

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

  // In a write transaction: ReservationStore::Confirm at `now`. Returns false when another owner
  // holds the key (nothing written).
  bool Confirm(Connection& w, const ReservationScope& scope, const std::string& key,
               const AggregateRef& owner, Version version, EpochMillis now) const;
  // In a write transaction: ReservationStore::Release. Returns whether the key was deleted.
  bool Release(Connection& w, const ReservationScope& scope, const std::string& key,
               const AggregateRef& owner, Version version) const;

  // Whether a Confirm of `seen` (as read) would write nothing and return `*answer`; nullopt when it
  // must write. Lets a caller answer from a read without the write lock.
  static std::optional<bool> ConfirmAnswerWithoutWrite(const std::optional<Reservation>& seen,
                                                       const AggregateRef& owner, Version version,
                                                       EpochMillis now);
  // Whether a Release of `seen` (as read) would delete it.
  static bool Releasable(const std::optional<Reservation>& seen, const AggregateRef& owner,
                         Version version);

 private:
  SqliteDatabase* const db_;
};

}  // namespace sqlite
}  // namespace wow
