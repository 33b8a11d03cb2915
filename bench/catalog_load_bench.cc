// The catalog service's load, in process: CreateBrand commands through the CommandProcessor on
// SQLite, set up as wow-catalog sets itself up (the same stores and options, the timer
// subscription and the timer service running), from many threads at once, without HTTP. Prints
// commands per second and latency percentiles; compare with the same commands over HTTP
// (bench/catalog_http_bench.sh, wrk). docs/PERFORMANCE.md gives the figures.
//
//   catalog_load_bench [--threads 64] [--seconds 10] [--synchronous full|normal|off]
//                      [--partitions 16] [--db PATH] [--no-subscriptions] [--memory]
//                      [--projection]
//
// --memory runs the same commands on the in-memory stores: the processor's and the domain's own
// cost, without SQLite. --projection also runs the catalog's read model projection, as wow-catalog
// does (bench/catalog_http_bench.sh compares the service with this run); without it the figures
// are the command's alone, as docs/PERFORMANCE.md's earlier ones.
//
// A load program rather than a Google Benchmark: it needs percentiles of one long run at a fixed
// concurrency, like wrk's. The database is a fresh file under $WOW_BENCH_DIR (default /tmp)
// unless --db names one.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "catalog.h"
#include "wow/node.h"
#include "wow/projection.h"
#include "wow/store_set.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

struct Options {
  int threads = 64;
  double seconds = 10;
  std::string synchronous = "full";
  int partitions = 16;
  std::string db;
  bool subscriptions = true;
  bool memory = false;
  bool projection = false;  // the catalog's read model projection runs too
};

[[noreturn]] void Usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--threads N] [--seconds S] [--synchronous full|normal|off] "
               "[--partitions N] [--db PATH] [--no-subscriptions] [--memory] [--projection]\n",
               program);
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(argv[0]);
      return argv[++i];
    };
    if (flag == "--threads") {
      options.threads = std::stoi(value());
    } else if (flag == "--seconds") {
      options.seconds = std::stod(value());
    } else if (flag == "--synchronous") {
      options.synchronous = value();
    } else if (flag == "--partitions") {
      options.partitions = std::stoi(value());
    } else if (flag == "--db") {
      options.db = value();
    } else if (flag == "--no-subscriptions") {
      options.subscriptions = false;
    } else if (flag == "--memory") {
      options.memory = true;
    } else if (flag == "--projection") {
      options.projection = true;
    } else {
      Usage(argv[0]);
    }
  }
  if (options.threads < 1 || options.seconds <= 0) Usage(argv[0]);
  return options;
}

wow::SqliteOptions::Synchronous ParseSynchronous(const std::string& name) {
  if (name == "off") return wow::SqliteOptions::Synchronous::kOff;
  if (name == "normal") return wow::SqliteOptions::Synchronous::kNormal;
  return wow::SqliteOptions::Synchronous::kFull;
}

// CPU seconds this process used so far: user, system.
std::pair<double, double> CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

double Percentile(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p / 100.0 * sorted.size()));
  return sorted[i] / 1000.0;
}

