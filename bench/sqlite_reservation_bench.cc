// The SQLite reservation store: reserve then confirm a fresh key (what a command that takes a new
// name does, around its append), beside raw SQLite doing the same two writes (insert the pending
// row, then update it to confirmed, one transaction each) on an equivalent table, with the same
// journal mode (WAL) and synchronous level (FULL), in the same run.
//
// Items are keys; compare items_per_second. docs/PERFORMANCE.md gives the figures and commands.
#include <benchmark/benchmark.h>

#include "bench_support.h"
#include "wow/reservation_store.h"
#include "wow/sqlite.h"

namespace wow::bench {
namespace {

using Synchronous = SqliteOptions::Synchronous;
constexpr std::chrono::milliseconds kTtl{30'000};

ReservationScope Names() { return {kContext, "brand", kTenant, kNames}; }

void BM_Wow_ReserveConfirm(benchmark::State& state) {
  static BenchDir dir;
  static auto db = OpenSqliteDatabase(dir.File("keys.db"), Options(Synchronous::kFull));
  static auto keys = NewSqliteReservationStore(db, SystemClock::Instance());
  for (auto _ : state) {
    const std::string key = NextId("name-");
    const AggregateRef owner{kContext, "brand", kTenant, NextId("b-")};
    if (!keys->Reserve(Names(), key, owner, NewId(), kTtl) ||
        !keys->Confirm(Names(), key, owner, 1)) {
      state.SkipWithError("a fresh key was not taken");
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Wow_ReserveConfirm)->UseRealTime();

// The store's own table layout, written with raw SQLite: INSERT the pending row (one
// transaction), then UPDATE it to confirmed (another).
void BM_Raw_ReserveConfirm(benchmark::State& state) {
  static BenchDir dir;
  static RawDb db(dir.File("raw-keys.db"), Synchronous::kFull);
  static const bool created = [] {
    CreateRawReservationTable(db, "keys");
    return true;
  }();
  benchmark::DoNotOptimize(created);
  static auto reserve = db.Prepare(
      "INSERT INTO keys (tenant_id, ns, key, owner_tenant_id, owner_id, expires_at, holds, "
      "version) VALUES (?1, ?2, ?3, ?1, ?4, ?5, ?6, NULL)");
  static auto confirm = db.Prepare(
      "UPDATE keys SET expires_at = NULL, holds = '[]', version = 1 WHERE tenant_id = ?1 AND "
      "ns = ?2 AND key = ?3");
  const std::string tenant = kTenant;
  const std::string ns = kNames;
  for (auto _ : state) {
    const std::string key = NextId("name-");
    const std::string owner = NextId("b-");
    const std::string holds = "[\"" + NewId() + "\"]";
    db.Execute("BEGIN IMMEDIATE");
    reserve->Bind(1, tenant).Bind(2, ns).Bind(3, key).Bind(4, owner);
    reserve->Bind(5, SystemClock::Instance()->NowMillis() + kTtl.count()).Bind(6, holds);
    reserve->Run();
    db.Execute("COMMIT");
    db.Execute("BEGIN IMMEDIATE");
    confirm->Bind(1, tenant).Bind(2, ns).Bind(3, key);
    confirm->Run();
    db.Execute("COMMIT");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Raw_ReserveConfirm)->UseRealTime();

}  // namespace
}  // namespace wow::bench

BENCHMARK_MAIN();
