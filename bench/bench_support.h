// What the SQLite benchmarks share: a scratch directory, the streams they append, and the raw
// SQLite baseline (a connection with the stores' durability settings, and tables equivalent to
// the stores' tables).
//
// Every baseline runs in the same process and run as the store it is compared with, on the same
// disk, with the same journal mode (WAL), synchronous level and batch size.
//
// Thread-safety: BenchDir and the stream factory are safe for concurrent use; a RawDb needs one
// thread at a time.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "wow/model.h"
#include "wow/sqlite.h"
#include "wow/stream.h"
#include "wow/stream_json.h"

namespace wow::bench {

inline constexpr const char* kContext = "bench";
inline constexpr const char* kTenant = "acme";
inline constexpr const char* kNames = "bench.brand-name";

// A fresh directory under $WOW_BENCH_DIR (default: the system's temporary directory), removed
// with its contents when destroyed. The benchmarks' files live on that disk, so say which one
// when quoting figures.
class BenchDir {
 public:
  BenchDir() {
    const char* base = std::getenv("WOW_BENCH_DIR");
    path_ = std::filesystem::path(base ? base : std::filesystem::temp_directory_path().string()) /
            ("wow-bench-" + NewId());
    std::filesystem::create_directories(path_);
  }
  ~BenchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  BenchDir(const BenchDir&) = delete;
  BenchDir& operator=(const BenchDir&) = delete;
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The synchronous level of SqliteOptions, as the PRAGMA names it.
inline const char* PragmaName(SqliteOptions::Synchronous synchronous) {
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

inline SqliteOptions Options(SqliteOptions::Synchronous synchronous) {
  SqliteOptions options;
  options.synchronous = synchronous;
  return options;
}

// Fresh aggregate ids and request ids, unique across the threads of the process.
inline std::string NextId(const char* prefix) {
  static std::atomic<std::uint64_t> next{0};
  return std::string(prefix).append(std::to_string(next.fetch_add(1)));
}

// A stream as the command processor writes one for a brand's creation: one event, one reserved
// key, and the transport. Built once: FreshStream only renames the aggregate and the request, so
// the benchmarks time the store, not the encoding of the transport.
class StreamFactory {
 public:
  StreamFactory() {
    template_.ref = {kContext, "brand", kTenant, "b-template"};
    template_.version = 1;
    template_.request_id = NewId();
    template_.events = {{"eshop.BrandCreated", R"({"name":"Contoso Outdoor Equipment"})"}};
    template_.reserved = {{kNames, "contoso outdoor equipment", ReservationTenancy::kTenant}};
    template_.time = 1'700'000'000'000;
    template_.transport = EncodeTransport(template_);
  }

  // A new aggregate's first stream. Only the ids change; the sizes stay those of the template.
  Stream FreshStream() const {
    Stream stream = template_;
    stream.ref.id = NextId("b-");
    stream.request_id = NextId("r-");
    return stream;
  }

  // Stand-ins for the events and facts columns the SQLite store writes, for the raw baseline's
  // rows: the same content as JSON (a little longer than the store's binary encoding,
  // docs/SQLITE.md).
  std::string EventsText() const {
    nlohmann::json array = nlohmann::json::array();
    for (const EventRecord& e : template_.events) {
      array.push_back({{"type", e.type}, {"body", e.body}});
    }
    return array.dump();
  }
  std::string FactsText() const {
    nlohmann::json reserved = nlohmann::json::array();
    for (const KeyFact& f : template_.reserved) {
      reserved.push_back({{"ns", f.ns}, {"key", f.key}, {"tenancy", "tenant"}});
    }
    return nlohmann::json{{"reserved", reserved}}.dump();
  }
  const std::string& Transport() const { return template_.transport; }

 private:
  Stream template_;
};

// ---- the raw SQLite baseline -----------------------------------------------------------------

// A prepared statement of a RawDb; reset after each use.
class RawStatement {
 public:
  RawStatement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &handle_, nullptr) !=
        SQLITE_OK) {
      throw std::runtime_error("prepare " + sql + ": " + sqlite3_errmsg(db));
    }
  }
  ~RawStatement() { sqlite3_finalize(handle_); }
  RawStatement(const RawStatement&) = delete;
  RawStatement& operator=(const RawStatement&) = delete;

