// The SQLite event log: appends (one stream per transaction, AppendAll batches, concurrent
// appenders batched by group commit) and the catch-up read rate of a tail over 1M entries, each
// beside raw SQLite doing the same inserts or reads on an equivalent table, with the same journal
// mode (WAL), synchronous level (FULL for appends) and batch size, in the same run.
//
// Items are streams (appends) or entries (reads); compare items_per_second. docs/PERFORMANCE.md
// gives the figures and the commands.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <iostream>

#include "bench_support.h"
#include "wow/event_log.h"
#include "wow/sqlite.h"

namespace wow::bench {
namespace {

using Synchronous = SqliteOptions::Synchronous;
constexpr int kPartitions = 16;

// A fresh database file with a created log. Each benchmark function keeps its own (a static), so
// the benchmarks do not share a file's growth.
struct LogFixture {
  explicit LogFixture(Synchronous synchronous)
      : db(OpenSqliteDatabase(dir.File("log.db"), Options(synchronous))),
        log(NewSqliteEventLog(db, kContext, SystemClock::Instance())) {
    log->Create(kPartitions);
  }
  BenchDir dir;
  std::shared_ptr<SqliteDatabase> db;
  std::unique_ptr<EventLog> log;
  StreamFactory streams;
};

// A fresh raw database with the equivalent log table.
struct RawFixture {
  explicit RawFixture(Synchronous synchronous)
      : path(dir.File("raw.db")), db(path, synchronous), next_sequence(kPartitions, 0) {
    CreateRawLogTable(db, "log");
    insert = db.Prepare(RawInsertSql("log"));
    events = streams.EventsText();
    facts = streams.FactsText();
  }
  BenchDir dir;
  std::string path;
  RawDb db;
  StreamFactory streams;
  std::unique_ptr<RawStatement> insert;
  std::string events;
  std::string facts;
  std::vector<std::int64_t> next_sequence;
};

void CountAppended(benchmark::State& state, const std::vector<AppendResult>& results) {
  for (const AppendResult& result : results) {
    if (!result.appended()) state.SkipWithError("a stream was not appended");
  }
}

// ---- one stream per transaction, and AppendAll batches ----------------------------------------

void BM_Wow_Append(benchmark::State& state) {
  static LogFixture f(Synchronous::kFull);
  for (auto _ : state) {
    CountAppended(state, {f.log->Append(f.streams.FreshStream())});
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Wow_Append)->UseRealTime();

void BM_Wow_AppendAll(benchmark::State& state) {
  static LogFixture f(Synchronous::kFull);
  const int batch = static_cast<int>(state.range(0));
  for (auto _ : state) {
    std::vector<Stream> streams;
    streams.reserve(static_cast<size_t>(batch));
    for (int i = 0; i < batch; ++i) streams.push_back(f.streams.FreshStream());
    CountAppended(state, f.log->AppendAll(streams));
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_Wow_AppendAll)->Arg(16)->Arg(256)->UseRealTime();

// Raw SQLite: BEGIN IMMEDIATE, `batch` INSERTs, COMMIT. Batch 1 is one row per transaction.
void BM_Raw_InsertBatch(benchmark::State& state) {
  static RawFixture f(Synchronous::kFull);
  const int batch = static_cast<int>(state.range(0));
  for (auto _ : state) {
    f.db.Execute("BEGIN IMMEDIATE");
    InsertRawRows(*f.insert, f.streams, f.events, f.facts, batch, kPartitions, f.next_sequence);
    f.db.Execute("COMMIT");
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_Raw_InsertBatch)->Arg(1)->Arg(16)->Arg(256)->UseRealTime();

// ---- 8 threads appending one stream at a time: group commit -----------------------------------

void BM_Wow_AppendConcurrent(benchmark::State& state) {
  static LogFixture f(Synchronous::kFull);  // created by the first thread, before the loops start
  for (auto _ : state) {
    CountAppended(state, {f.log->Append(f.streams.FreshStream())});
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Wow_AppendConcurrent)->Threads(8)->UseRealTime();

// Raw SQLite, 8 threads, each with its own connection, one row per transaction: what threads or
// processes get from SQLite without group commit (they take turns on the write lock).
void BM_Raw_InsertConcurrent(benchmark::State& state) {
  static RawFixture f(Synchronous::kFull);
  static std::vector<std::atomic<std::int64_t>> next(kPartitions);
  RawDb db(f.path, Synchronous::kFull);
  const auto insert = db.Prepare(RawInsertSql("log"));
  for (auto _ : state) {
    const Stream s = f.streams.FreshStream();
    const int partition = PartitionOf(s.ref.tenant_id, s.ref.id, kPartitions);
    db.Execute("BEGIN IMMEDIATE");
    BindRawRow(*insert, s, partition, ++next[static_cast<size_t>(partition)], f.events, f.facts,
               f.streams.Transport());
    insert->Run();
    db.Execute("COMMIT");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Raw_InsertConcurrent)->Threads(8)->UseRealTime();

// ---- catch-up reads over 1M entries -----------------------------------------------------------

// The log a tail catches up with: WOW_BENCH_CATCHUP_ENTRIES entries (default 1,000,000) over 16
// partitions, built once per run with AppendAll batches of 1000 and synchronous=OFF.
struct CatchUpFixture {
  CatchUpFixture()
      : db(OpenSqliteDatabase(dir.File("catchup.db"), Options(Synchronous::kOff))),
        log(NewSqliteEventLog(db, kContext, SystemClock::Instance())) {
    const char* text = std::getenv("WOW_BENCH_CATCHUP_ENTRIES");
    entries = text ? std::atoll(text) : 1'000'000;
    log->Create(kPartitions);
    const auto started = std::chrono::steady_clock::now();
    for (std::int64_t written = 0; written < entries;) {
      const std::int64_t batch = std::min<std::int64_t>(1000, entries - written);
      std::vector<Stream> streams;
      for (std::int64_t i = 0; i < batch; ++i) streams.push_back(factory.FreshStream());
      for (const AppendResult& r : log->AppendAll(streams)) {
        if (!r.appended()) throw std::runtime_error("building the catch-up log failed");
      }
      written += batch;
    }
    std::cerr << "catch-up log of " << entries << " entries built in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - started)
                     .count()
              << " ms\n";
  }
  BenchDir dir;
  std::shared_ptr<SqliteDatabase> db;
  std::unique_ptr<EventLog> log;
  StreamFactory factory;
  std::int64_t entries = 0;
};

CatchUpFixture& CatchUp() {
  static CatchUpFixture fixture;
  return fixture;
}

// A tail catching up: every partition read from the start with ReadAfter, `limit` entries a call,
// until it is read to its end.
void BM_Wow_CatchUp(benchmark::State& state) {
  CatchUpFixture& f = CatchUp();
  const int limit = static_cast<int>(state.range(0));
  for (auto _ : state) {
    std::int64_t read = 0;
    for (int p = 0; p < kPartitions; ++p) {
      for (Sequence after = 0;;) {
        const std::vector<Entry> entries = f.log->ReadAfter(p, after, limit);
        if (entries.empty()) break;
        after = entries.back().position.sequence;
        read += static_cast<std::int64_t>(entries.size());
        benchmark::DoNotOptimize(entries.data());
      }
    }
    if (read != f.entries) state.SkipWithError("the catch-up did not read every entry");
  }
  state.SetItemsProcessed(state.iterations() * f.entries);
}
// 10,000 a call: a large limit; 256: the SubscriptionRunner's default batch.
BENCHMARK(BM_Wow_CatchUp)
    ->Arg(10'000)
    ->Arg(256)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The store's log rows copied, in position order, into a fresh table of the same layout
// (CreateRawLogTable): their pages filled one after the other, as appends in position order would
// fill them, where the store's appends fill 16 partitions' ranges at once. Built on first use.
const std::string& PackedTable() {
  static const std::string name = [] {
    CatchUpFixture& f = CatchUp();
    RawDb db(f.dir.File("catchup.db"), Synchronous::kOff);
    CreateRawLogTable(db, "packed");
    db.Execute(
        "INSERT INTO packed SELECT * FROM \"wow_log__bench__brand\" ORDER BY position;"
        "PRAGMA wal_checkpoint(TRUNCATE);");
    return std::string("packed");
  }();
  return name;
}

// Raw SQLite reading the same rows as the store's ReadAfter, page by page (`limit` a query, by a
// rowid range) in read transactions, copying every column, without decoding anything (the store
// also decodes the events and facts). Argument 2 picks the table:
//   0 store_table: the store's own table in the same file;
//   1 packed:      the same rows in PackedTable.
void BM_Raw_CatchUp(benchmark::State& state) {
  CatchUpFixture& f = CatchUp();
  const int limit = static_cast<int>(state.range(0));
  const bool packed = state.range(1) == 1;
  state.SetLabel(packed ? "packed" : "store_table");
  const std::string table = packed ? PackedTable() : "\"wow_log__bench__brand\"";
  RawDb db(f.dir.File("catchup.db"), Synchronous::kOff);
  const auto select = db.Prepare(
      "SELECT position, tenant_id, aggregate_id, version, request_id, time, events, facts, "
      "transport FROM " +
      table + " WHERE position > ?1 AND position <= ?2 ORDER BY position");
  struct Row {
    std::int64_t position, version, time;
    std::string tenant_id, aggregate_id, request_id, events, facts, transport;
  };
  for (auto _ : state) {
    std::int64_t read = 0;
    for (int p = 0; p < kPartitions; ++p) {
      for (std::int64_t after = 0;;) {
        std::vector<Row> rows;
        db.Execute("BEGIN");
        const std::int64_t base = std::int64_t{p} << 40;
        select->Bind(1, base | after).Bind(2, base | (after + limit));
        while (select->Step()) {
          rows.push_back({select->Int(0), select->Int(3), select->Int(5), select->Text(1),
                          select->Text(2), select->Text(4), select->Text(6), select->Text(7),
                          select->Text(8)});
        }
        select->Reset();
        db.Execute("COMMIT");
        if (rows.empty()) break;
        after = rows.back().position - base;
        read += static_cast<std::int64_t>(rows.size());
        benchmark::DoNotOptimize(rows.data());
      }
    }
    if (read != f.entries) state.SkipWithError("the raw catch-up did not read every row");
  }
  state.SetItemsProcessed(state.iterations() * f.entries);
}
BENCHMARK(BM_Raw_CatchUp)
    ->Args({10'000, 0})
    ->Args({10'000, 1})
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace wow::bench

BENCHMARK_MAIN();
