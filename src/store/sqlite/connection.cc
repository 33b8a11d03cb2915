#include "store/sqlite/connection.h"

#include <algorithm>
#include <thread>
#include <utility>

namespace wow::sqlite {
namespace {

std::string Advice(int result_code, std::chrono::milliseconds busy_timeout) {
  // The -shm file could not grow: on a local file system, the disk is full.
  if (result_code == SQLITE_IOERR_SHMSIZE) result_code = SQLITE_FULL;
  switch (result_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "another process holds the database lock for longer than busy_timeout (" +
             std::to_string(busy_timeout.count()) +
             " ms); retry later, raise SqliteOptions::busy_timeout, or stop the process that "
             "keeps the file locked";
    case SQLITE_FULL:
      return "the disk, or the database's size limit, is full; free space, then retry";
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return "the database cannot be written; make the file, its -wal and -shm files and their "
             "directory writable by this process";
    case SQLITE_CANTOPEN:
      return "the file cannot be opened or created; check that its directory exists and that "
             "this process may read and write the directory and the file";
    case SQLITE_CORRUPT:
      return "the database file is corrupt; restore it from a backup (the sqlite3 shell's "
             ".recover command may save part of it)";
    case SQLITE_NOTADB:
      return "the file is not a SQLite database (or is encrypted); check the path, and restore "
             "the file from a backup if it was a Wow database";
    case SQLITE_NOMEM:
      return "SQLite ran out of memory; free memory, then retry";
    case SQLITE_IOERR:
      return "the operating system reported an I/O error; check the disk and the system log, "
             "then retry";
    case SQLITE_TOOBIG:
      return "a value is larger than SQLite allows; make it smaller";
    default:
      return "this is likely a bug in Wow; please report it with this message";
  }
}

// Before the process's first connection: SQLite's memory statistics off. They take a global mutex
// on every allocation of every connection, which the threads of a loaded service then queue on
// (about a tenth of the commands a second, measured). sqlite3_memory_used() then reports 0. A
// process that initialized SQLite before keeps its own configuration (sqlite3_config refuses).
void ConfigureSqliteOnce() {
  static const bool configured = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return true;
  }();
  (void)configured;
}

}  // namespace

ErrorCode MapResultCode(int result_code) {
  if (result_code == SQLITE_IOERR_SHMSIZE) return ErrorCode::kResourceExhausted;  // see Advice
  switch (result_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_INTERRUPT:
    case SQLITE_PROTOCOL:
      return ErrorCode::kUnavailable;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return ErrorCode::kResourceExhausted;
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return ErrorCode::kPermissionDenied;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return ErrorCode::kDataLoss;
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return ErrorCode::kInvalidArgument;
    default:
      return ErrorCode::kInternal;
  }
}

SqliteFailure MakeFailure(int result_code, std::string_view detail, std::string_view what,
                          const std::string& path, std::chrono::milliseconds busy_timeout) {
  std::string message = "SQLite database \"" + path + "\": " + std::string(what) + " failed: ";
  message += detail.empty() ? std::string(sqlite3_errstr(result_code)) : std::string(detail);
  message += " (SQLite result code " + std::to_string(result_code) + ", " +
             sqlite3_errstr(result_code) + "); " + Advice(result_code, busy_timeout);
  return SqliteFailure(MapResultCode(result_code), result_code, message);
}

// ---- Query -----------------------------------------------------------------------------------

Query::Query(Connection& connection, const std::string& sql) {
  Statement& cached = connection.Prepare(sql);
  if (cached.in_use_) {
    uncached_ = connection.PrepareUncached(sql);
    statement_ = uncached_.get();
  } else {
    statement_ = &cached;
  }
  statement_->in_use_ = true;
  handle_ = statement_->handle_;
}

Query::~Query() {
  sqlite3_reset(handle_);
  sqlite3_clear_bindings(handle_);
  statement_->in_use_ = false;
}

Query& Query::Bind(int index, std::int64_t value) {
  statement_->connection_.Check(sqlite3_bind_int64(handle_, index, value), "binding a parameter");
  return *this;
}

Query& Query::Bind(int index, std::string_view value) {
  statement_->connection_.Check(
      sqlite3_bind_text64(handle_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                          SQLITE_UTF8),
      "binding a parameter");
  return *this;
}

Query& Query::BindBlob(int index, std::string_view bytes) {
  statement_->connection_.Check(
      sqlite3_bind_blob64(handle_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT),
      "binding a parameter");
  return *this;
}

Query& Query::BindNull(int index) {
  statement_->connection_.Check(sqlite3_bind_null(handle_, index), "binding a parameter");
  return *this;
}

