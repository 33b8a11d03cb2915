// The contract suites over the SQLite stores, each test on a fresh database file in its own
// directory. The stores of one test share nothing; synchronous=NORMAL keeps the suites fast (the
// contracts are about semantics; durability is tested in tests/sqlite).
#include "contract/backends.h"
#include "sqlite/sqlite_test_support.h"
#include "wow/sqlite.h"

namespace wow::contract {
namespace {

std::shared_ptr<SqliteDatabase> OpenIn(const BackendEnv& env) {
  SqliteOptions options;
  options.synchronous = SqliteOptions::Synchronous::kNormal;
  return OpenSqliteDatabase(env.dir->File("wow.db"), options);
}

Backend SqliteBackend() {
  return Backend{
      "Sqlite",
      [](const BackendEnv& env) { return NewSqliteReservationStore(OpenIn(env), env.clock); },
      [](const BackendEnv& env, const std::string& context) {
        return NewSqliteEventLog(OpenIn(env), context, env.clock);
      },
      [](const BackendEnv& env, const std::string& context, int partitions) {
        return NewSqliteTimerStore(OpenIn(env), context, partitions);
      },
      [](const BackendEnv& env, const std::string& context) {
        std::shared_ptr<SqliteDatabase> db = OpenIn(env);
        return Backend::ReadModels{NewSqliteEventLog(db, context, env.clock),
                                   NewSqliteReadModelStore(db, context)};
      },
      /*load_percent=*/100,
      [](const BackendEnv& env, const std::string& context) {
        std::shared_ptr<SqliteDatabase> db = OpenIn(env);
        return Backend::KeyConfirmingLog{NewSqliteEventLog(db, context, env.clock),
                                         NewSqliteReservationStore(db, env.clock)};
      },
  };
}

// The reservation tables the suite uses, in the layout of earlier builds: files written by them
// keep it.
Backend SqliteEarlierReservationTablesBackend() {
  Backend backend = SqliteBackend();
  backend.name = "SqliteEarlierReservationTables";
  backend.reservations = [](const BackendEnv& env) {
    auto db = OpenIn(env);
    for (const auto& [context, aggregate] :
         {std::pair{"shop", "user"}, std::pair{"shop", "admin"}, std::pair{"crm", "user"}}) {
      sqlite_test::CreateEarlierReservationTable(env.dir->File("wow.db"), context, aggregate);
    }
    return NewSqliteReservationStore(db, env.clock);
  };
  backend.key_confirming_log = [](const BackendEnv& env, const std::string& context) {
    std::shared_ptr<SqliteDatabase> db = OpenIn(env);
    sqlite_test::CreateEarlierReservationTable(env.dir->File("wow.db"), context, "brand");
    return Backend::KeyConfirmingLog{NewSqliteEventLog(db, context, env.clock),
                                     NewSqliteReservationStore(db, env.clock)};
  };
  return backend;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, ReservationStoreContract,
                         ::testing::Values(SqliteBackend(),
                                           SqliteEarlierReservationTablesBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Sqlite, ReservationStoreModel,
                         ::testing::Values(SqliteBackend(),
                                           SqliteEarlierReservationTablesBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Sqlite, KeyConfirmingLogContract,
                         ::testing::Values(SqliteBackend(),
                                           SqliteEarlierReservationTablesBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Sqlite, EventLogContract, ::testing::Values(SqliteBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Sqlite, ReadModelStoreContract, ::testing::Values(SqliteBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Sqlite, TimerStoreContract, ::testing::Values(SqliteBackend()),
                         BackendName());

}  // namespace
}  // namespace wow::contract
