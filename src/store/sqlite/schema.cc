#include "store/sqlite/schema.h"

#include <optional>
#include <thread>
#include <utility>

#include "store/sqlite/stream_checksum.h"
#include "wow/error.h"
#include "wow/timer_store.h"

namespace wow::sqlite {

std::string_view KindName(TableKind kind) {
  switch (kind) {
    case TableKind::kLog:
      return "log";
    case TableKind::kReservation:
      return "reservation";
    case TableKind::kTimer:
      return "timer";
  }
  return "unknown";
}

std::string TableName(TableKind kind, const std::string& context, const std::string& aggregate) {
  return "wow_" + std::string(KindName(kind)) + "__" + context + "__" + aggregate;
}

namespace {

// The file's own tables. Every statement is idempotent, so two processes creating a new file at
// once agree.
constexpr const char* kCoreSchema = R"sql(
CREATE TABLE IF NOT EXISTS wow_format (
  name TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS wow_tables (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  context TEXT NOT NULL,
  aggregate TEXT NOT NULL,
  format INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS wow_tables_by_context ON wow_tables (kind, context, aggregate);
CREATE TABLE IF NOT EXISTS wow_contexts (
  context TEXT PRIMARY KEY,
  partitions INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS wow_partitions (
  context TEXT NOT NULL,
  partition INTEGER NOT NULL,
  last_sequence INTEGER NOT NULL,
  parent INTEGER,
  epoch INTEGER NOT NULL,
  lease_node TEXT,
  lease_expires_at INTEGER,
  PRIMARY KEY (context, partition)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS wow_checkpoints (
  context TEXT NOT NULL,
  partition INTEGER NOT NULL,
  subscription TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  PRIMARY KEY (context, partition, subscription)
) WITHOUT ROWID;
)sql";

// The aggregate tables, by kind. `name` is a validated table name; the indexes are named after it.
std::string TableSchema(TableKind kind, const std::string& name) {
  const std::string t = Quoted(name);
  auto index = [&](const char* suffix) { return Quoted(name + "__" + suffix); };
  switch (kind) {
    case TableKind::kLog:
      // One row per stream, keyed by its position (PositionKey): a partition's rows are one
      // rowid range; its checksum covers every other column (stream_checksum.h). Unique
      // indexes: the version and the request of each stream.
      return "CREATE TABLE IF NOT EXISTS " + t + R"sql( (
  position INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  time INTEGER NOT NULL,
  events BLOB NOT NULL,
  facts BLOB,
  transport BLOB NOT NULL,
  checksum INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS )sql" +
             index("version") + " ON " + t +
             " (tenant_id, aggregate_id, version);\nCREATE UNIQUE INDEX IF NOT EXISTS " +
             index("request") + " ON " + t + " (tenant_id, request_id);\n";
    case TableKind::kReservation:
      // One row per reserved key; expires_at is null when confirmed, version null when pending.
      // Rows lie in write order, found through the unique key index: a key is confirmed soon
      // after it is reserved, so the confirmation rewrites a recent page, not a random one.
      // Tables of earlier builds are WITHOUT ROWID tables keyed by the key; the SQL is the same.
      return "CREATE TABLE IF NOT EXISTS " + t + R"sql( (
  tenant_id TEXT NOT NULL,
  ns TEXT NOT NULL,
  key TEXT NOT NULL,
  owner_tenant_id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  expires_at INTEGER,
  holds TEXT NOT NULL,
  version INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS )sql" +
             index("key") + " ON " + t + " (tenant_id, ns, key);\n";
    case TableKind::kTimer:
      // One row per timer, unique per owner and key; partial indexes for due and parked timers.
      return "CREATE TABLE IF NOT EXISTS " + t + R"sql( (
  owner_tenant_id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  key TEXT NOT NULL,
  partition INTEGER NOT NULL,
  timer_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  due_at INTEGER NOT NULL,
  target_context TEXT NOT NULL,
  target_aggregate TEXT NOT NULL,
  target_tenant_id TEXT NOT NULL,
  target_id TEXT NOT NULL,
  command_type TEXT NOT NULL,
  body TEXT NOT NULL,
  rule TEXT NOT NULL,
  state TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  parked_version INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (owner_tenant_id, owner_id, key)
);
CREATE INDEX IF NOT EXISTS )sql" +
             index("due") + " ON " + t +
             " (partition, due_at, timer_id) WHERE state <> 'PARKED';\nCREATE INDEX IF NOT "
             "EXISTS " +
             index("parked") + " ON " + t +
             " (target_context, target_aggregate, target_tenant_id, target_id, due_at, timer_id) "
             "WHERE state = 'PARKED';\n";
  }
  return {};
}

// The names of `context`'s timer tables recorded in an earlier format.
std::vector<std::string> EarlierTimerTables(Connection& connection, const std::string& context) {
  std::vector<std::string> names;
  Query q(connection,
          "SELECT name FROM wow_tables WHERE kind = ?1 AND context = ?2 AND format < ?3");
  q.Bind(1, KindName(TableKind::kTimer)).Bind(2, context).Bind(3, kFormatVersion);
  while (q.Step()) names.push_back(q.Text(0));
  return names;
}

}  // namespace

