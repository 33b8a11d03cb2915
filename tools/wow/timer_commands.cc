// wow timers find | due.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "format.h"
#include "tool.h"
#include "wow/error.h"
#include "wow/model.h"
#include "wow/timer_store.h"

namespace wow::tool {

namespace {

using nlohmann::json;

struct FindArgs {
  std::string aggregate;
  std::string tenant;
  std::string id;
  std::string key;
};

struct DueArgs {
  std::vector<int> partitions;  // empty: all
  std::string until = "now";
  int limit = 100;
};

int Find(const Globals& globals, const FindArgs& args) {
  Session session(globals);
  const auto timers = session.Timers();
  const AggregateRef owner{session.Context(), args.aggregate, args.tenant, args.id};
  ValidateRef(owner);
  const std::optional<Timer> timer = timers->Find(owner, args.key);
  if (!timer) {
    if (globals.json) {
      std::cout << "null\n";
    } else {
      std::cerr << fmt::format("wow: no timer \"{}\" of {}\n", Printable(args.key),
                               Printable(ToString(owner)));
    }
    return kExitNotFound;
  }
  if (globals.json) {
    std::cout << TimerJson(*timer).dump() << '\n';
  } else {
    std::cout << TimerText(*timer);
  }
  return kExitOk;
}

int Due(const Globals& globals, const DueArgs& args) {
  Session session(globals);
  const auto timers = session.Timers();
  const int count = session.Partitions();
  std::set<int> partitions;
  for (const int p : args.partitions) {
    if (p >= count) {
      throw Failure(
          fmt::format("partition {} is out of range: context \"{}\" has partitions 0 to {}", p,
                      session.Context(), count - 1),
          kExitUsage);
    }
    partitions.insert(p);
  }
  if (partitions.empty()) {
    for (int p = 0; p < count; ++p) partitions.insert(p);
  }
  const std::optional<EpochMillis> until =
      ParseTimeArgument(args.until, SystemClock::Instance()->NowMillis());
  if (!until) {
    throw Failure(
        "--until must be \"now\", milliseconds since the epoch or an ISO-8601 time "
        "such as 2024-05-01T10:00:00Z, not \"" +
            args.until + "\"",
        kExitUsage);
  }
  const std::vector<Timer> due = timers->Due(partitions, *until, args.limit);
  if (globals.json) {
    json list = json::array();
    for (const Timer& timer : due) list.push_back(TimerJson(timer));
    std::cout << json{{"until", *until}, {"timers", list}}.dump() << '\n';
    return kExitOk;
  }
  std::cout << fmt::format("{} timer{} due by {}\n", due.size(), due.size() == 1 ? "" : "s",
                           FormatTime(*until));
  if (due.empty()) return kExitOk;
  std::vector<std::vector<std::string>> rows{
      {"DUE AT", "STATE", "ATTEMPT", "OWNER", "KEY", "COMMAND", "TARGET"}};
  for (const Timer& t : due) {
    rows.push_back({FormatTime(t.due_at), std::string(TimerStateName(t.state)),
                    std::to_string(t.attempt), Printable(ToString(t.owner)), Printable(t.key),
                    Printable(t.command_type), Printable(ToString(t.target))});
  }
  std::cout << Table(rows, {2});
  if (due.size() == static_cast<std::size_t>(args.limit)) {
    std::cout << fmt::format("more may be due: raise --limit (now {})\n", args.limit);
  }
  return kExitOk;
}

}  // namespace

void AddTimerCommands(CLI::App& app, Globals& globals, Action& action) {
  auto* timers = app.add_subcommand("timers", "Look into the timers");
  timers->require_subcommand(1);

  auto* find = timers->add_subcommand("find", "Print an aggregate's timer");
  auto find_args = std::make_shared<FindArgs>();
  find->add_option("--aggregate", find_args->aggregate, "The owner's aggregate type")->required();
  find->add_option("--tenant", find_args->tenant, "The owner's tenant; \"\" for the system tenant")
      ->required();
  find->add_option("--id", find_args->id, "The owner's id")->required();
  find->add_option("--key", find_args->key, "The timer's key")->required();
  find->callback([&globals, &action, find_args] {
    action = [&globals, find_args] { return Find(globals, *find_args); };
  });

  auto* due = timers->add_subcommand("due", "Print the timers due by a time, in due order");
  auto due_args = std::make_shared<DueArgs>();
  due->add_option("--partitions", due_args->partitions,
                  "Only these partitions, comma-separated (default: all)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  due->add_option("--until", due_args->until,
                  "Due by: now (the default), milliseconds since the epoch, or an ISO-8601 time");
  due->add_option("--limit", due_args->limit, "At most this many timers (default 100)")
      ->check(CLI::Range(1, 1'000'000));
  due->callback([&globals, &action, due_args] {
    action = [&globals, due_args] { return Due(globals, *due_args); };
  });
}

}  // namespace wow::tool