bool Query::Step() {
  const int rc = sqlite3_step(handle_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string what = "running \"" + statement_->sql_.substr(0, 120);
  if (statement_->sql_.size() > 120) what += "...";
  what += "\"";
  statement_->connection_.Fail(rc, what);
}

void Query::Run() {
  while (Step()) {
  }
}

bool Query::IsNull(int column) const { return sqlite3_column_type(handle_, column) == SQLITE_NULL; }

std::int64_t Query::Int(int column) const { return sqlite3_column_int64(handle_, column); }

std::string_view Query::TextView(int column) const {
  // sqlite3_column_blob returns the bytes of TEXT and BLOB alike, never converting the encoding.
  const void* data = sqlite3_column_blob(handle_, column);
  const int size = sqlite3_column_bytes(handle_, column);
  if (data == nullptr || size <= 0) return {};
  return {static_cast<const char*>(data), static_cast<size_t>(size)};
}

std::string Query::Text(int column) const { return std::string(TextView(column)); }

// ---- Connection ------------------------------------------------------------------------------

Connection::Connection(const ConnectionOptions& options) : options_(options) {
  ConfigureSqliteOnce();
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(options_.path.c_str(), &raw, options_.open_flags | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  db_.reset(raw);  // closed by the deleter even when the open failed
  if (rc != SQLITE_OK) {
    const std::string detail = raw != nullptr ? sqlite3_errmsg(raw) : "";
    throw MakeFailure(rc, detail, "opening the file", options_.path, options_.busy_timeout);
  }
  sqlite3_extended_result_codes(raw, 1);
  if ((options_.open_flags & SQLITE_OPEN_READWRITE) != 0 && sqlite3_db_readonly(raw, "main") == 1) {
    throw MakeFailure(SQLITE_READONLY, "the file is read-only", "opening the file for writing",
                      options_.path, options_.busy_timeout);
  }
  Check(sqlite3_busy_handler(raw, &Connection::OnBusy, this), "setting the busy handler");
  Execute("PRAGMA synchronous = " + std::string(options_.synchronous) +
          "; PRAGMA foreign_keys = OFF; PRAGMA temp_store = MEMORY;");
  if (options_.query_only) Execute("PRAGMA query_only = 1;");
}

Connection::~Connection() {
  statements_.clear();  // finalize every statement before the handle closes
}

// SQLite's own busy handler sleeps up to 100 ms between tries: a process waiting for the write
// lock of another process that commits in a loop then rarely finds it free, and may wait out its
// whole busy_timeout. Short sleeps find the lock between two commits of the other.
int Connection::OnBusy(void* self, int count) {
  auto& connection = *static_cast<Connection*>(self);
  const auto now = std::chrono::steady_clock::now();
  if (count == 0) connection.busy_since_ = now;
  const auto waited = now - connection.busy_since_;
  if (waited >= connection.options_.busy_timeout) return 0;
  const std::chrono::microseconds pause(count < 20 ? 100 : count < 200 ? 500 : 2000);
  std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
      pause, connection.options_.busy_timeout - waited));
  return 1;
}

void Connection::Execute(const std::string& sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    const std::string detail = message != nullptr ? message : "";
    sqlite3_free(message);
    std::string what = "running \"" + sql.substr(0, 120) + (sql.size() > 120 ? "...\"" : "\"");
    throw MakeFailure(rc, detail, what, options_.path, options_.busy_timeout);
  }
}

Statement& Connection::Prepare(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return *it->second;
  sqlite3_stmt* handle = nullptr;
  const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &handle, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(handle);
    Fail(rc, "preparing \"" + sql.substr(0, 120) + "\"");
  }
  auto [inserted, _] =
      statements_.emplace(sql, std::make_unique<Statement>(*this, handle, sql));
  return *inserted->second;
}

std::unique_ptr<Statement> Connection::PrepareUncached(const std::string& sql) {
  sqlite3_stmt* handle = nullptr;
  const int rc = sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &handle,
                                    nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(handle);
    Fail(rc, "preparing \"" + sql.substr(0, 120) + "\"");
  }
  return std::make_unique<Statement>(*this, handle, sql);
}

void Connection::Fail(int result_code, std::string_view what) const {
  // The connection's message describes its last failure, which is this one when the codes agree.
  std::string detail;
  if ((sqlite3_extended_errcode(db_.get()) & 0xff) == (result_code & 0xff)) {
    detail = sqlite3_errmsg(db_.get());
    result_code = sqlite3_extended_errcode(db_.get());
  }
  throw MakeFailure(result_code, detail, what, options_.path, options_.busy_timeout);
}

// ---- Transaction, Savepoint -----------------------------------------------------------------

Transaction::Transaction(Connection& connection, Kind kind) : connection_(connection) {
  Query(connection_, kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN").Run();
}

Transaction::~Transaction() {
  if (!open_) return;
  if (connection_.InTransaction()) sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  connection_.known_tables().clear();
}

void Transaction::Commit() {
  Query(connection_, "COMMIT").Run();
  open_ = false;
}

Savepoint::Savepoint(Connection& connection) : connection_(connection) {
  Query(connection_, "SAVEPOINT wow_step").Run();
}

Savepoint::~Savepoint() {
  if (!open_) return;
  if (connection_.InTransaction()) {
    sqlite3_exec(connection_.handle(), "ROLLBACK TO wow_step; RELEASE wow_step", nullptr, nullptr,
                 nullptr);
  }
  connection_.known_tables().clear();
}

void Savepoint::Release() {
  Query(connection_, "RELEASE wow_step").Run();
  open_ = false;
}

// Appended piece by piece: for "\"" + std::string(name), GCC 12 at -O3 (Release) warns of an
// overlapping memcpy (-Wrestrict, a false positive), which fails the build.
std::string Quoted(std::string_view name) {
  std::string quoted;
  quoted.reserve(name.size() + 2);
  quoted += '"';
  quoted += name;
  quoted += '"';
  return quoted;
}

}  // namespace wow::sqlite
