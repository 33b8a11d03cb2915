// StoreSet: the three stores of one bounded context (its EventLog, ReservationStore and
// TimerStore), and the ReadModelStore of its projections, opened together from one URI, sharing
// one handle (a SQLite file; a MongoDB client pool), with what the backend promises about them.
//
// OpenStores takes a URI:
//   memory:        fresh in-memory stores, gone with the process (tests, demos)
//   sqlite:PATH    a SQLite database file, created when missing (not its directory)
//   PATH           the same: a bare path is a SQLite file
//   mongodb://...  a MongoDB replica set or mongos (also mongodb+srv://; libmongoc's URI, its
//                  database the stores' own): the deployment opened and checked, then the
//                  MongoDB log, reservations and timers on its one client pool (wow/mongo.h)
// Programs take it as `--store URI`; nothing above the store set needs to know which backend it
// runs on. The stores hold the shared handle, so it is closed after the last of them goes.
//
// Thread-safety: a StoreSet is an immutable value once opened (copies share the stores); the
// stores are safe for concurrent use.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wow/event_log.h"
#include "wow/model.h"
#include "wow/mongo_options.h"
#include "wow/read_model.h"
#include "wow/reservation_store.h"
#include "wow/sqlite_options.h"
#include "wow/timer_store.h"

namespace wow {

// A store URI, parsed.
struct StoreUri {
  enum class Kind { kMemory, kSqlite, kMongo };
  Kind kind = Kind::kMemory;
  std::string location;  // kSqlite: the file's path; kMongo: the whole URI; kMemory: ""
};

// Parses `uri` (see the file comment; also mongodb:// and mongodb+srv://, which this build may
// not open). Throws Error(kInvalidArgument) naming the accepted forms for an empty URI, a scheme
// it does not know, `sqlite:` without a path, or `memory:` followed by anything.
StoreUri ParseStoreUri(std::string_view uri);

// A figure a backend reports about itself, for a service's metrics (the SQLite writer's
// transactions and syncs, say). Names follow Prometheus (`wow_sqlite_syncs_total`).
struct StoreMetric {
  std::string name;
  std::string help;
  bool counter = true;  // a counter; else a gauge
  double value = 0;
};

struct StoreSetOptions {
  // The clock the stores judge expiry and due times by; null: SystemClock.
  std::shared_ptr<const Clock> clock;
  // The partition count: 0 opens the context's log as it is, creating it with
  // `new_log_partitions` when it does not exist; another value creates the log with that many or
  // checks an existing log has that many (Error(kFailedPrecondition) naming both otherwise).
  int partitions = 0;
  int new_log_partitions = 16;
  // For sqlite: URIs.
  SqliteOptions sqlite;
  // For mongodb: URIs.
  MongoOptions mongo;
};

class StoreSet {
 public:
  // What a store set is made of. `appends_confirm_keys`: every append to `log` confirms and
  // releases its stream's keys in `reservations` within the append's own transaction, checking
  // the attempt still holds them (a SQLite log and reservation store on one file; the memory
  // log and reservation store of memory:). Then the processor skips its own confirmation and no
  // reservation subscription is needed.
  struct Parts {
    std::string uri;
    std::string context;
    std::shared_ptr<const Clock> clock;
    std::shared_ptr<EventLog> log;
    std::shared_ptr<ReservationStore> reservations;
    std::shared_ptr<TimerStore> timers;
    bool appends_confirm_keys = false;
    // The backend's figures, read when called; null: none.
    std::function<std::vector<StoreMetric>()> metrics;
    // The projections' rows (wow/read_model.h); null: the set has none, and projections cannot
    // run on it.
    std::shared_ptr<ReadModelStore> read_models;
  };

  // A store set of `parts`. Throws Error(kInvalidArgument) when a store or the clock is null, or
  // the log is not of `context`.
  explicit StoreSet(Parts parts);

  const std::string& uri() const { return parts_.uri; }
  const std::string& context() const { return parts_.context; }
  const std::shared_ptr<const Clock>& clock() const { return parts_.clock; }
  const std::shared_ptr<EventLog>& log() const { return parts_.log; }
  const std::shared_ptr<ReservationStore>& reservations() const { return parts_.reservations; }
  const std::shared_ptr<TimerStore>& timers() const { return parts_.timers; }
  // Null when the set has no read models.
  const std::shared_ptr<ReadModelStore>& read_models() const { return parts_.read_models; }
  int partitions() const { return parts_.log->partitions(); }
  bool appends_confirm_keys() const { return parts_.appends_confirm_keys; }

  // The backend's figures now (empty when it reports none).
  std::vector<StoreMetric> Metrics() const;

  // This set with some stores replaced by wrappers of them (a null argument keeps this set's):
  // for fault injection and metering. appends_confirm_keys is kept: a log wrapper must pass
  // appends through to this set's log, and a reservation store must wrap this set's, for it to
  // stay true.
  StoreSet With(std::shared_ptr<EventLog> log, std::shared_ptr<ReservationStore> reservations,
                std::shared_ptr<TimerStore> timers = nullptr) const;

 private:
  Parts parts_;
};

// Opens the stores of `context` at `uri` (see the file comment), its log created or checked as
// options.partitions says. Throws Error(kInvalidArgument) for a malformed URI or context,
// Error(kFailedPrecondition) for a backend this build does not have (naming it) or a partition
// count other than the log's, and the backend's Error when it cannot open (wow/sqlite.h).
StoreSet OpenStores(std::string_view uri, std::string_view context,
                    const StoreSetOptions& options = {});

}  // namespace wow
