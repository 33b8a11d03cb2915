// The `wow` tool's shared pieces: the global options, the exit codes, the failure type, and the
// session that opens a store (a SQLite file, or a MongoDB deployment) for one command.
//
// Every command runs on the main thread; a Session is used by one command at a time.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "wow/event_log.h"
#include "wow/reservation_store.h"
#include "wow/sqlite.h"
#include "wow/timer_store.h"

namespace wow {
class MongoDeployment;  // wow/mongo.h
}  // namespace wow

namespace wow::tool {

// The exit codes (docs/TOOL.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;    // an error: nothing or only part was done
inline constexpr int kExitUsage = 2;     // bad flags or arguments
inline constexpr int kExitNotFound = 3;  // a find found nothing
inline constexpr int kExitProblems = 4;  // migrate-data finished, with bad lines or conflicts
inline constexpr int kExitDamaged = 5;   // check found the file damaged

// A failure the tool reports as "wow: <message>" on stderr, exiting with `exit_code`.
class Failure : public std::runtime_error {
 public:
  explicit Failure(const std::string& message, int exit_code = kExitFailed)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// `uri` with the password of its user information (mongodb://USER:PASSWORD@HOST) masked, for
// messages.
std::string MaskPassword(const std::string& uri);

// The options every command takes.
struct Globals {
  std::string store;      // --store as given; empty when --db named the file
  std::string db;         // the SQLite file: --db, or the path --store names; empty on MongoDB
  std::string mongo_uri;  // the MongoDB URI --store names; empty on SQLite
  std::string context;    // empty when not given
  bool json = false;
};

// What a parsed command does; set by the command's CLI11 callback, run after parsing.
using Action = std::function<int()>;

// One command's view of the store that --store (or --db) names: a SQLite file, or a MongoDB
// deployment (in builds with MongoDB). The stores it hands out are of that backend.
class Session {
 public:
  // Whether the command writes to the file; one that only reads opens it read-only
  // (SqliteOptions::read_only), so it never changes the file, and works on a file it may only read.
  enum class Access { kRead, kWrite };

  explicit Session(const Globals& globals, Access access = Access::kRead)
      : globals_(globals), access_(access) {}

  // Whether the store is a MongoDB deployment.
  bool on_mongo() const { return !globals_.mongo_uri.empty(); }
  // The store, for messages: the SQLite file's path, or the MongoDB URI with its password
  // masked (mongodb://USER:*****@HOST).
  std::string Where() const;
  // How to name the store again on a command line ("--db PATH", "--store URI").
  std::string StoreFlag() const;

  // SQLite only. Opens the file as `access` says, which must exist (commands other than init
  // never create one). Throws Failure or wow::Error.
  SqliteDatabase& Open(Access access);
  // SQLite only. Opens the file writable, creating it when missing. Returns whether it existed.
  bool OpenOrCreate();
  // SQLite only: the file, once opened.
  const std::shared_ptr<SqliteDatabase>& db() const { return db_; }

  // SQLite only: the contexts recorded in the file and their partition counts (opening it as the
  // session's access says).
  const std::map<std::string, int>& Contexts();
  // --context when given (a valid name), else the file's only context. Throws Failure when
  // --context is missing and the file has no context or several, and always on MongoDB, where
  // the context must be named.
  const std::string& Context();
  // A log of `context` on the store, not yet created nor opened (EventLog::Create or Open next).
  // On SQLite the file must be open (Open or OpenOrCreate); on MongoDB the deployment is opened.
  std::unique_ptr<EventLog> NewLog(const std::string& context);
  // The log of Context(), opened (EventLog::Open: its partition count read). Throws Failure when
  // the store has no log of Context().
  EventLog& Log();
  // The partition count of Context()'s log.
  int Partitions();
  // The store's reservations, and the timers of Context() (its log opened first).
  std::unique_ptr<ReservationStore> Reservations();
  std::unique_ptr<TimerStore> Timers();
  // The URI that opens this store's whole store set (OpenStores).
  std::string StoreUri() const;

  const Globals& globals() const { return globals_; }

 private:
  const Globals& globals_;
  const Access access_;
  std::shared_ptr<SqliteDatabase> db_;
  std::shared_ptr<MongoDeployment> mongo_;  // opened on first use
  std::optional<std::map<std::string, int>> contexts_;
  std::string context_;
  std::unique_ptr<EventLog> log_;
};

// Each file adds its commands to the app; a parsed command sets `action`.
void AddInitCommand(CLI::App& app, Globals& globals, Action& action);
void AddLogCommands(CLI::App& app, Globals& globals, Action& action);
void AddReservationCommands(CLI::App& app, Globals& globals, Action& action);
void AddTimerCommands(CLI::App& app, Globals& globals, Action& action);
void AddMigrateCommands(CLI::App& app, Globals& globals, Action& action);
void AddCheckCommand(CLI::App& app, Globals& globals, Action& action);
void AddProjectionCommands(CLI::App& app, Globals& globals, Action& action);

}  // namespace wow::tool
