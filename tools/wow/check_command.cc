// wow check: the whole file checked (CheckSqliteDatabase), as a report and an exit code.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "format.h"
#include "tool.h"
#include "wow/error.h"

namespace wow::tool {

namespace {

using nlohmann::json;

// Prints `report` (or the damage that kept the file from opening, `refused`) and returns the exit
// code: kExitOk when nothing is wrong, else kExitDamaged.
int Report(const Globals& globals, const SqliteCheckReport& report, const std::string& refused) {
  const std::uint64_t problems = refused.empty() ? report.problem_count : 1;
  if (globals.json) {
    json list = json::array();
    if (!refused.empty()) list.push_back(refused);
    for (const std::string& problem : report.problems) list.push_back(problem);
    std::cout << json{{"db", globals.db},
                      {"ok", problems == 0},
                      {"problem_count", problems},
                      {"problems", list},
                      {"streams", report.streams},
                      {"keys", report.keys}}
                     .dump(-1, ' ', false, json::error_handler_t::replace)
              << '\n';
    return problems == 0 ? kExitOk : kExitDamaged;
  }
  if (!refused.empty()) {
    std::cout << fmt::format("{}: damaged, not opened: {}\n", Printable(globals.db),
                             Printable(refused));
    return kExitDamaged;
  }
  std::cout << fmt::format(
      "checked {}: SQLite's integrity check, {} streams (checksums, sequences, versions), {} "
      "confirmed keys\n",
      Printable(globals.db), report.streams, report.keys);
  for (const std::string& problem : report.problems) std::cout << Printable(problem) << '\n';
  if (report.problem_count > report.problems.size()) {
    std::cout << fmt::format("... and {} more\n", report.problem_count - report.problems.size());
  }
  std::cout << (problems == 0 ? std::string("no damage found\n")
                              : fmt::format("{} problems found: restore the file from a backup\n",
                                            problems));
  return problems == 0 ? kExitOk : kExitDamaged;
}

int Check(const Globals& globals, int max_problems) {
  Session session(globals);
  if (session.on_mongo()) {
    throw Failure(
        "check looks into SQLite files only; on MongoDB, the server's validate command checks a "
        "collection",
        kExitUsage);
  }
  try {
    session.Open(Session::Access::kRead);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kDataLoss) throw;
    return Report(globals, {}, e.what());
  }
  return Report(globals,
                CheckSqliteDatabase(session.db(), static_cast<std::size_t>(max_problems)), "");
}

}  // namespace

void AddCheckCommand(CLI::App& app, Globals& globals, Action& action) {
  auto* check = app.add_subcommand(
      "check",
      "Check the whole file for damage: SQLite's integrity check, every stream's checksum, the "
      "log's sequences and versions, and the confirmed keys; exit code 5 when damaged");
  auto max_problems = std::make_shared<int>(100);
  check->add_option("--max-problems", *max_problems, "The most problems listed (default 100)")
      ->check(CLI::Range(1, 1'000'000));
  check->callback([&globals, &action, max_problems] {
    action = [&globals, max_problems] { return Check(globals, *max_problems); };
  });
}

}  // namespace wow::tool
