// The deterministic simulation of the MongoDB log's multi-node algorithm (MultiNodeLog, seed 002).
//
// Each seed draws a cluster (two or three writer nodes and a reader, one or two partitions, one to
// three aggregate collections, a block size, fault rates, clocks up to a second apart), runs it
// under the seeded scheduler with injected faults (lost acknowledgements, writes that never land,
// writes that land late; one node that stops mid-run and never returns, one that stalls past the
// stall grace and comes back; collections created by one node while others tail), and checks at
// every landing and delivery, and at the end: the reader delivers every stream that landed exactly
// once, in sequence order, each aggregate's streams in version order; no tail delivers a sequence
// twice or steps over a stream that landed; no stream lands behind a tail, nor where a placeholder
// holds its position; every acknowledged append is delivered.
//
//   wow_log_simulation [--seeds N] [--first S]    runs seeds S .. S+N-1 (default 1 .. 10000)
//   wow_log_simulation --seed N                   replays seed N and prints what it did
//   --defect NAME --expect-caught                 switches a defect on; succeeds when a seed
//   catches it
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler.h"
#include "simulated_collections.h"
#include "store/mongo/log/multi_node_log.h"
#include "wow/error.h"

namespace wow::simulation {
namespace {

using mongo_log::Defects;
using mongo_log::MultiNodeLog;

constexpr std::int64_t kStallGraceMs = 2000;
constexpr int kReaderTail = 0;

// A node's clock: the simulation's time, off by the node's own offset.
class NodeClock final : public Clock {
 public:
  NodeClock(const Scheduler& scheduler, std::int64_t offset)
      : scheduler_(scheduler), offset_(offset) {}
  EpochMillis NowMillis() const override { return scheduler_.Now() + offset_; }