// The value of the figure `name` in `metrics`; 0 when absent.
double Figure(const std::vector<wow::StoreMetric>& metrics, std::string_view name) {
  for (const wow::StoreMetric& metric : metrics) {
    if (metric.name == name) return metric.value;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = Parse(argc, argv);
  std::filesystem::path dir;
  std::string path = options.db;
  if (path.empty()) {
    const char* base = std::getenv("WOW_BENCH_DIR");
    dir = std::filesystem::path(base ? base : "/tmp") /
          ("wow-catalog-load-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    path = (dir / "catalog.db").string();
  }

  wow::StoreSetOptions store_options;
  store_options.partitions = options.partitions;
  store_options.sqlite.synchronous = ParseSynchronous(options.synchronous);
  const wow::StoreSet stores = wow::OpenStores(options.memory ? "memory:" : "sqlite:" + path,
                                               std::string(eshop::kContext), store_options);
  // As wow-catalog: one node, its subscriptions and timer service unless --no-subscriptions.
  wow::NodeOptions node_options;
  node_options.processor.workers = 1;
  node_options.run_subscriptions = options.subscriptions;
  auto node = std::make_unique<wow::Node>(stores, node_options);
  node->Register(eshop::BrandType());
  node->Register(eshop::CategoryType());
  if (options.projection) {
    node->AddSubscription(
        wow::NewProjectionSubscription(eshop::CatalogProjection(), stores.read_models()));
  }
  node->Start();
  wow::CommandProcessor& processor = node->processor();

  std::atomic<bool> go{false};
  std::atomic<long> failed{0};
  std::vector<std::vector<std::uint32_t>> latencies(options.threads);  // µs, per thread
  const auto duration = std::chrono::duration<double>(options.seconds);
  SteadyClock::time_point start;
  std::pair<double, double> cpu_before;
  std::vector<wow::StoreMetric> stats_before;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < options.threads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        const auto deadline = start + duration;
        std::vector<std::uint32_t>& mine = latencies[t];
        mine.reserve(100'000);
        for (long i = 0;; ++i) {
          const auto begin = SteadyClock::now();
          if (begin >= deadline) break;
          const wow::AggregateRef ref{std::string(eshop::kContext), "brand", "load", wow::NewId()};
          const std::string name = "brand " + std::to_string(t) + "-" + std::to_string(i);
          try {
            const wow::CommandResult result =
                processor.Process(ref, wow::CommandMessage::Of(eshop::CreateBrand{name}));
            if (result.kind != wow::CommandResult::Kind::kAccepted) ++failed;
          } catch (const std::exception& e) {
            std::fprintf(stderr, "command failed: %s\n", e.what());
            ++failed;
          }
          mine.push_back(static_cast<std::uint32_t>(
              std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - begin)
                  .count()));
        }
      });
    }
    cpu_before = CpuSeconds();
    stats_before = stores.Metrics();
    start = SteadyClock::now();
    go = true;
  }
  const double elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const auto cpu_after = CpuSeconds();
  const std::vector<wow::StoreMetric> stats = stores.Metrics();
  node->Stop();

  std::vector<std::uint32_t> all;
  for (const auto& mine : latencies) all.insert(all.end(), mine.begin(), mine.end());
  std::sort(all.begin(), all.end());
  const double user = cpu_after.first - cpu_before.first;
  const double system = cpu_after.second - cpu_before.second;
  auto per_command = [&](double seconds) { return all.empty() ? 0.0 : seconds / all.size() * 1e6; };
  std::printf(
      "catalog_load_bench: %d threads, %.1f s, %s, %d partitions, subscriptions %s%s\n"
      "commands: %zu (%ld not accepted)\n"
      "commands/s: %.0f\n"
      "latency ms: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n"
      "cpu per command: %.0f us (user %.0f, system %.0f); %.2f cores busy\n",
      options.threads, elapsed,
      options.memory ? "memory stores" : ("SQLite synchronous=" + options.synchronous).c_str(),
      options.partitions, options.subscriptions ? "on" : "off",
      options.projection ? ", the catalog projection" : "", all.size(), failed.load(),
      all.size() / elapsed, Percentile(all, 50), Percentile(all, 90), Percentile(all, 99),
      Percentile(all, 99.9), all.empty() ? 0.0 : all.back() / 1000.0, per_command(user + system),
      per_command(user), per_command(system), (user + system) / elapsed);
  if (!options.memory) {
    // Counted over the run: the writer's share of the wall time is how close it is to being the
    // limit; its time per write is what one more write costs it.
    auto grew = [&](std::string_view name) {
      return Figure(stats, name) - Figure(stats_before, name);
    };
    const double transactions = grew("wow_sqlite_transactions_total");
    const double works = grew("wow_sqlite_writes_total");
    const double syncs = grew("wow_sqlite_syncs_total");
    const double writing = grew("wow_sqlite_writing_seconds_total");
    const double syncing = grew("wow_sqlite_syncing_seconds_total");
    auto ratio = [](double a, double b) { return b == 0 ? 0.0 : a / b; };
    std::printf(
        "sqlite writer: %.0f transactions, %.1f writes each, %.0f us a write; busy %.0f%% of the "
        "run\nsqlite syncs: %.0f, %.1f transactions each, %.0f us each; busy %.0f%% of the run; "
        "%.0f by tails; %.0f checkpoints off the writer\n",
        transactions, ratio(works, transactions), ratio(writing * 1e6, works),
        100 * writing / elapsed, syncs, ratio(grew("wow_sqlite_synced_transactions_total"), syncs),
        ratio(syncing * 1e6, syncs), 100 * syncing / elapsed, grew("wow_sqlite_reader_syncs_total"),
        grew("wow_sqlite_checkpoints_total"));
  }

  node.reset();
  if (!dir.empty()) std::filesystem::remove_all(dir);
  return failed.load() == 0 ? 0 : 1;
}