  RawStatement& Bind(int i, std::int64_t v) {
    sqlite3_bind_int64(handle_, i, v);
    return *this;
  }
  RawStatement& Bind(int i, const std::string& v) {
    sqlite3_bind_text(handle_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
  }
  RawStatement& BindBlob(int i, const std::string& v) {
    sqlite3_bind_blob(handle_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
  }
  // Steps once: true when a row is ready.
  bool Step() {
    const int rc = sqlite3_step(handle_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("step: ") + sqlite3_errmsg(db_));
    return false;
  }
  void Run() {
    while (Step()) {
    }
    Reset();
  }
  void Reset() {
    sqlite3_reset(handle_);
    sqlite3_clear_bindings(handle_);
  }
  std::int64_t Int(int column) const { return sqlite3_column_int64(handle_, column); }
  // The column's bytes, copied (as the stores copy what they read).
  std::string Text(int column) const {
    const void* data = sqlite3_column_blob(handle_, column);
    return data ? std::string(static_cast<const char*>(data),
                              static_cast<size_t>(sqlite3_column_bytes(handle_, column)))
                : std::string();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* handle_ = nullptr;
};

// One raw connection with the stores' settings: WAL, the given synchronous level, a busy timeout.
class RawDb {
 public:
  RawDb(const std::string& path, SqliteOptions::Synchronous synchronous) {
    sqlite3* handle = nullptr;
    if (sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK) {
      sqlite3_close_v2(handle);
      throw std::runtime_error("cannot open " + path);
    }
    db_.reset(handle);
    sqlite3_busy_timeout(handle, 5000);
    Execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = " +
            std::string(PragmaName(synchronous)) + "; PRAGMA temp_store = MEMORY;");
  }
  void Execute(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      const std::string message = error ? error : "unknown error";
      sqlite3_free(error);
      throw std::runtime_error(sql + ": " + message);
    }
  }
  std::unique_ptr<RawStatement> Prepare(const std::string& sql) {
    return std::make_unique<RawStatement>(db_.get(), sql);
  }
  sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
};

// A table equivalent to the store's log table (format 3): the same columns, keyed by the position
// partition << 40 | sequence, and the same unique indexes (version, request).
inline void CreateRawLogTable(RawDb& db, const std::string& name) {
  db.Execute("CREATE TABLE IF NOT EXISTS " + name +
             " (position INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, aggregate_id TEXT NOT NULL, "
             "version INTEGER NOT NULL, request_id TEXT NOT NULL, time INTEGER NOT NULL, events "
             "BLOB NOT NULL, facts BLOB, transport BLOB NOT NULL);"
             "CREATE UNIQUE INDEX IF NOT EXISTS " +
             name + "_version ON " + name +
             " (tenant_id, aggregate_id, version);"
             "CREATE UNIQUE INDEX IF NOT EXISTS " +
             name + "_request ON " + name + " (tenant_id, request_id);");
}

// The reservation table's equivalent, laid out as the store lays it out: rows in write order, a
// unique index on the key.
inline void CreateRawReservationTable(RawDb& db, const std::string& name) {
  db.Execute("CREATE TABLE IF NOT EXISTS " + name +
             " (tenant_id TEXT NOT NULL, ns TEXT NOT NULL, key TEXT NOT NULL, owner_tenant_id TEXT "
             "NOT NULL, owner_id TEXT NOT NULL, expires_at INTEGER, holds TEXT NOT NULL, version "
             "INTEGER);"
             "CREATE UNIQUE INDEX IF NOT EXISTS " +
             name + "_key ON " + name + " (tenant_id, ns, key);");
}

inline std::string RawInsertSql(const std::string& table) {
  return "INSERT INTO " + table +
         " (position, tenant_id, aggregate_id, version, request_id, time, events, facts, "
         "transport) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
}

// Binds the row of `stream` at `partition`'s `sequence` to `insert` (RawInsertSql).
inline void BindRawRow(RawStatement& insert, const Stream& stream, int partition,
                       std::int64_t sequence, const std::string& events, const std::string& facts,
                       const std::string& transport) {
  insert.Bind(1, (std::int64_t{partition} << 40) | sequence)
      .Bind(2, stream.ref.tenant_id)
      .Bind(3, stream.ref.id)
      .Bind(4, stream.version)
      .Bind(5, stream.request_id)
      .Bind(6, stream.time)
      .BindBlob(7, events)
      .BindBlob(8, facts)
      .BindBlob(9, transport);
}

// Inserts `rows` fresh streams' rows with `insert` (RawInsertSql), at sequences taken from
// `next_sequence` round-robin over `partitions` partitions. The caller opens the transaction.
inline void InsertRawRows(RawStatement& insert, const StreamFactory& streams,
                          const std::string& events, const std::string& facts, int rows,
                          int partitions, std::vector<std::int64_t>& next_sequence) {
  for (int i = 0; i < rows; ++i) {
    const Stream s = streams.FreshStream();
    const int partition = PartitionOf(s.ref.tenant_id, s.ref.id, partitions);
    BindRawRow(insert, s, partition, ++next_sequence[static_cast<size_t>(partition)], events, facts,
               streams.Transport());
    insert.Run();
  }
}

// The median of `values` (milliseconds or anything else). REQUIRES: not empty.
inline double Median(std::vector<double> values) {
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  return values[middle];
}

}  // namespace wow::bench