 private:
  const Scheduler& scheduler_;
  const std::int64_t offset_;
};

struct Aggregate {
  std::string collection;
  AggregateRef ref;
  int partition;
};

struct Totals {
  std::size_t landed = 0;
  std::size_t appends = 0;
  std::size_t unknown = 0;
  std::size_t stops = 0;
  std::size_t stalls = 0;
};

struct Outcome {
  std::vector<std::string> violations;
  Totals totals;
};

Outcome RunSeed(std::uint64_t seed, const Defects& defects, bool trace) {
  Scheduler scheduler(seed);
  const int partitions = static_cast<int>(scheduler.Uniform(1, 2));
  World world(scheduler, partitions);
  const int collection_count = static_cast<int>(scheduler.Uniform(1, 3));
  std::vector<Aggregate> aggregates;
  for (int i = 0; i < 6; ++i) {
    const std::string type = std::string(1, static_cast<char>('a' + i % collection_count));
    aggregates.push_back(
        {"wow_log__shop__" + type, {"shop", type, "t", "x" + std::to_string(i)}, i % partitions});
  }
  const int writers = static_cast<int>(scheduler.Uniform(2, 3));
  Faults faults;
  faults.lost_ack = static_cast<double>(scheduler.Uniform(0, 8)) / 100;
  faults.never = static_cast<double>(scheduler.Uniform(0, 5)) / 100;
  faults.late = static_cast<double>(scheduler.Uniform(0, 8)) / 100;
  faults.read_fails = static_cast<double>(scheduler.Uniform(0, 3)) / 100;
  const Sequence block_size = scheduler.Uniform(1, 6);

  Totals totals;
  std::vector<std::unique_ptr<SimulatedCollections>> layers;
  std::vector<std::unique_ptr<NodeClock>> clocks;
  auto node = [&](const std::string& name) {
    layers.push_back(std::make_unique<SimulatedCollections>(world, scheduler, faults));
    clocks.push_back(std::make_unique<NodeClock>(scheduler, scheduler.Uniform(-1000, 1000)));
    mongo_log::MultiNodeLogOptions options;
    options.node = name + "-" + std::to_string(seed);
    options.block_size = block_size;
    options.stall_grace = std::chrono::milliseconds(kStallGraceMs);
    options.defects = defects;
    // The clock is the node's; the log does not own it.
    return std::make_unique<MultiNodeLog>(
        *layers.back(), std::shared_ptr<const Clock>(std::shared_ptr<void>(), clocks.back().get()),
        options);
  };

  std::vector<int> writer_ids;
  std::size_t request_counter = 0;
  std::vector<std::vector<int>> node_actors;  // per writer node: one actor, or two sharing its log
  for (int w = 0; w < writers; ++w) {
    auto log = std::shared_ptr<MultiNodeLog>(node("writer" + std::to_string(w)));
    node_actors.emplace_back();
    const int actors = scheduler.Chance(0.3) ? 2 : 1;
    for (int actor = 0; actor < actors; ++actor) {
      const int tail = 1 + w + 10 * actor;
      node_actors.back().push_back(scheduler.Spawn([&, log, tail] {
        struct Acked {
          std::string request_id;
          Position at;
          Version version;
        };
        std::map<std::size_t, std::vector<Acked>> acked;  // per aggregate
        const auto ops = scheduler.Uniform(4, 12);
        for (std::int64_t op = 0; op < ops; ++op) {
          try {
            if (scheduler.Chance(0.25)) {
              const int p = static_cast<int>(scheduler.Uniform(0, partitions - 1));
              for (const Entry& e : log->ReadAfter(p, world.Through(tail, p),
                                                   static_cast<int>(scheduler.Uniform(1, 4)))) {
                world.Delivered(tail, e);
              }
            } else {
              // A decision: read the aggregate (the log remembers it), then append one to three
              // streams: the next version, maybe the one after, maybe another aggregate's.
              std::vector<std::size_t> chosen{static_cast<std::size_t>(
                  scheduler.Uniform(0, static_cast<std::int64_t>(aggregates.size()) - 1))};
              if (scheduler.Chance(0.3)) {
                chosen.push_back(static_cast<std::size_t>(
                    scheduler.Uniform(0, static_cast<std::int64_t>(aggregates.size()) - 1)));
              }
              std::vector<Stream> streams;
              std::vector<std::size_t> of;
              std::vector<std::optional<Acked>> reused;
              for (std::size_t a : chosen) {
                scheduler.Yield();  // the read
                const auto [version, at] =
                    world.Latest(aggregates[a].collection, aggregates[a].ref);
                if (version > 0)
                  log->Remember(aggregates[a].collection, aggregates[a].ref, version, at);
                const int count = scheduler.Chance(0.4) ? 2 : 1;
                for (int k = 1; k <= count; ++k) {
                  Stream s;
                  s.ref = aggregates[a].ref;
                  s.version = version + k;
                  s.events = {{"happened", "{}"}};
                  s.time = scheduler.Now();
                  std::optional<Acked> again;
                  if (!acked[a].empty() && scheduler.Chance(0.1)) again = acked[a].back();
                  s.request_id =
                      again ? again->request_id : "r" + std::to_string(++request_counter);
                  streams.push_back(std::move(s));
                  of.push_back(a);
                  reused.push_back(again);
                }
              }
              std::vector<MultiNodeLog::Placed> placed;
              for (std::size_t i = 0; i < streams.size(); ++i) {
                placed.push_back(
                    {&streams[i], aggregates[of[i]].collection, aggregates[of[i]].partition});
              }
              const auto results = log->Append(placed);
              for (std::size_t i = 0; i < results.size(); ++i) {
                ++totals.appends;
                if (results[i].kind() == AppendResult::Kind::kUnknown) ++totals.unknown;
                if (results[i].appended() && !reused[i]) {
                  world.Acknowledged({results[i].position(), streams[i]});
                  acked[of[i]].push_back(
                      {streams[i].request_id, results[i].position(), streams[i].version});
                }
                if (reused[i]) {
                  // A request id used again: the original's place, a conflict or an unknown
                  // outcome, never a new stream.
                  const bool original = results[i].kind() == AppendResult::Kind::kDuplicate &&
                                        results[i].position() == reused[i]->at &&
                                        results[i].original_version() == reused[i]->version;
                  world.Check(original || results[i].kind() == AppendResult::Kind::kConflict ||
                                  results[i].kind() == AppendResult::Kind::kUnknown,
                              "request " + streams[i].request_id + " used again was answered " +
                                  std::string(KindName(results[i].kind())) +
                                  ", not with its original's place");
                }
              }
            }
          } catch (const Error&) {
            // A failed read or reservation: the node goes on, as a command would be retried.
          }
          scheduler.Sleep(scheduler.Uniform(0, 50));
        }
        if (scheduler.Chance(0.5)) {
          try {
            log->Close();
          } catch (const Error&) {
          }
        }
      }));
      writer_ids.push_back(node_actors.back().back());
    }
  }

  // One writer may stop mid-run for good; one may stall past the grace and come back.
  const EpochMillis start = scheduler.Now();
  if (scheduler.Chance(0.4)) {
    const auto& victim = node_actors[static_cast<std::size_t>(scheduler.Uniform(0, writers - 1))];
    ++totals.stops;
    scheduler.At(start + scheduler.Uniform(0, 400), [&, victim] {
      for (int actor : victim) scheduler.Stop(actor);
    });
  }
  if (scheduler.Chance(0.4)) {
    const auto& victim = node_actors[static_cast<std::size_t>(scheduler.Uniform(0, writers - 1))];
    ++totals.stalls;
    const std::int64_t pause = kStallGraceMs + scheduler.Uniform(500, 3000);
    scheduler.At(start + scheduler.Uniform(0, 400), [&, victim, pause] {
      for (int actor : victim) scheduler.Pause(actor, pause);
    });
  }

  auto reader = std::shared_ptr<MultiNodeLog>(node("reader"));
  bool caught_up = false;
  scheduler.Spawn([&, reader] {
    std::int64_t backoff = 50;
    for (;;) {
      bool found = false;
      for (int p = 0; p < partitions; ++p) {
        try {
          for (const Entry& e : reader->ReadAfter(p, world.Through(kReaderTail, p),
                                                  static_cast<int>(scheduler.Uniform(1, 5)))) {
            world.Delivered(kReaderTail, e);
            found = true;
          }
        } catch (const Error&) {
        }
      }
      bool writing = false;
      for (int id : writer_ids) writing = writing || !scheduler.Finished(id);
      if (!writing) {
        bool done = true;
        for (int p = 0; p < partitions; ++p) {
          done = done && world.Through(kReaderTail, p) >= world.HighestEntry(p);
        }
        if (done && !scheduler.HasEvents()) {
          caught_up = true;
          return;
        }
      }
      backoff = found ? 50 : std::min<std::int64_t>(backoff * 2, 1000);
      scheduler.Sleep(backoff);
    }
  });

  const bool in_time = scheduler.Run(start + 10 * 60 * 1000);
  Outcome outcome;
  if (!in_time || !caught_up) {
    std::string where;
    for (int p = 0; p < partitions; ++p) {
      where += " " + std::to_string(p) + "/" + std::to_string(world.Through(kReaderTail, p)) +
               " of " + std::to_string(world.HighestEntry(p));
    }
    outcome.violations.push_back("the reader did not catch up in 10 virtual minutes:" + where);
  }
  world.CheckComplete(kReaderTail);
  for (const auto& v : world.violations()) outcome.violations.push_back(v);
  totals.landed = world.landed();
  outcome.totals = totals;
  if (trace) {
    for (int p = 0; p < partitions; ++p) {
      const Sequence through = world.Through(kReaderTail, p);
      std::printf("partition %d, the reader through %lld:\n%s", p, static_cast<long long>(through),
                  world.Describe(p, through + 1, through + 12).c_str());
    }
    std::printf(
        "seed %llu: %d partitions, %d collections, %d writers, blocks of %lld, faults lost-ack "
        "%.2f never %.2f late %.2f read %.2f; %zu appends (%zu unknown), %zu landed; stops %zu, "
        "stalls %zu\n",
        static_cast<unsigned long long>(seed), partitions, collection_count, writers,
        static_cast<long long>(block_size), faults.lost_ack, faults.never, faults.late,
        faults.read_fails, totals.appends, totals.unknown, totals.landed, totals.stops,
        totals.stalls);
  }
  return outcome;
}

std::optional<Defects> DefectNamed(const std::string& name) {
  Defects d;
  if (name == "tail-steps-over-missing")
    d.tail_steps_over_missing = true;
  else if (name == "seal-skips-a-collection")
    d.seal_skips_a_collection = true;
  else if (name == "placeholder-overwrites-entry")
    d.placeholder_overwrites_entry = true;
  else if (name == "stall-keeps-registry")
    d.stall_keeps_registry = true;
  else
    return std::nullopt;
  return d;
}

int Main(int argc, char** argv) {
  std::uint64_t first = 1;
  std::uint64_t seeds = 10'000;
  std::optional<std::uint64_t> one;
  std::string defect_name;
  bool expect_caught = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seeds")
      seeds = std::stoull(value());
    else if (arg == "--first")
      first = std::stoull(value());
    else if (arg == "--seed")
      one = std::stoull(value());
    else if (arg == "--defect")
      defect_name = value();
    else if (arg == "--expect-caught")
      expect_caught = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  Defects defects;
  if (!defect_name.empty()) {
    auto named = DefectNamed(defect_name);
    if (!named) {
      std::fprintf(stderr, "unknown defect %s\n", defect_name.c_str());
      return 2;
    }
    defects = *named;
  }
  const std::string replay_defect = defect_name.empty() ? "" : " --defect " + defect_name;
  if (one) {
    const Outcome outcome = RunSeed(*one, defects, /*trace=*/true);
    for (const auto& v : outcome.violations) std::printf("  violation %s\n", v.c_str());
    return outcome.violations.empty() ? 0 : 1;
  }
  Totals all;
  const auto began = std::chrono::steady_clock::now();
  for (std::uint64_t seed = first; seed < first + seeds; ++seed) {
    const Outcome outcome = RunSeed(seed, defects, /*trace=*/false);
    all.appends += outcome.totals.appends;
    all.unknown += outcome.totals.unknown;
    all.landed += outcome.totals.landed;
    all.stops += outcome.totals.stops;
    all.stalls += outcome.totals.stalls;
    if (!outcome.violations.empty()) {
      if (expect_caught) {
        std::printf("defect %s caught by seed %llu (of %llu run): %s\n", defect_name.c_str(),
                    static_cast<unsigned long long>(seed),
                    static_cast<unsigned long long>(seed - first + 1),
                    outcome.violations.front().c_str());
        return 0;
      }
      std::printf("seed %llu failed:\n", static_cast<unsigned long long>(seed));
      for (const auto& v : outcome.violations) std::printf("  %s\n", v.c_str());
      std::printf("replay: wow_log_simulation --seed %llu%s\n",
                  static_cast<unsigned long long>(seed), replay_defect.c_str());
      return 1;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (expect_caught) {
    std::printf("defect %s NOT caught in %llu seeds\n", defect_name.c_str(),
                static_cast<unsigned long long>(seeds));
    return 1;
  }
  std::printf(
      "log simulation: %llu seeds passed in %.1f s (seeds %llu..%llu): %zu appends, %zu unknown, "
      "%zu streams landed and delivered, %zu nodes stopped, %zu stalled\n",
      static_cast<unsigned long long>(seeds), seconds, static_cast<unsigned long long>(first),
      static_cast<unsigned long long>(first + seeds - 1), all.appends, all.unknown, all.landed,
      all.stops, all.stalls);
  return 0;
}

}  // namespace
}  // namespace wow::simulation

int main(int argc, char** argv) { return wow::simulation::Main(argc, argv); }
