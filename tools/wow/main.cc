// wow: the command-line tool of Wow for C++ (docs/TOOL.md).
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>

#include "tool.h"
#include "wow/error.h"
#include "wow/store_set.h"

namespace {

constexpr const char* kFooter =
    R"(The global options (--store, --db, --context, --json) may come before or after the command.
Exit codes: 0 done; 1 failed (the message says why); 2 bad flags or arguments;
3 nothing found (find, log read); 4 migrate-data finished but skipped bad lines or conflicts.
See docs/TOOL.md for every command with an example.)";

// Sets globals.db or globals.mongo_uri from --store (or checks --db was given): the tool reads
// SQLite files and, in builds with MongoDB, MongoDB deployments.
void ResolveStore(wow::tool::Globals& globals) {
  if (globals.store.empty()) {
    if (globals.db.empty()) throw std::runtime_error("--store URI (or --db PATH) is required");
    return;
  }
  const wow::StoreUri uri = wow::ParseStoreUri(globals.store);
  switch (uri.kind) {
    case wow::StoreUri::Kind::kSqlite:
      globals.db = uri.location;
      return;
    case wow::StoreUri::Kind::kMongo:
#ifdef WOW_HAVE_MONGO
      globals.mongo_uri = uri.location;
      return;
#else
      throw std::runtime_error("--store " + globals.store +
                               ": this build of wow has no MongoDB backend (built with "
                               "WOW_WITH_MONGO=OFF)");
#endif
    case wow::StoreUri::Kind::kMemory:
      break;
  }
  throw std::runtime_error("--store " + globals.store +
                           ": this tool reads stores that outlive it: sqlite:PATH (or a bare "
                           "PATH), or mongodb://...");
}

int Run(int argc, char** argv) {
  using namespace wow::tool;
  CLI::App app{"Look into and manage the store of a Wow for C++ service (SQLite or MongoDB).",
               "wow"};
  app.fallthrough();  // the global options may follow the command; subcommands inherit it
  app.require_subcommand(1);
  app.footer(kFooter);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("wow: ") + e.what() + "\nRun wow --help, or wow COMMAND --help, for more.\n";
  });
  Globals globals;
  Action action;
  CLI::Option* store =
      app.add_option("--store", globals.store,
                     "The store's URI: sqlite:PATH, or a bare PATH, names a SQLite database file; "
                     "mongodb://HOST:PORT/DB a MongoDB replica set or mongos (or WOW_STORE)")
          ->envname("WOW_STORE");
  app.add_option("--db", globals.db, "The same as --store sqlite:PATH (or WOW_DB)")
      ->envname("WOW_DB")
      ->excludes(store);
  app.add_option("--context", globals.context,
                 "The bounded context, such as eshop-catalog (default: a SQLite file's only one; "
                 "required on MongoDB)");
  app.add_flag("--json", globals.json, "Print JSON (one document, or one a line) instead of text");
  AddInitCommand(app, globals, action);
  AddLogCommands(app, globals, action);
  AddReservationCommands(app, globals, action);
  AddTimerCommands(app, globals, action);
  AddMigrateCommands(app, globals, action);
  AddCheckCommand(app, globals, action);
  AddProjectionCommands(app, globals, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (!action) {
    std::cerr << "wow: no command given; see wow --help\n";
    return kExitUsage;
  }
  try {
    ResolveStore(globals);
  } catch (const std::exception& e) {
    std::cerr << "wow: " << e.what() << '\n';
    return kExitUsage;
  }

  try {
    return action();
  } catch (const Failure& e) {
    std::cerr << "wow: " << e.what() << '\n';
    return e.exit_code();
  } catch (const wow::Error& e) {
    std::cerr << "wow: " << e.what() << '\n';  // "CODE: what failed and what to do"
    return e.code() == wow::ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  } catch (const std::exception& e) {
    std::cerr << "wow: unexpected failure: " << e.what() << '\n';
    return kExitFailed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (...) {
    std::cerr << "wow: unexpected failure\n";
    return wow::tool::kExitFailed;
  }
}
