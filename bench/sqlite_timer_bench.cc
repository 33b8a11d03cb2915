// The SQLite timer store: Due() for a batch of 100 among 1M timers (what a timer service polls),
// median latency per call, beside raw SQLite running the store's queries (and the plain one-pass
// query) on the same file, in the same run. The first argument is how many of the 16 partitions
// the node asks for (16: a single node holding every partition; 1: one of 16 nodes).
//
// docs/PERFORMANCE.md gives the figures and commands.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "bench_support.h"
#include "wow/sqlite.h"
#include "wow/timer_store.h"

namespace wow::bench {
namespace {

using Synchronous = SqliteOptions::Synchronous;
using Clock = std::chrono::steady_clock;
constexpr int kPartitions = 16;
constexpr int kBatch = 100;
constexpr EpochMillis kStart = 1'700'000'000'000;

// WOW_BENCH_TIMERS timers (default 1,000,000), one per brand, due once each over 1M ms from
// kStart in a shuffled order; built once per run by 16 threads (group commit), synchronous=OFF.
struct TimerFixture {
  TimerFixture() : db(OpenSqliteDatabase(dir.File("timers.db"), Options(Synchronous::kOff))) {
    const char* text = std::getenv("WOW_BENCH_TIMERS");
    count = text ? std::atoll(text) : 1'000'000;
    timers = NewSqliteTimerStore(db, kContext, kPartitions);
    const auto started = Clock::now();
    constexpr int kThreads = 16;
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([this, t] {
        for (std::int64_t i = t; i < count; i += kThreads) {
          Timer timer;
          timer.owner = {kContext, "brand", kTenant, std::string("o").append(std::to_string(i))};
          timer.key = "expire";
          timer.partition = PartitionOf(kTenant, timer.owner.id, kPartitions);
          timer.timer_id = NewId();
          timer.version = 1;
          timer.due_at = kStart + (i * 7919) % count;  // a permutation of 0..count-1 (prime step)
          timer.target = timer.owner;
          timer.command_type = "eshop.ExpireBrand";
          timer.body = R"({"reason":"bench"})";
          if (!timers->Put(timer)) throw std::runtime_error("building the timers failed");
        }
      });
    }
    threads.clear();
    std::cerr
        << "store of " << count << " timers built in "
        << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()
        << " ms\n";
  }
  BenchDir dir;
  std::shared_ptr<SqliteDatabase> db;
  std::unique_ptr<TimerStore> timers;
  std::int64_t count = 0;
};

TimerFixture& Timers() {
  static TimerFixture fixture;
  return fixture;
}

std::set<int> FirstPartitions(int n) {
  std::set<int> partitions;
  for (int p = 0; p < n; ++p) partitions.insert(p);
  return partitions;
}

// Half the timers are due; the call returns the 100 earliest.
void BM_Wow_Due(benchmark::State& state) {
  TimerFixture& f = Timers();
  const std::set<int> partitions = FirstPartitions(static_cast<int>(state.range(0)));
  const EpochMillis until = kStart + f.count / 2;
  std::vector<double> ms;
  for (auto _ : state) {
    const auto started = Clock::now();
    const std::vector<Timer> due = f.timers->Due(partitions, until, kBatch);
    const std::chrono::duration<double> took = Clock::now() - started;
    state.SetIterationTime(took.count());
    ms.push_back(took.count() * 1000);
    if (due.size() != kBatch) state.SkipWithError("Due did not return a full batch");
  }
  state.counters["median_ms"] = Median(ms);
}
BENCHMARK(BM_Wow_Due)->Arg(16)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);

// Raw SQLite on the same file, in one read transaction, every column copied, no decoding into
// Timer values. Argument 2 picks the query:
//   two_pass: the store's two passes: per partition the 100 earliest (due_at, timer_id, rowid)
//             from the partial index alone, then the 100 earliest of them read by rowid;
//   one_pass: per partition the 100 earliest rows read in full, then the 100 earliest of them
//             (up to partitions x 100 rows, each on its own page).
void BM_Raw_Due(benchmark::State& state) {
  TimerFixture& f = Timers();
  const int partitions = static_cast<int>(state.range(0));
  const bool two_pass = state.range(1) == 2;
  state.SetLabel(two_pass ? "two_pass" : "one_pass");
  const EpochMillis until = kStart + f.count / 2;
  RawDb db(f.dir.File("timers.db"), Synchronous::kOff);
  const std::string table = "\"wow_timer__bench__brand\"";
  const std::string columns =
      "owner_tenant_id, owner_id, key, partition, timer_id, version, due_at, target_context, "
      "target_aggregate, target_tenant_id, target_id, command_type, body, rule, state, attempt";
  const std::string where =
      " WHERE partition = ?1 AND state <> 'PARKED' AND due_at <= ?2 ORDER BY due_at, timer_id "
      "LIMIT ?3";
  const auto candidates = db.Prepare("SELECT due_at, timer_id, rowid FROM " + table + where);
  const auto by_rowid = db.Prepare("SELECT " + columns + " FROM " + table + " WHERE rowid = ?1");
  const auto full_rows = db.Prepare("SELECT " + columns + " FROM " + table + where);
  struct Row {
    std::int64_t due_at;
    std::string timer_id;
    std::int64_t rowid;
    std::vector<std::string> columns;
  };
  auto earliest = [](std::vector<Row>& rows) {
    const auto end = rows.begin() + std::min<std::ptrdiff_t>(kBatch, std::ssize(rows));
    std::partial_sort(rows.begin(), end, rows.end(), [](const Row& a, const Row& b) {
      return std::tie(a.due_at, a.timer_id) < std::tie(b.due_at, b.timer_id);
    });
    rows.erase(end, rows.end());
  };
  auto copy_columns = [](RawStatement& s) {
    std::vector<std::string> columns;
    for (int c = 0; c < 16; ++c) columns.push_back(s.Text(c));
    return columns;
  };
  std::vector<double> ms;
  for (auto _ : state) {
    const auto started = Clock::now();
    std::vector<Row> rows;
    db.Execute("BEGIN");
    for (int p = 0; p < partitions; ++p) {
      RawStatement& q = two_pass ? *candidates : *full_rows;
      q.Bind(1, p).Bind(2, until).Bind(3, kBatch);
      while (q.Step()) {
        if (two_pass) {
          rows.push_back({q.Int(0), q.Text(1), q.Int(2), {}});
        } else {
          rows.push_back({q.Int(6), q.Text(4), 0, copy_columns(q)});
        }
      }
      q.Reset();
    }
    earliest(rows);
    if (two_pass) {
      for (Row& row : rows) {
        by_rowid->Bind(1, row.rowid);
        if (by_rowid->Step()) row.columns = copy_columns(*by_rowid);
        by_rowid->Reset();
      }
    }
    db.Execute("COMMIT");
    const std::chrono::duration<double> took = Clock::now() - started;
    state.SetIterationTime(took.count());
    ms.push_back(took.count() * 1000);
    if (rows.size() != kBatch) state.SkipWithError("the raw query did not return a full batch");
  }
  state.counters["median_ms"] = Median(ms);
}
BENCHMARK(BM_Raw_Due)
    ->Args({16, 2})
    ->Args({1, 2})
    ->Args({16, 1})
    ->Args({1, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace wow::bench

BENCHMARK_MAIN();
