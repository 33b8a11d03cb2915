#include <filesystem>
#include <memory>
#include <string>

#include "tool.h"
#include "wow/error.h"
#include "wow/model.h"
#ifdef WOW_HAVE_MONGO
#include "wow/mongo.h"
#endif

namespace wow::tool {

namespace {

std::string Names(const std::map<std::string, int>& contexts) {
  std::string names;
  for (const auto& [name, partitions] : contexts) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

}  // namespace

std::string MaskPassword(const std::string& uri) {
  const std::size_t scheme = uri.find("://");
  if (scheme == std::string::npos) return uri;
  const std::size_t hosts = scheme + 3;
  const std::size_t at = uri.find('@', hosts);
  const std::size_t path = uri.find('/', hosts);
  if (at == std::string::npos || (path != std::string::npos && path < at)) return uri;
  const std::size_t colon = uri.find(':', hosts);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon + 1) + "*****" + uri.substr(at);
}

std::string Session::Where() const {
  return on_mongo() ? MaskPassword(globals_.mongo_uri) : globals_.db;
}

std::string Session::StoreFlag() const { return (on_mongo() ? "--store " : "--db ") + Where(); }

std::string Session::StoreUri() const {
  return on_mongo() ? globals_.mongo_uri : "sqlite:" + globals_.db;
}

SqliteDatabase& Session::Open(Access access) {
  if (on_mongo()) throw Failure("this command reads SQLite files, not MongoDB", kExitUsage);
  if (db_) return *db_;
  std::error_code error;
  if (!std::filesystem::exists(globals_.db, error)) {
    throw Failure("no database file at \"" + globals_.db + "\"; create one with: wow --db " +
                  globals_.db + " init --context NAME --partitions P");
  }
  SqliteOptions options;
  options.read_only = access == Access::kRead;
  db_ = OpenSqliteDatabase(globals_.db, options);
  return *db_;
}

bool Session::OpenOrCreate() {
  if (on_mongo()) throw Failure("this command reads SQLite files, not MongoDB", kExitUsage);
  std::error_code error;
  const bool existed = std::filesystem::exists(globals_.db, error);
  db_ = OpenSqliteDatabase(globals_.db);
  return existed;
}

const std::map<std::string, int>& Session::Contexts() {
  if (!contexts_) {
    Open(access_);
    contexts_ = SqliteContexts(db_);
  }
  return *contexts_;
}

const std::string& Session::Context() {
  if (!context_.empty()) return context_;
  if (!globals_.context.empty()) {
    ValidateTypeName(globals_.context, "context");
    context_ = globals_.context;
    return context_;
  }
  if (on_mongo()) {
    throw Failure("on MongoDB, name the bounded context with --context NAME", kExitUsage);
  }
  const auto& contexts = Contexts();
  if (contexts.size() == 1) {
    context_ = contexts.begin()->first;
  } else if (contexts.empty()) {
    throw Failure("\"" + globals_.db + "\" has no context yet; create one with: wow --db " +
                  globals_.db + " init --context NAME --partitions P");
  } else {
    throw Failure("\"" + globals_.db + "\" has several contexts (" + Names(contexts) +
                      "); name one with --context",
                  kExitUsage);
  }
  return context_;
}

int Session::Partitions() { return Log().partitions(); }

std::unique_ptr<EventLog> Session::NewLog(const std::string& context) {
  if (!on_mongo()) return NewSqliteEventLog(db_, context, SystemClock::Instance());
#ifdef WOW_HAVE_MONGO
  // Ddl::kAuto: a store's collections are made on first use, reads too (an empty collection).
  if (!mongo_) mongo_ = OpenMongoDeployment(globals_.mongo_uri);
  return NewMongoEventLog(mongo_, context, SystemClock::Instance());
#else
  throw Failure("this build of wow has no MongoDB backend (built with WOW_WITH_MONGO=OFF)",
                kExitUsage);
#endif
}

std::unique_ptr<ReservationStore> Session::Reservations() {
  Log();  // the context must exist
  if (!on_mongo()) return NewSqliteReservationStore(db_, SystemClock::Instance());
#ifdef WOW_HAVE_MONGO
  return NewMongoReservationStore(mongo_, SystemClock::Instance());
#else
  return nullptr;  // unreachable: NewLog refused the store
#endif
}

std::unique_ptr<TimerStore> Session::Timers() {
  const int partitions = Partitions();
  if (!on_mongo()) return NewSqliteTimerStore(db_, Context(), partitions);
#ifdef WOW_HAVE_MONGO
  return NewMongoTimerStore(mongo_, Context(), partitions);
#else
  return nullptr;  // unreachable: NewLog refused the store
#endif
}

EventLog& Session::Log() {
  if (!log_) {
    if (!on_mongo()) Open(access_);
    auto log = NewLog(Context());
    try {
      log->Open();  // reads the partition count
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kFailedPrecondition) throw;
      if (on_mongo()) {
        throw Failure("MongoDB store \"" + Where() + "\" has no log of context \"" + Context() +
                      "\"; create it with: wow " + StoreFlag() + " --context " + Context() +
                      " init --partitions P");
      }
      // The log was never created: say so in the tool's words, with the file's contexts.
      const auto& contexts = Contexts();
      throw Failure(
          "\"" + globals_.db + "\" has no log of context \"" + Context() + "\" (" +
          (contexts.empty() ? std::string("it has no context yet") : "it has: " + Names(contexts)) +
          "); create it with: wow --db " + globals_.db + " --context " + Context() +
          " init --partitions P");
    }
    log_ = std::move(log);
  }
  return *log_;
}

}  // namespace wow::tool
