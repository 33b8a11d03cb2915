// A whole command on SQLite: the catalog's CreateBrand through the CommandProcessor (load, decide,
// reserve the name, append with its confirmation), from 1 and 8 threads, beside raw SQLite doing
// the writes such a command makes (insert the pending key, insert the stream's row, confirm the
// key): three single-row transactions, and the two transactions of today's write path batched for
// many clients, with the same journal mode (WAL) and synchronous levels, in the same run.
//
// Items are commands; compare items_per_second. docs/PERFORMANCE.md gives the figures and commands.
#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "bench_support.h"
#include "catalog.h"
#include "wow/command_processor.h"
#include "wow/sqlite.h"

namespace wow::bench {
namespace {

using Synchronous = SqliteOptions::Synchronous;
constexpr int kPartitions = 16;

struct ProcessorFixture {
  ProcessorFixture()
      : db(OpenSqliteDatabase(dir.File("catalog.db"), Options(Synchronous::kFull))),
        log(NewSqliteEventLog(db, std::string(eshop::kContext), SystemClock::Instance())),
        keys(NewSqliteReservationStore(db, SystemClock::Instance())) {
    log->Create(kPartitions);
    processor = std::make_unique<CommandProcessor>(log, keys, SystemClock::Instance());
    processor->Register(eshop::BrandType());
  }
  BenchDir dir;
  std::shared_ptr<SqliteDatabase> db;
  std::shared_ptr<EventLog> log;
  std::shared_ptr<ReservationStore> keys;
  std::unique_ptr<CommandProcessor> processor;
};

void BM_Wow_ProcessCreateBrand(benchmark::State& state) {
  static ProcessorFixture f;  // created by the first thread, before the loops start
  for (auto _ : state) {
    const std::string id = NextId("b-");
    const CommandResult result =
        f.processor->Process({std::string(eshop::kContext), "brand", kTenant, id},
                             CommandMessage::Of(eshop::CreateBrand{"Brand " + id}));
    if (result.kind != CommandResult::Kind::kAccepted) state.SkipWithError("a create failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Wow_ProcessCreateBrand)->Threads(1)->Threads(8)->UseRealTime();

// Raw SQLite: the three single-row write transactions of a command, on one connection.
void BM_Raw_ThreeWritesPerCommand(benchmark::State& state) {
  static BenchDir dir;
  static RawDb db(dir.File("raw.db"), Synchronous::kFull);
  static const bool created = [] {
    CreateRawLogTable(db, "log");
    CreateRawReservationTable(db, "keys");
    return true;
  }();
  benchmark::DoNotOptimize(created);
  static StreamFactory streams;
  static const std::string events = streams.EventsText();
  static const std::string facts = streams.FactsText();
  static std::vector<std::int64_t> next_sequence(kPartitions, 0);
  static auto insert = db.Prepare(RawInsertSql("log"));
  static auto reserve = db.Prepare(
      "INSERT INTO keys (tenant_id, ns, key, owner_tenant_id, owner_id, expires_at, holds, "
      "version) VALUES (?1, ?2, ?3, ?1, ?4, ?5, '[\"hold\"]', NULL)");
  static auto confirm = db.Prepare(
      "UPDATE keys SET expires_at = NULL, holds = '[]', version = 1 WHERE tenant_id = ?1 AND "
      "ns = ?2 AND key = ?3");
  const std::string tenant = kTenant;
  const std::string ns = kNames;
  for (auto _ : state) {
    const std::string key = NextId("name-");
    const std::string owner = NextId("o-");
    db.Execute("BEGIN IMMEDIATE");
    reserve->Bind(1, tenant).Bind(2, ns).Bind(3, key).Bind(4, owner).Bind(5, 0);
    reserve->Run();
    db.Execute("COMMIT");
    db.Execute("BEGIN IMMEDIATE");
    InsertRawRows(*insert, streams, events, facts, 1, kPartitions, next_sequence);
    db.Execute("COMMIT");
    db.Execute("BEGIN IMMEDIATE");
    confirm->Bind(1, tenant).Bind(2, ns).Bind(3, key);
    confirm->Run();
    db.Execute("COMMIT");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Raw_ThreeWritesPerCommand)->UseRealTime();

// Raw SQLite: the two write transactions a command takes now, batched as the group commit at its
// best would batch the commands of `batch` concurrent clients, on one connection: the pending keys
// of the batch in one transaction (synchronous=NORMAL, as the store's lazy writes), then their
// streams' rows and key confirmations in one (FULL). No checks, no savepoints, no decoding: a floor
// for what one SQLite file's writer spends per command. The second argument: 0 numbers the keys in
// order, so a batch's keys share a few pages; 1 scatters them over the table, as names are.
void BM_Raw_TwoBatchedWritesPerCommand(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  const bool scattered = state.range(1) != 0;
  BenchDir dir;
  RawDb db(dir.File("raw-batched.db"), Synchronous::kFull);
  CreateRawLogTable(db, "log");
  CreateRawReservationTable(db, "keys");
  StreamFactory streams;
  const std::string events = streams.EventsText();
  const std::string facts = streams.FactsText();
  std::vector<std::int64_t> next_sequence(kPartitions, 0);
  auto insert = db.Prepare(RawInsertSql("log"));
  auto reserve = db.Prepare(
      "INSERT INTO keys (tenant_id, ns, key, owner_tenant_id, owner_id, expires_at, holds, "
      "version) VALUES (?1, ?2, ?3, ?1, ?4, ?5, '[\"hold\"]', NULL)");
  auto confirm = db.Prepare(
      "UPDATE keys SET expires_at = NULL, holds = '[]', version = 1 WHERE tenant_id = ?1 AND "
      "ns = ?2 AND key = ?3");
  const std::string tenant = kTenant;
  const std::string ns = kNames;
  std::vector<std::string> keys(static_cast<size_t>(batch));
  for (auto _ : state) {
    db.Execute("PRAGMA synchronous = NORMAL; BEGIN IMMEDIATE");
    for (std::string& key : keys) {
      key = NextId("name-");
      if (scattered) key = "name-" + std::to_string(std::hash<std::string>{}(key));
      reserve->Bind(1, tenant).Bind(2, ns).Bind(3, key).Bind(4, NextId("o-")).Bind(5, 0);
      reserve->Run();
    }
    db.Execute("COMMIT; PRAGMA synchronous = FULL; BEGIN IMMEDIATE");
    InsertRawRows(*insert, streams, events, facts, batch, kPartitions, next_sequence);
    for (const std::string& key : keys) {
      confirm->Bind(1, tenant).Bind(2, ns).Bind(3, key);
      confirm->Run();
    }
    db.Execute("COMMIT");
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_Raw_TwoBatchedWritesPerCommand)
    ->Args({64, 0})
    ->Args({256, 0})
    ->Args({4, 1})
    ->Args({64, 1})
    ->Args({256, 1})
    ->UseRealTime();

}  // namespace
}  // namespace wow::bench

BENCHMARK_MAIN();
