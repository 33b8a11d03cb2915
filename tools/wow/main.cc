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

// Sets globals.db from --store (or checks --db was given): the tool reads SQLite files.
void ResolveStore(wow::tool::Globals& globals) {
  if (globals.store.empty()) {
    if (globals.db.empty()) throw std::runtime_error("--store URI (or --db PATH) is required");
    return;
  }
  const wow::StoreUri uri = wow::ParseStoreUri(globals.store);
  if (uri.kind != wow::StoreUri::Kind::kSqlite) {
    throw std::runtime_error("--store " + globals.store +
                             ": this tool reads SQLite stores (sqlite:PATH or a bare PATH)");
  }
  globals.db = uri.location;
}

int Run(int argc, char** argv) {
  using namespace wow::tool;
  CLI::App app{"Look into and manage the SQLite store of a Wow for C++ service.", "wow"};
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
                     "The store's URI: sqlite:PATH, or a bare PATH, names a SQLite database file "
                     "(or WOW_STORE)")
          ->envname("WOW_STORE");
  app.add_option("--db", globals.db, "The same as --store sqlite:PATH (or WOW_DB)")
      ->envname("WOW_DB")
      ->excludes(store);
  app.add_option("--context", globals.context,
                 "The bounded context, such as eshop-catalog (default: the file's only one)");
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
