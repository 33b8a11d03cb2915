// The SQLite RAII layer of the backend (private): Connection owns a sqlite3 handle and its cache of
// prepared statements; Query is one use of a cached statement, reset when it goes out of scope;
// Transaction and Savepoint roll back in their destructors unless committed or released.
// SqliteFailure is the wow::Error every SQLite failure becomes, in one place (Connection::Fail).
//
// This is the only header of the library that includes sqlite3.h.
//
// Thread-safety: a Connection and its statements need external synchronisation: one thread at a
// time (the database hands each connection to one thread at a time).
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "wow/error.h"

namespace wow::sqlite {

// A failure of SQLite, as the wow::Error its result code maps to, keeping the native code.
class SqliteFailure : public Error {
 public:
  SqliteFailure(ErrorCode code, int native_code, const std::string& message)
      : Error(code, message), native_code_(native_code) {}
  // SQLite's extended result code, such as SQLITE_BUSY_SNAPSHOT.
  int native_code() const noexcept { return native_code_; }
  // The primary result code, such as SQLITE_BUSY.
  int primary_code() const noexcept { return native_code_ & 0xff; }

 private:
  int native_code_;
};

// The wow::Error code a SQLite result code maps to.
ErrorCode MapResultCode(int result_code);

// The failure `result_code` of `what` on the database file `path`: its mapped code, and a message
// with SQLite's code, its text (`detail`, when known) and what to do.
SqliteFailure MakeFailure(int result_code, std::string_view detail, std::string_view what,
                          const std::string& path, std::chrono::milliseconds busy_timeout);

class Connection;

// A prepared statement, cached by its connection. Use it through a Query.
class Statement {
 public:
  Statement(Connection& connection, sqlite3_stmt* handle, std::string sql)
      : connection_(connection), handle_(handle), sql_(std::move(sql)) {}
  ~Statement() { sqlite3_finalize(handle_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

 private:
  friend class Query;
  Connection& connection_;
  sqlite3_stmt* handle_;
  std::string sql_;
  bool in_use_ = false;
};

// One use of a prepared statement: bind, step, read the columns. Resets the statement and clears
// its bindings when destroyed. Parameters and columns are numbered as SQLite does: parameters
// from 1, columns from 0.
class Query {
 public:
  Query(Connection& connection, const std::string& sql);
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  Query& Bind(int index, std::int64_t value);
  Query& Bind(int index, int value) { return Bind(index, static_cast<std::int64_t>(value)); }
  // Binds the bytes of `value` as TEXT, copied.
  Query& Bind(int index, std::string_view value);
  Query& Bind(int index, const std::string& value) { return Bind(index, std::string_view(value)); }
  Query& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  // Binds `bytes` as a BLOB, copied.
  Query& BindBlob(int index, std::string_view bytes);
  // Binds `bytes` as a BLOB, copied, or NULL when there are none.
  Query& BindBlobOrNull(int index, const std::optional<std::string>& bytes) {
    return bytes ? BindBlob(index, *bytes) : BindNull(index);
  }
  Query& BindNull(int index);

  // Steps: true when a row is ready, false when the statement is done. Throws SqliteFailure.
  bool Step();
  // Steps a statement that returns no rows.
  void Run();

  bool IsNull(int column) const;
  std::int64_t Int(int column) const;
  // The column as bytes, TEXT or BLOB alike.
  std::string Text(int column) const;
  std::string_view TextView(int column) const;  // valid until the next Step

 private:
  Statement* statement_;
  std::unique_ptr<Statement> uncached_;  // when the cached statement is already in use
  sqlite3_stmt* handle_;
};

struct ConnectionOptions {
  std::string path;
  int open_flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  std::chrono::milliseconds busy_timeout{5000};
  std::string_view synchronous = "FULL";
  bool query_only = false;
};

// One connection to the database file. Opening sets the busy timeout and synchronous level; it
// does not read the file (OpenSqliteDatabase checks the file first, then switches it to WAL).
class Connection {
 public:
  // Throws SqliteFailure when the file cannot be opened, and kPermissionDenied when it opens
  // read-only.
  explicit Connection(const ConnectionOptions& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* handle() const { return db_.get(); }
  const std::string& path() const { return options_.path; }

  // Runs `sql`, one or more statements that return no rows, unprepared: for the schema and pragmas.
  void Execute(const std::string& sql);

  // The statement for `sql`, prepared once and cached for the connection's life.
  Statement& Prepare(const std::string& sql);
  // `sql` prepared afresh, not cached (for a statement already in use).
  std::unique_ptr<Statement> PrepareUncached(const std::string& sql);

  // Rows changed by the last INSERT, UPDATE or DELETE.
  int Changes() const { return sqlite3_changes(db_.get()); }
  // The most bytes SQLite keeps in one value or row on this connection (SQLITE_LIMIT_LENGTH).
  std::int64_t MaxRowBytes() const { return sqlite3_limit(db_.get(), SQLITE_LIMIT_LENGTH, -1); }
  // True while a transaction is open.
  bool InTransaction() const { return sqlite3_get_autocommit(db_.get()) == 0; }

  // Throws the SqliteFailure of `result_code` for `what`, with the connection's error text.
  [[noreturn]] void Fail(int result_code, std::string_view what) const;
  void Check(int result_code, std::string_view what) const {
    if (result_code != SQLITE_OK) Fail(result_code, what);
  }

  // The tables a writer connection knows exist (created or found in the registry), so each
  // transaction does not look again. Cleared on every rollback, which may undo a creation.
  std::set<std::string>& known_tables() { return known_tables_; }

 private:
  // The busy handler: waits in short sleeps until the busy timeout passes.
  static int OnBusy(void* self, int count);

  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  ConnectionOptions options_;
  std::unique_ptr<sqlite3, Closer> db_;
  // Destroyed (finalized) before the handle closes.
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
  std::set<std::string> known_tables_;
  std::chrono::steady_clock::time_point busy_since_;
};

// A transaction on a connection: BEGIN IMMEDIATE (takes the write lock, waiting up to the busy
// timeout) or BEGIN (a read snapshot from the first read). Rolls back when destroyed uncommitted.
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  Transaction(Connection& connection, Kind kind);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // Commits; throws SqliteFailure when the commit fails (the transaction is then rolled back).
  void Commit();

 private:
  Connection& connection_;
  bool open_ = true;
};

// A savepoint inside a transaction: undoes its writes when destroyed unreleased.
class Savepoint {
 public:
  explicit Savepoint(Connection& connection);
  ~Savepoint();
  Savepoint(const Savepoint&) = delete;
  Savepoint& operator=(const Savepoint&) = delete;

  // Keeps the savepoint's writes in the enclosing transaction.
  void Release();

 private:
  Connection& connection_;
  bool open_ = true;
};

// `name` quoted as an SQL identifier. REQUIRES: name holds no '"' (table names are built from
// validated type names only).
std::string Quoted(std::string_view name);

}  // namespace wow::sqlite
