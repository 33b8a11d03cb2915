// wow init; wow log head | read | tail.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "format.h"
#include "signals.h"
#include "tool.h"
#include "wow/error.h"
#include "wow/model.h"

namespace wow::tool {

namespace {

using nlohmann::json;

constexpr int kBatch = 256;

void PrintEntry(const Globals& globals, const Entry& entry) {
  if (globals.json) {
    std::cout << EntryJson(entry.stream, entry.position).dump() << '\n';
  } else {
    std::cout << EntryText(entry.stream, entry.position);
  }
}

int Init(const Globals& globals, int partitions) {
  if (globals.context.empty()) throw Failure("init needs --context NAME", kExitUsage);
  ValidateTypeName(globals.context, "context");
  Session session(globals, Session::Access::kWrite);
  const bool file_existed = session.on_mongo() || session.OpenOrCreate();
  bool context_existed = true;
  try {
    session.NewLog(globals.context)->Open();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kFailedPrecondition) throw;
    context_existed = false;
  }
  // A log of its own, which knows no count yet, so that another count is refused by the store
  // with its own message (kFailedPrecondition, naming the store and both counts).
  session.NewLog(globals.context)->Create(partitions);
  const std::string where = session.Where();
  const std::string named = session.on_mongo() ? "MongoDB store \"" + where + "\"" : where;
  if (globals.json) {
    json report{{"context", globals.context},
                {"partitions", partitions},
                {"created_context", !context_existed}};
    if (session.on_mongo()) {
      report["store"] = where;  // without its password
    } else {
      report["db"] = globals.db;
      report["created_file"] = !file_existed;
    }
    std::cout << report.dump() << '\n';
  } else if (context_existed) {
    std::cout << fmt::format(
        "Context \"{}\" already exists in {} with {} partitions; nothing changed.\n",
        globals.context, named, partitions);
  } else {
    std::cout << fmt::format("Created the log of context \"{}\" with {} partitions in {}{}.\n",
                             globals.context, partitions, named,
                             file_existed ? "" : " (a new database file)");
  }
  return kExitOk;
}

int Head(const Globals& globals, std::optional<int> partition) {
  Session session(globals);
  EventLog& log = session.Log();
  std::vector<int> partitions;
  if (partition) {
    if (*partition >= log.partitions()) {
      throw Failure(
          fmt::format("partition {} is out of range: context \"{}\" has partitions 0 to {}",
                      *partition, log.context(), log.partitions() - 1),
          kExitUsage);
    }
    partitions.push_back(*partition);
  } else {
    for (int p = 0; p < log.partitions(); ++p) partitions.push_back(p);
  }
  json heads = json::array();
  std::string text =
      fmt::format("context {}, {} partitions\npartition  head\n", log.context(), log.partitions());
  for (const int p : partitions) {
    const Sequence head = log.Head(p);
    heads.push_back({{"partition", p}, {"head", head}});
    text += fmt::format("{:>9}  {}\n", p, head);
  }
  if (globals.json) {
    std::cout << json{{"context", log.context()},
                      {"partitions", log.partitions()},
                      {"heads", heads}}
                     .dump()
              << '\n';
  } else {
    std::cout << text;
  }
  return kExitOk;
}

struct ReadArgs {
  std::string aggregate;
  std::string tenant;
  std::string id;
  Version from = 1;
  Version to = kAnyVersion;
};

int Read(const Globals& globals, const ReadArgs& args) {
  Session session(globals);
  EventLog& log = session.Log();
  const AggregateRef ref{session.Context(), args.aggregate, args.tenant, args.id};
  ValidateRef(ref);
  const std::vector<Stream> streams = log.Read(ref, args.from, args.to);
  std::vector<Version> versions;
  for (const Stream& stream : streams) versions.push_back(stream.version);
  // The positions, read in one query; the streams themselves come from Read (no transport).
  std::vector<Entry> entries =
      versions.empty() ? std::vector<Entry>{} : log.ReadEntries(ref, versions);
  std::size_t next = 0;
  for (const Stream& stream : streams) {
    std::optional<Position> position;
    while (next < entries.size() && entries[next].stream.version < stream.version) ++next;
    if (next < entries.size() && entries[next].stream.version == stream.version) {
      position = entries[next].position;
    }
    if (globals.json) {
      std::cout << EntryJson(stream, position).dump() << '\n';
    } else {
      std::cout << EntryText(stream, position);
    }
  }
  if (streams.empty()) {
    std::cerr << fmt::format("wow: no streams of {} from version {} to {}\n", Printable(ToString(ref)),
                             args.from,
                             args.to == kAnyVersion ? "the last" : std::to_string(args.to));
    return kExitNotFound;
  }
  return kExitOk;
}

struct TailArgs {
  int partition = 0;
  Sequence after = 0;
  bool follow = false;
  int limit = 0;  // 0: no limit
};

int Tail(const Globals& globals, const TailArgs& args) {
  Session session(globals);
  EventLog& log = session.Log();
  if (args.partition >= log.partitions()) {
    throw Failure(fmt::format("partition {} is out of range: context \"{}\" has partitions 0 to {}",
                              args.partition, log.context(), log.partitions() - 1),
                  kExitUsage);
  }
  Sequence after = args.after;
  long printed = 0;
  auto room = [&] {
    return args.limit == 0 ? kBatch
                           : static_cast<int>(std::min<long>(kBatch, args.limit - printed));
  };
  auto print = [&](const std::vector<Entry>& entries) {
    for (const Entry& entry : entries) {
      PrintEntry(globals, entry);
      after = entry.position.sequence;
      ++printed;
    }
    std::cout.flush();
  };
  if (!args.follow) {
    while (room() > 0) {
      const std::vector<Entry> entries = log.ReadAfter(args.partition, after, room());
      if (entries.empty()) break;
      print(entries);
    }
    return kExitOk;
  }
  const StopOnSignals signals;
  while (!signals.stop_requested() && room() > 0) {
    print(log.Tail(args.partition, after, room(), std::chrono::seconds(1), signals.token()));
  }
  return kExitOk;
}

}  // namespace

