#include "store/sqlite/database.h"

#include <filesystem>
#include <string_view>
#include <utility>

#include "wow/error.h"

namespace wow {

using sqlite::Connection;
using sqlite::Query;

namespace {

std::string_view SynchronousName(SqliteOptions::Synchronous synchronous) {
  switch (synchronous) {
    case SqliteOptions::Synchronous::kOff:
      return "OFF";
    case SqliteOptions::Synchronous::kNormal:
      return "NORMAL";
    case SqliteOptions::Synchronous::kFull:
      return "FULL";
  }
  return "FULL";
}

// `options`, once checked; throws Error(kInvalidArgument) when `path` or `options` are out of
// range.
const SqliteOptions& Checked(const std::string& path, const SqliteOptions& options) {
  Require(!path.empty(), "SQLite database path is empty");
  Require(options.busy_timeout.count() >= 0, [&] {
    return "SqliteOptions::busy_timeout must not be negative, got " +
           std::to_string(options.busy_timeout.count()) + " ms";
  });
  Require(options.max_group_commit >= 1, [&] {
    return "SqliteOptions::max_group_commit must be at least 1, got " +
           std::to_string(options.max_group_commit);
  });
  // SQLite would open a device or a FIFO, and leave its journal beside it (/dev/null-journal).
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw Error(ErrorCode::kFailedPrecondition,
                "SQLite database \"" + path +
                    "\" is not a regular file (a directory, a device or a FIFO); name a database "
                    "file, or a path where one may be created");
  }
  return options;
}

// The options of the writer connection (`reader` false: it may create the file) and of the
// readers' (query-only); of both read-only under SqliteOptions::read_only.
sqlite::ConnectionOptions ConnectionOptionsFor(const std::string& path,
                                               const SqliteOptions& options, bool reader) {
  sqlite::ConnectionOptions connection;
  connection.path = path;
  connection.open_flags = options.read_only ? SQLITE_OPEN_READONLY
                          : reader          ? SQLITE_OPEN_READWRITE
                                            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  connection.busy_timeout = options.busy_timeout;
  connection.synchronous = SynchronousName(options.synchronous);
  connection.query_only = reader;
  return connection;
}

// The path of the write-ahead log of the file `connection` is open on.
std::string WalPathOf(Connection& connection) {
  return sqlite3_filename_wal(sqlite3_db_filename(connection.handle(), "main"));
}

}  // namespace

SqliteDatabase::SqliteDatabase(const std::string& path, const SqliteOptions& options)
    : path_(path),
      options_(Checked(path, options)),
      writer_(std::make_unique<Connection>(ConnectionOptionsFor(path_, options_, false))),
      wal_path_(WalPathOf(*writer_)),
      schema_(path_, *writer_, options_.busy_timeout, options_.read_only),
      group_commit_(*writer_, options_.max_group_commit,
                    options_.synchronous == SqliteOptions::Synchronous::kFull, path_, wal_path_),
      checkpointer_(*writer_, ConnectionOptionsFor(path_, options_, true), path_),
      reader_sync_(path_, wal_path_),
      readers_(ConnectionOptionsFor(path_, options_, true)) {}

SqliteDatabase::~SqliteDatabase() = default;

void SqliteDatabase::Write(const std::function<void(sqlite::Connection&)>& work, int weight,
                           sqlite::WriteSync sync) {
  if (options_.read_only) {
    throw Error(ErrorCode::kFailedPrecondition,
                "SQLite database \"" + path_ +
                    "\" is open read-only (SqliteOptions::read_only); nothing was written");
  }
  group_commit_.Write(work, weight, sync);
}

SqliteDatabase::WriteStats SqliteDatabase::write_stats() const {
  WriteStats stats = group_commit_.stats();
  stats.reader_syncs = reader_sync_.syncs();
  stats.checkpoints = checkpointer_.checkpoints();
  return stats;
}

std::shared_ptr<store::CommitSignal> SqliteDatabase::Signal(const std::string& context,
                                                            int partitions) {
  std::lock_guard lock(signals_mutex_);
  auto& signal = signals_[context];
  if (!signal) signal = std::make_shared<store::CommitSignal>(partitions);
  return signal;
}

// ---- the public entry point ------------------------------------------------------------------

std::shared_ptr<SqliteDatabase> OpenSqliteDatabase(const std::string& path,
                                                   const SqliteOptions& options) {
  std::error_code error;
  const bool existed = std::filesystem::exists(path, error) || error;
  try {
    return std::make_shared<SqliteDatabase>(path, options);
  } catch (const Error& e) {
    // A new file the disk had no room to initialize holds nothing yet (its initialization is one
    // transaction): removed, with what SQLite created beside it, so no stray file stays.
    if (!existed && !options.read_only && e.code() == ErrorCode::kResourceExhausted) {
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        std::filesystem::remove(path + suffix, error);
      }
    }
    throw;
  }
}

SqliteWriteStats SqliteStats(const std::shared_ptr<SqliteDatabase>& db) {
  Require(db != nullptr, "reading write statistics needs a database");
  return db->write_stats();
}

std::map<std::string, int> SqliteContexts(const std::shared_ptr<SqliteDatabase>& db) {
  Require(db != nullptr, "listing contexts needs a database");
  return db->Read([](Connection& r) {
    std::map<std::string, int> contexts;
    Query q(r, "SELECT context, partitions FROM wow_contexts ORDER BY context");
    while (q.Step()) contexts.emplace(q.Text(0), static_cast<int>(q.Int(1)));
    return contexts;
  });
}

}  // namespace wow
