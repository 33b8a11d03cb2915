#include <filesystem>
#include <memory>
#include <string>

#include "tool.h"
#include "wow/error.h"
#include "wow/model.h"

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

SqliteDatabase& Session::Open(Access access) {
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

EventLog& Session::Log() {
  if (!log_) {
    Open(access_);
    auto log = NewSqliteEventLog(db_, Context(), SystemClock::Instance());
    try {
      log->Open();  // reads the partition count; writes nothing
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kFailedPrecondition) throw;
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