void AddInitCommand(CLI::App& app, Globals& globals, Action& action) {
  auto* init = app.add_subcommand(
      "init", "Create the log of a context (--context) with P partitions, or check it");
  auto partitions = std::make_shared<int>(0);
  init->add_option("--partitions", *partitions,
                   "The partition count, 1 to " + std::to_string(kMaxPartitions) +
                       "; fixed forever once the log exists")
      ->required()
      ->check(CLI::Range(1, kMaxPartitions));
  init->callback([&globals, &action, partitions] {
    action = [&globals, partitions] { return Init(globals, *partitions); };
  });
}

void AddLogCommands(CLI::App& app, Globals& globals, Action& action) {
  auto* log = app.add_subcommand("log", "Look into the log of a context");
  log->require_subcommand(1);

  auto* head = log->add_subcommand("head", "Print the head (highest sequence) of each partition");
  auto partition = std::make_shared<int>(-1);
  head->add_option("--partition", *partition, "Only this partition (default: all)")
      ->check(CLI::NonNegativeNumber);
  head->callback([&globals, &action, partition] {
    action = [&globals, partition] {
      return Head(globals, *partition < 0 ? std::nullopt : std::optional<int>(*partition));
    };
  });

  auto* read = log->add_subcommand("read", "Print the streams of one aggregate, in version order");
  auto read_args = std::make_shared<ReadArgs>();
  read->add_option("--aggregate", read_args->aggregate, "The aggregate type, such as brand")
      ->required();
  read->add_option("--tenant", read_args->tenant, "The tenant; \"\" for the system tenant")
      ->required();
  read->add_option("--id", read_args->id, "The aggregate's id")->required();
  read->add_option("--from", read_args->from, "The first version (default 1)")
      ->check(CLI::PositiveNumber);
  read->add_option("--to", read_args->to, "The last version (default: the last)")
      ->check(CLI::PositiveNumber);
  read->callback([&globals, &action, read_args] {
    action = [&globals, read_args] { return Read(globals, *read_args); };
  });

  auto* tail = log->add_subcommand(
      "tail", "Print the entries of a partition in sequence order; --follow waits for more");
  auto tail_args = std::make_shared<TailArgs>();
  tail->add_option("--partition", tail_args->partition, "The partition")
      ->required()
      ->check(CLI::NonNegativeNumber);
  tail->add_option("--after", tail_args->after,
                   "Start after this sequence (default 0: from the start)")
      ->check(CLI::NonNegativeNumber);
  tail->add_option("--limit", tail_args->limit, "Stop after this many entries (default: no limit)")
      ->check(CLI::NonNegativeNumber);
  tail->add_flag("--follow,-f", tail_args->follow,
                 "Keep waiting for new entries, like tail -f, until SIGINT or SIGTERM");
  tail->callback([&globals, &action, tail_args] {
    action = [&globals, tail_args] { return Tail(globals, *tail_args); };
  });
}

}  // namespace wow::tool