Schema::Schema(std::string path, Connection& writer, std::chrono::milliseconds busy_timeout,
               bool read_only)
    : path_(std::move(path)), writer_(writer), read_only_(read_only) {
  // While another process turns the same new file to WAL or creates its tables, SQLite reports
  // some moments as SQLITE_BUSY without calling the busy handler: retry until busy_timeout.
  const auto deadline = std::chrono::steady_clock::now() + busy_timeout;
  for (;;) {
    try {
      CheckAndInitialize();
      return;
    } catch (const SqliteFailure& failure) {
      if (failure.primary_code() != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
        throw;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Reads the file before changing anything: a file of another format or application is refused as
// it is. Then WAL mode, and the core tables and format record when missing.
void Schema::CheckAndInitialize() {
  Connection& w = writer_;
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorCode::kFailedPrecondition, "SQLite database \"" + path_ + "\" " + why);
  };
  std::vector<std::string> tables;
  bool has_format = false;
  {
    Query q(w,
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' "
            "ESCAPE '!' ORDER BY name");
    while (q.Step()) {
      tables.push_back(q.Text(0));
      has_format = has_format || tables.back() == "wow_format";
    }
  }
  // The file's format, one this build reads or migrates; refuses any other.
  auto check_format = [&]() -> std::int64_t {
    Query q(w, "SELECT version FROM wow_format WHERE name = 'wow'");
    if (!q.Step()) {
      refuse(
          "has a wow_format table without a format record: it was not written by Wow, or it "
          "is damaged; use another file, or restore this one from a backup");
    }
    const std::int64_t version = q.Int(0);
    if (version < kOldestMigratedFormatVersion || version > kFormatVersion) {
      std::string migrated;
      for (int v = kOldestMigratedFormatVersion; v < kFormatVersion; ++v) {
        migrated += (migrated.empty() ? "" : v + 1 == kFormatVersion ? " and " : ", ") +
                    std::to_string(v);
      }
      refuse("is in Wow SQLite format " + std::to_string(version) + "; this build reads format " +
             std::to_string(kFormatVersion) + " (and migrates formats " + migrated +
             ") only. Open it with the version of Wow that wrote it, or use another file; the "
             "file was not changed");
    }
    return version;
  };
  // The quick check of a Wow file: its header says it is one, and every table its registry
  // names exists.
  auto check_damage = [&] {
    auto damaged = [&](const std::string& why) {
      throw Error(ErrorCode::kDataLoss,
                  "SQLite database \"" + path_ + "\" is damaged: " + why +
                      "; the file was not changed: restore it from a backup (wow check reports "
                      "what else is wrong)");
    };
    {
      Query q(w, "PRAGMA application_id");
      const std::int64_t id = q.Step() ? q.Int(0) : 0;
      if (id != kApplicationId) {
        damaged("its header's application_id is " + std::to_string(id) + ", not Wow's " +
                std::to_string(kApplicationId));
      }
    }
    // One statement, so one snapshot: a process creating a table meanwhile commits its table
    // and its registry row together, and the check sees both or neither.
    Query q(w,
            "SELECT name FROM wow_tables WHERE name NOT IN "
            "(SELECT name FROM sqlite_master WHERE type = 'table') ORDER BY name");
    if (q.Step()) {
      damaged("its registry names table " + q.Text(0) + ", which the file does not hold");
    }
  };
  std::int64_t format = kFormatVersion;
  if (has_format) {
    format = check_format();
    check_damage();
  } else if (!tables.empty()) {
    std::string names;
    for (size_t i = 0; i < tables.size() && i < 5; ++i) names += (i ? ", " : "") + tables[i];
    if (tables.size() > 5) names += ", ...";
    refuse("is another application's database (it has tables " + names +
           " and no Wow format record); give Wow a file of its own; the file was not changed");
  } else {
    Query q(w, "PRAGMA application_id");
    if (q.Step() && q.Int(0) != 0 && q.Int(0) != kApplicationId) {
      refuse("belongs to another application (its application_id is " + std::to_string(q.Int(0)) +
             "); give Wow a file of its own; the file was not changed");
    }
  }

  if (read_only_) {
    if (!has_format) {
      refuse("has no Wow format record (it is empty, or not Wow's); opened read-only, it was not "
             "initialized: open it writable once (wow init, or the service)");
    }
    if (format != kFormatVersion) {
      refuse("is in Wow SQLite format " + std::to_string(format) +
             ", which a writable open migrates to format " + std::to_string(kFormatVersion) +
             "; opened read-only, it was not changed: open it writable once (start the service "
             "on it), then again");
    }
    return;
  }
  auto journal_mode = [&](const char* pragma) {
    Query q(w, pragma);
    return q.Step() ? q.Text(0) : std::string();
  };
  // WAL mode is kept in the file: only a new file needs the exclusive lock that turns it on.
  if (journal_mode("PRAGMA journal_mode") != "wal") {
    const std::string mode = journal_mode("PRAGMA journal_mode = WAL");
    if (mode != "wal") {
      throw Error(ErrorCode::kFailedPrecondition,
                  "SQLite database \"" + path_ + "\" cannot use WAL mode (journal mode is \"" +
                      mode +
                      "\"); put the file on a local file system that supports shared "
                      "memory");
    }
  }

  if (has_format) {
    if (format != kFormatVersion) Migrate();
    return;
  }
  Transaction tx(w, Transaction::Kind::kWrite);
  w.Execute(kCoreSchema);
  Query(w, "INSERT OR IGNORE INTO wow_format (name, version) VALUES ('wow', ?1)")
      .Bind(1, kFormatVersion)
      .Run();
  w.Execute("PRAGMA application_id = " + std::to_string(kApplicationId));
  format = check_format();  // another process may have created the file first
  tx.Commit();
  if (format != kFormatVersion) Migrate();
}

void Schema::Migrate() {
  Connection& w = writer_;
  RegisterStreamChecksum(w);
  Transaction tx(w, Transaction::Kind::kWrite);
  std::int64_t format = kFormatVersion;
  {
    Query q(w, "SELECT version FROM wow_format WHERE name = 'wow'");
    if (q.Step()) format = q.Int(0);
  }
  if (format >= kFormatVersion) return;  // migrated by another process
  auto tables = [&](TableKind kind) {
    std::vector<std::string> names;
    Query q(w, "SELECT name FROM wow_tables WHERE kind = ?1 ORDER BY name");
    q.Bind(1, KindName(kind));
    while (q.Step()) names.push_back(q.Text(0));
    return names;
  };
  if (format < 4) {
    for (const std::string& log : tables(TableKind::kLog)) {
      w.Execute("ALTER TABLE " + Quoted(log) + " ADD COLUMN checksum INTEGER");
      w.Execute("UPDATE " + Quoted(log) +
                " SET checksum = wow_stream_checksum(position, tenant_id, aggregate_id, version, "
                "request_id, time, events, facts, transport)");
    }
  }
  for (const std::string& timers : tables(TableKind::kTimer)) {
    w.Execute("ALTER TABLE " + Quoted(timers) +
              " ADD COLUMN parked_version INTEGER NOT NULL DEFAULT 0");
  }
  // The reservation tables are as format 3 had them.
  Query(w, "UPDATE wow_tables SET format = ?1").Bind(1, kFormatVersion).Run();
  Query(w, "UPDATE wow_format SET version = ?1 WHERE name = 'wow'").Bind(1, kFormatVersion).Run();
  tx.Commit();
}

void Schema::EnsureTable(Connection& writer, TableKind kind, const std::string& context,
                         const std::string& aggregate) {
  const std::string name = TableName(kind, context, aggregate);
  if (writer.known_tables().contains(name)) return;
  std::optional<std::int64_t> format;
  {
    Query q(writer, "SELECT format FROM wow_tables WHERE name = ?1");
    q.Bind(1, name);
    if (q.Step()) format = q.Int(0);
  }
  if (format && *format != kFormatVersion) {
    throw Error(ErrorCode::kFailedPrecondition,
                "SQLite database \"" + path_ + "\": table " + name + " is in format " +
                    std::to_string(*format) + "; this build reads format " +
                    std::to_string(kFormatVersion) + " only");
  }
  if (!format) {
    writer.Execute(TableSchema(kind, name));
    Query(writer,
          "INSERT INTO wow_tables (name, kind, context, aggregate, format) "
          "VALUES (?1, ?2, ?3, ?4, ?5)")
        .Bind(1, name)
        .Bind(2, KindName(kind))
        .Bind(3, context)
        .Bind(4, aggregate)
        .Bind(5, kFormatVersion)
        .Run();
  }
  writer.known_tables().insert(name);
}

bool Schema::HasEarlierTimerTables(Connection& connection, const std::string& context) {
  return !EarlierTimerTables(connection, context).empty();
}

void Schema::DropEarlierTimerTables(Connection& writer, const std::string& context) {
  const std::vector<std::string> names = EarlierTimerTables(writer, context);
  if (names.empty()) return;  // dropped by another process meanwhile
  Query(writer, "DELETE FROM wow_checkpoints WHERE context = ?1 AND subscription = ?2")
      .Bind(1, context)
      .Bind(2, kTimerSubscriptionName)
      .Run();
  for (const std::string& name : names) {
    writer.Execute("DROP TABLE IF EXISTS " + Quoted(name));
    Query(writer, "DELETE FROM wow_tables WHERE name = ?1").Bind(1, name).Run();
    writer.known_tables().erase(name);
  }
}

bool Schema::TableExists(Connection& connection, const std::string& name) {
  const bool writer = &connection == &writer_;
  if (writer) {
    if (connection.known_tables().contains(name)) return true;
  } else {
    std::lock_guard lock(tables_mutex_);
    if (existing_tables_.contains(name)) return true;
  }
  Query q(connection, "SELECT 1 FROM wow_tables WHERE name = ?1");
  q.Bind(1, name);
  if (!q.Step()) return false;
  if (writer) {
    connection.known_tables().insert(name);  // forgotten again on a rollback
  } else {
    std::lock_guard lock(tables_mutex_);
    existing_tables_.insert(name);
  }
  return true;
}

std::vector<RegisteredTable> Schema::Tables(Connection& connection, TableKind kind,
                                            const std::string& context) {
  std::vector<RegisteredTable> tables;
  Query q(connection,
          "SELECT aggregate, name FROM wow_tables WHERE kind = ?1 AND context = ?2 "
          "ORDER BY aggregate");
  q.Bind(1, KindName(kind)).Bind(2, context);
  while (q.Step()) tables.push_back({q.Text(0), q.Text(1)});
  return tables;
}

void Schema::ClaimPartitionCount(Connection& writer, const std::string& context, int partitions) {
  std::optional<std::int64_t> recorded;
  {
    Query q(writer, "SELECT partitions FROM wow_contexts WHERE context = ?1");
    q.Bind(1, context);
    if (q.Step()) recorded = q.Int(0);
  }
  if (!recorded) {
    Query(writer, "INSERT INTO wow_contexts (context, partitions) VALUES (?1, ?2)")
        .Bind(1, context)
        .Bind(2, partitions)
        .Run();
  } else if (*recorded != partitions) {
    throw Error(ErrorCode::kFailedPrecondition,
                "SQLite database \"" + path_ + "\": context \"" + context + "\" has " +
                    std::to_string(*recorded) + " partitions, not " + std::to_string(partitions) +
                    "; the partition count never changes: name " + std::to_string(*recorded) +
                    ", or use another context or file");
  }
}

}  // namespace wow::sqlite
