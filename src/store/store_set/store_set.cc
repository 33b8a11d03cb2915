// OpenStores: a store URI to the backend's three stores (include/wow/store_set.h), in a library
// of its own (wow::stores) because it links every backend this build has.
#include "wow/store_set.h"

#include "store/memory/memory_stores.h"
#include "wow/error.h"
#ifdef WOW_HAVE_SQLITE
#include "wow/sqlite.h"
#endif
#ifdef WOW_HAVE_MONGO
#include "wow/mongo.h"
#endif

namespace wow {
namespace {

// Opens the log as `options` says and returns its partition count.
int OpenLog(EventLog& log, const StoreSetOptions& options) {
  if (options.partitions != 0) {
    log.Create(options.partitions);
    return options.partitions;
  }
  try {
    return log.Open();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kFailedPrecondition) throw;
  }
  log.Create(options.new_log_partitions);  // a new log
  return options.new_log_partitions;
}

StoreSet OpenMemory(std::string_view uri, const std::string& context,
                    std::shared_ptr<const Clock> clock, const StoreSetOptions& options) {
  // The log confirms its keys in the reservation store's table, within the append.
  memory::LogAndReservations stores = memory::NewLogAndReservations(context, clock);
  const int partitions = OpenLog(*stores.log, options);
  return StoreSet({std::string(uri), context, clock, std::move(stores.log),
                   std::move(stores.reservations), NewMemoryTimerStore(context, partitions),
                   /*appends_confirm_keys=*/true, nullptr, NewMemoryReadModelStore()});
}

#ifdef WOW_HAVE_SQLITE
std::vector<StoreMetric> SqliteMetrics(const std::shared_ptr<SqliteDatabase>& db) {
  const SqliteWriteStats s = SqliteStats(db);
  const auto count = [](std::uint64_t value) { return static_cast<double>(value); };
  return {
      {"wow_sqlite_transactions_total", "Write transactions committed.", true,
       count(s.transactions)},
      {"wow_sqlite_writes_total",
       "Writes those transactions held (group commit: writes per transaction).", true,
       count(s.works)},
      {"wow_sqlite_synced_transactions_total",
       "Transactions acknowledged only once synced to disk.", true, count(s.synced)},
      {"wow_sqlite_syncs_total", "Syncs of the write-ahead log.", true, count(s.syncs)},
      {"wow_sqlite_reader_syncs_total",
       "Syncs a tail ran before delivering entries another process may not have synced.", true,
       count(s.reader_syncs)},
      {"wow_sqlite_checkpoints_total", "Checkpoints the checkpointer thread ran (the write-ahead log copied into the file).", true,
       count(s.checkpoints)},
      {"wow_sqlite_writing_seconds_total", "Time the single writer spent in write transactions (its rate is the writer's load).", true,
       static_cast<double>(s.writing_micros) / 1e6},
      {"wow_sqlite_syncing_seconds_total", "Time spent syncing the write-ahead log.", true,
       static_cast<double>(s.syncing_micros) / 1e6},
  };
}

StoreSet OpenSqlite(std::string_view uri, const std::string& path, const std::string& context,
                    std::shared_ptr<const Clock> clock, const StoreSetOptions& options) {
  ValidateTypeName(context, "context");
  std::shared_ptr<SqliteDatabase> db = OpenSqliteDatabase(path, options.sqlite);
  std::shared_ptr<EventLog> log = NewSqliteEventLog(db, context, clock);
  const int partitions = OpenLog(*log, options);
  // The log and the reservations share the file: each append confirms its keys in its own
  // transaction, after checking its attempt still holds them (sqlite_event_log.cc).
  return StoreSet({std::string(uri), context, clock, log, NewSqliteReservationStore(db, clock),
                   NewSqliteTimerStore(db, context, partitions), true,
                   [db] { return SqliteMetrics(db); }, NewSqliteReadModelStore(db, context)});
}
#endif

#ifdef WOW_HAVE_MONGO
// The three MongoDB stores on one deployment (one client pool). Appends do not confirm keys: the
// processor confirms them after the append, and a reservation subscription confirms what a
// crash left pending (docs/MONGODB.md).
StoreSet OpenMongo(std::string_view uri, const std::string& location, const std::string& context,
                   std::shared_ptr<const Clock> clock, const StoreSetOptions& options) {
  std::shared_ptr<MongoDeployment> deployment = OpenMongoDeployment(location, options.mongo);
  std::shared_ptr<EventLog> log = NewMongoEventLog(deployment, context, clock);
  const int partitions = OpenLog(*log, options);
  return StoreSet({std::string(uri), context, clock, log,
                   NewMongoReservationStore(deployment, clock),
                   NewMongoTimerStore(deployment, context, partitions), false, nullptr,
                   NewMongoReadModelStore(deployment, context)});
}
#endif

}  // namespace

StoreSet OpenStores(std::string_view uri, std::string_view context_name,
                    const StoreSetOptions& options) {
  const std::string context(context_name);
  const StoreUri parsed = ParseStoreUri(uri);
  ValidateTypeName(context, "context");
  Require(options.partitions >= 0, "a partition count cannot be negative");
  std::shared_ptr<const Clock> clock =
      options.clock ? options.clock : std::shared_ptr<const Clock>(SystemClock::Instance());
  switch (parsed.kind) {
    case StoreUri::Kind::kMemory:
      return OpenMemory(uri, context, std::move(clock), options);
    case StoreUri::Kind::kSqlite:
#ifdef WOW_HAVE_SQLITE
      return OpenSqlite(uri, parsed.location, context, std::move(clock), options);
#else
      throw Error(ErrorCode::kFailedPrecondition,
                  "store URI \"" + std::string(uri) +
                      "\" names a SQLite file, and this build has no SQLite backend (built with "
                      "WOW_WITH_SQLITE=OFF)");
#endif
    case StoreUri::Kind::kMongo:
      break;
  }
#ifdef WOW_HAVE_MONGO
  return OpenMongo(uri, parsed.location, context, std::move(clock), options);
#else
  throw Error(ErrorCode::kFailedPrecondition,
              "store URI names MongoDB, and this build has no MongoDB backend (built with "
              "WOW_WITH_MONGO=OFF); use sqlite:PATH");
#endif
}

}  // namespace wow
