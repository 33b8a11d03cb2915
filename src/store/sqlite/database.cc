#include "store/sqlite/database.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

#include "core/background_thread.h"

namespace wow {
namespace sqlite {

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
      // rowid range. The transport is the last column, so reads that leave it out never load
      // its pages. Unique indexes: the version and the request of each stream.
      return "CREATE TABLE IF NOT EXISTS " + t + R"sql( (
  position INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  time INTEGER NOT NULL,
  events BLOB NOT NULL,
  facts BLOB,
  transport BLOB NOT NULL
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

}  // namespace
}  // namespace sqlite

using sqlite::Connection;
using sqlite::Query;

SqliteDatabase::SqliteDatabase(const std::string& path, const SqliteOptions& options)
    : path_(path),
      options_(options),
      syncer_syncs_(options.synchronous == SqliteOptions::Synchronous::kFull) {
  Require(!path_.empty(), "SQLite database path is empty");
  Require(options_.busy_timeout.count() >= 0,
          "SqliteOptions::busy_timeout must not be negative, got " +
              std::to_string(options_.busy_timeout.count()) + " ms");
  Require(options_.max_group_commit >= 1,
          "SqliteOptions::max_group_commit must be at least 1, got " +
              std::to_string(options_.max_group_commit));
  writer_ = std::make_unique<Connection>(ConnectionOptionsFor(/*reader=*/false));
  // While another process turns the same new file to WAL or creates its tables, SQLite reports
  // some moments as SQLITE_BUSY without calling the busy handler: retry until busy_timeout.
  const auto deadline = std::chrono::steady_clock::now() + options_.busy_timeout;
  for (;;) {
    try {
      CheckAndInitialize();
      break;
    } catch (const sqlite::SqliteFailure& failure) {
      if (failure.primary_code() != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
        throw;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // The writer commits without syncing when the syncer syncs.
  wal_path_ = sqlite3_filename_wal(sqlite3_db_filename(writer_->handle(), "main"));
  if (syncer_syncs_) {
    writer_->Execute("PRAGMA synchronous = NORMAL");
    syncer_ = core::StartBackgroundThread([this] { RunSyncer(); });
  }
  sqlite3_wal_hook(writer_->handle(), &SqliteDatabase::OnWalCommit, this);
  checkpointer_ = core::StartBackgroundThread([this] { RunCheckpointer(); });
}

SqliteDatabase::~SqliteDatabase() {
  {
    std::lock_guard lock(write_mutex_);
    stopping_ = true;
  }
  sync_wanted_.notify_all();
  syncer_ = {};  // joins
  {
    std::lock_guard lock(checkpoint_mutex_);
    checkpointer_stopping_ = true;
  }
  checkpoint_wanted_.notify_all();
  checkpointer_ = {};  // joins
}

SqliteDatabase::WalFile::~WalFile() {
  if (fd >= 0) ::close(fd);
}

sqlite::ConnectionOptions SqliteDatabase::ConnectionOptionsFor(bool reader) const {
  sqlite::ConnectionOptions connection;
  connection.path = path_;
  connection.open_flags =
      reader ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  connection.busy_timeout = options_.busy_timeout;
  connection.synchronous = sqlite::SynchronousName(options_.synchronous);
  connection.query_only = reader;
  return connection;
}

// Reads the file before changing anything: a file of another format or application is refused as
// it is. Then WAL mode, and the core tables and format record when missing.
void SqliteDatabase::CheckAndInitialize() {
  Connection& w = *writer_;
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
  auto check_format = [&] {
    Query q(w, "SELECT version FROM wow_format WHERE name = 'wow'");
    if (!q.Step()) {
      refuse(
          "has a wow_format table without a format record: it was not written by Wow, or it "
          "is damaged; use another file, or restore this one from a backup");
    }
    const std::int64_t version = q.Int(0);
    if (version != sqlite::kFormatVersion) {
      refuse("is in Wow SQLite format " + std::to_string(version) + "; this build reads format " +
             std::to_string(sqlite::kFormatVersion) +
             " only. Open it with the version of Wow that wrote it, or use another file; the "
             "file was not changed");
    }
  };
  if (has_format) {
    check_format();
  } else if (!tables.empty()) {
    std::string names;
    for (size_t i = 0; i < tables.size() && i < 5; ++i) names += (i ? ", " : "") + tables[i];
    if (tables.size() > 5) names += ", ...";
    refuse("is another application's database (it has tables " + names +
           " and no Wow format record); give Wow a file of its own; the file was not changed");
  } else {
    Query q(w, "PRAGMA application_id");
    if (q.Step() && q.Int(0) != 0 && q.Int(0) != sqlite::kApplicationId) {
      refuse("belongs to another application (its application_id is " + std::to_string(q.Int(0)) +
             "); give Wow a file of its own; the file was not changed");
    }
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

  if (has_format) return;
  sqlite::Transaction tx(w, sqlite::Transaction::Kind::kWrite);
  w.Execute(sqlite::kCoreSchema);
  Query(w, "INSERT OR IGNORE INTO wow_format (name, version) VALUES ('wow', ?1)")
      .Bind(1, sqlite::kFormatVersion)
      .Run();
  w.Execute("PRAGMA application_id = " + std::to_string(sqlite::kApplicationId));
  check_format();  // another process may have created the file first
  tx.Commit();
}

// ---- writes ----------------------------------------------------------------------------------

namespace {

std::uint64_t MicrosOf(std::chrono::steady_clock::duration elapsed) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
}

}  // namespace

// How many batches one leader commits at least before it hands the writer on.
constexpr int kLeaderRounds = 4;

void SqliteDatabase::Write(const std::function<void(Connection&)>& work, int weight,
                           sqlite::WriteSync sync) {
  WriteRequest request;
  request.work = &work;
  request.weight = std::max(weight, 1);
  request.sync = sync;
  bool lead = false;
  {
    std::lock_guard lock(write_mutex_);
    if (sync_failure_) std::rethrow_exception(sync_failure_);
    write_queue_.push_back(&request);
    lead = !leading_;
    leading_ = true;
  }
  // Woken as the leader (not done), or done by the leader or the syncer. The leader's own work is
  // in its first batch.
  if (!lead) request.wake.Wait();
  if (!request.done && !Lead(request)) request.wake.Wait();
  if (request.error) std::rethrow_exception(request.error);
}

bool SqliteDatabase::Lead(WriteRequest& own) {
  std::vector<WriteRequest*> woken;  // done: posted as soon as the lock is released
  auto post_woken = [&woken] {
    for (WriteRequest* request : woken) request->wake.Post();
    woken.clear();
  };
  bool own_to_syncer = false;  // then the syncer posts it: own is gone once it did
  std::unique_lock lock(write_mutex_);
  // The leader commits the queue's front, up to max_group_commit appends, in one transaction,
  // then the next front, while works keep arriving: at least kLeaderRounds batches, and for as
  // long as its own work waits for the syncer anyway. Handing the writer to another thread costs
  // a wake-up on the critical path.
  for (int round = 0;
       !write_queue_.empty() && (round < kLeaderRounds || (own_to_syncer && !own.done)); ++round) {
    std::vector<WriteRequest*> batch;
    int total = 0;
    for (WriteRequest* queued : write_queue_) {
      if (!batch.empty() && total + queued->weight > options_.max_group_commit) break;
      batch.push_back(queued);
      total += queued->weight;
    }
    const std::exception_ptr refused = sync_failure_;
    lock.unlock();
    post_woken();  // the previous batch's, while this one runs
    bool committed = false;
    const auto began = std::chrono::steady_clock::now();
    if (refused) {
      for (WriteRequest* request : batch) request->error = refused;
    } else {
      committed = RunBatch(batch);
    }
    const auto ran = std::chrono::steady_clock::now() - began;
    lock.lock();
    write_stats_.writing_micros += MicrosOf(ran);
    bool durable = false;
    for (size_t i = 0; i < batch.size(); ++i) {
      WriteRequest* finished = write_queue_.front();
      write_queue_.pop_front();
      if (committed && syncer_syncs_ && finished->sync == sqlite::WriteSync::kDurable &&
          !finished->error) {
        unsynced_.push_back(finished);  // the syncer wakes it
        durable = true;
        own_to_syncer = own_to_syncer || finished == &own;
        continue;
      }
      finished->done = true;
      if (finished != &own) woken.push_back(finished);
    }
    if (committed) {
      ++write_stats_.transactions;
      write_stats_.works += batch.size();
      if (durable) ++unsynced_transactions_;
    }
    // The syncer starts on the batch while the leader commits the next; a last batch the leader
    // may sync itself (below).
    if (durable && !write_queue_.empty()) sync_wanted_.notify_one();
    if (after_each_batch_) {
      lock.unlock();
      after_each_batch_();
      lock.lock();
    }
  }
  // A lone writer syncs its own batches: waking the syncer and waiting for it would put two thread
  // switches on its path, and no commit waits for the writer meanwhile. Not when the syncer synced
  // `own` already: it posts own's wake, perhaps not yet, and Write must wait for that post. Were
  // Write to return instead, the late post would land on the wake of the thread's next Write,
  // which would then lead beside the real leader: two threads on one connection.
  if (own_to_syncer && !own.done && write_queue_.empty() && !syncing_ && !syncs_held_) {
    SyncCommitted(lock, &own, &woken);
    own_to_syncer = false;
  } else if (!unsynced_.empty() && !syncing_) {
    sync_wanted_.notify_one();
  }
  // The queue's front leads next (leading_ stays set for it); else no one leads.
  if (write_queue_.empty()) {
    leading_ = false;
  } else {
    woken.push_back(write_queue_.front());
  }
  lock.unlock();
  post_woken();
  return !own_to_syncer;
}

namespace {

// Failures after which SQLite may have rolled the whole transaction back.
bool EndsTransaction(const sqlite::SqliteFailure& failure) {
  switch (failure.primary_code()) {
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return false;
    default:
      return true;
  }
}

}  // namespace

bool SqliteDatabase::RunBatch(const std::vector<WriteRequest*>& batch) {
  Connection& w = *writer_;
  try {
    sqlite::Transaction tx(w, sqlite::Transaction::Kind::kWrite);
    if (batch.size() == 1) {
      (*batch.front()->work)(w);
    } else {
      for (WriteRequest* request : batch) {
        sqlite::Savepoint savepoint(w);
        try {
          (*request->work)(w);
          savepoint.Release();
        } catch (const sqlite::SqliteFailure& failure) {
          if (EndsTransaction(failure) || !w.InTransaction()) throw;
          request->error = std::current_exception();
        } catch (...) {
          if (!w.InTransaction()) throw;
          request->error = std::current_exception();  // the savepoint undoes its writes
        }
      }
    }
    tx.Commit();
    return true;
  } catch (const sqlite::SqliteFailure& failure) {
    for (WriteRequest* request : batch) request->error = std::make_exception_ptr(failure);
  } catch (const Error& error) {
    for (WriteRequest* request : batch) request->error = std::make_exception_ptr(error);
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    for (WriteRequest* request : batch) request->error = error;
  }
  return false;
}

// ---- checkpoints -----------------------------------------------------------------------------

namespace {

// The checkpointer copies the log into the file every this many frames the writer appends...
constexpr int kCheckpointerFrames = 256;
// ...and the writer checkpoints itself past this many: a checkpoint that starts while no commit
// of this process runs can copy the whole log, so that the next transaction restarts it from its
// beginning. The checkpointer alone never catches up with a writer that never pauses.
constexpr int kWriterCheckpointFrames = 2000;

}  // namespace

int SqliteDatabase::OnWalCommit(void* self, sqlite3* db, const char* name, int frames) {
  auto& database = *static_cast<SqliteDatabase*>(self);
  if (frames >= kWriterCheckpointFrames) {
    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    return SQLITE_OK;  // as SQLite's own automatic checkpoint: a failure is retried next time
  }
  int& requested = database.checkpoint_requested_frames_;
  if (frames < requested) requested = 0;  // the log restarted
  if (frames - requested >= kCheckpointerFrames) {
    requested = frames;
    {
      std::lock_guard lock(database.checkpoint_mutex_);
      database.checkpoint_requested_ = true;
    }
    database.checkpoint_wanted_.notify_one();
  }
  return SQLITE_OK;
}

void SqliteDatabase::RunCheckpointer() {
  std::unique_ptr<Connection> connection;
  std::unique_lock lock(checkpoint_mutex_);
  for (;;) {
    checkpoint_wanted_.wait(lock, [&] { return checkpointer_stopping_ || checkpoint_requested_; });
    if (checkpointer_stopping_) return;
    checkpoint_requested_ = false;
    lock.unlock();
    try {
      if (!connection) connection = std::make_unique<Connection>(ConnectionOptionsFor(true));
      const int rc = sqlite3_wal_checkpoint_v2(connection->handle(), "main",
                                               SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      if (rc == SQLITE_OK) {
        checkpoints_.fetch_add(1, std::memory_order_relaxed);
      } else if (rc != SQLITE_BUSY) {
        spdlog::warn(
            "SQLite database \"{}\": a checkpoint failed ({}); the writer's next one "
            "retries it",
            path_, sqlite3_errstr(rc));
      }
    } catch (const std::exception& failure) {
      spdlog::warn("SQLite database \"{}\": the checkpointer cannot open its connection: {}", path_,
                   failure.what());
    }
    lock.lock();
  }
}

// ---- the syncer ------------------------------------------------------------------------------

void SqliteDatabase::RunSyncer() {
  std::unique_lock lock(write_mutex_);
  for (;;) {
    sync_wanted_.wait(
        lock, [&] { return stopping_ || (!unsynced_.empty() && !syncs_held_ && !syncing_); });
    if (unsynced_.empty() || syncing_) {
      if (stopping_ && unsynced_.empty()) return;  // every write acknowledged
      continue;
    }
    SyncCommitted(lock, nullptr, nullptr);
  }
}

void SqliteDatabase::SyncCommitted(std::unique_lock<std::mutex>& lock, const WriteRequest* self,
                                   std::vector<WriteRequest*>* done_already) {
  // Every batch committed so far shares this sync.
  syncing_ = true;
  std::vector<WriteRequest*> synced;
  synced.swap(unsynced_);
  const std::uint64_t transactions = std::exchange(unsynced_transactions_, 0);
  const bool fail = std::exchange(fail_next_sync_, false);
  std::exception_ptr failure = sync_failure_;  // after a failure, no later sync vouches
  lock.unlock();
  if (done_already != nullptr) {  // not made to wait for this sync
    for (WriteRequest* request : *done_already) request->wake.Post();
    done_already->clear();
  }
  const auto began = std::chrono::steady_clock::now();
  if (!failure) {
    try {
      SyncWal(fail);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  const auto took = std::chrono::steady_clock::now() - began;
  lock.lock();
  syncing_ = false;
  write_stats_.syncing_micros += MicrosOf(took);
  if (failure) {
    sync_failure_ = failure;
  } else {
    write_stats_.synced += transactions;
    ++write_stats_.syncs;
  }
  for (WriteRequest* request : synced) {
    if (failure) request->error = failure;
    request->done = true;
  }
  if (!unsynced_.empty()) sync_wanted_.notify_one();  // committed while this sync ran
  lock.unlock();
  for (WriteRequest* request : synced) {
    if (request != self) request->wake.Post();
  }
  lock.lock();
}

namespace {

// Opens the write-ahead log `wal` to sync it, and syncs its directory, for the log may be new and
// its directory entry must be on disk too. Returns -1 when the log does not exist and
// `missing_ok`; throws what `fail` throws for every other failure (errno set).
template <typename Fail>
int OpenWalToSync(const std::string& wal_path, bool missing_ok, const Fail& fail) {
  const std::filesystem::path wal = wal_path;
  const int fd = ::open(wal.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (missing_ok && errno == ENOENT) return -1;
    fail("opening the write-ahead log " + wal.string() + " to sync it");
  }
  const std::string directory = wal.parent_path().empty() ? "." : wal.parent_path().string();
  const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int synced = dir < 0 ? -1 : ::fsync(dir);
  const int saved = errno;
  if (dir >= 0) ::close(dir);
  if (synced != 0) {
    ::close(fd);
    errno = saved;
    fail("syncing the directory " + directory);
  }
  return fd;
}

// fdatasync, retried when interrupted. Returns 0, or -1 with errno set.
int DataSync(int fd) {
  int rc;
  do {
    rc = ::fdatasync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

}  // namespace

void SqliteDatabase::SyncWal(bool simulate_failure) {
  auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::kUnavailable,
                "SQLite database \"" + path_ + "\": " + what +
                    " failed: " + std::generic_category().message(errno) +
                    "; the last writes may not be on disk, and this database refuses writes from "
                    "now on: check the disk and the system log, then open the database again");
  };
  if (wal_file_.fd < 0) {
    // The writer has committed, so the log exists; it stays the same file while this process
    // has the database open (SQLite removes it only when the last connection closes).
    wal_file_.fd = OpenWalToSync(wal_path_, false, fail);
  }
  const int rc = simulate_failure ? (errno = EIO, -1) : DataSync(wal_file_.fd);
  if (rc != 0) fail("syncing the write-ahead log");
}

void SqliteDatabase::SyncForReaders() {
  auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::kUnavailable,
                "SQLite database \"" + path_ + "\": " + what +
                    " failed: " + std::generic_category().message(errno) +
                    "; entries another process committed may not be on disk, so they are not "
                    "delivered: check the disk and the system log");
  };
  // Concurrent callers share syncs: a sync that started after this call began covers every
  // commit its caller saw.
  const std::uint64_t started_before = reader_syncs_started_.load();
  if (reader_arrived_hook_) reader_arrived_hook_();
  std::lock_guard lock(reader_sync_mutex_);
  if (reader_synced_through_ > started_before) return;
  if (reader_wal_file_.fd < 0) {
    // Once it exists, the log stays the same file while this process has the database open.
    reader_wal_file_.fd = OpenWalToSync(wal_path_, true, fail);
    if (reader_wal_file_.fd < 0) return;
  }
  const std::uint64_t mine = reader_syncs_started_.fetch_add(1) + 1;
  if (reader_syncing_hook_) reader_syncing_hook_();
  if (DataSync(reader_wal_file_.fd) != 0) fail("syncing the write-ahead log");
  reader_synced_through_ = mine;
  reader_syncs_.fetch_add(1, std::memory_order_relaxed);
}

SqliteDatabase::WriteStats SqliteDatabase::write_stats() const {
  std::lock_guard lock(write_mutex_);
  WriteStats stats = write_stats_;
  stats.reader_syncs = reader_syncs_.load(std::memory_order_relaxed);
  stats.checkpoints = checkpoints_.load(std::memory_order_relaxed);
  return stats;
}

size_t SqliteDatabase::queued_writes() const {
  std::lock_guard lock(write_mutex_);
  return write_queue_.size();
}

void SqliteDatabase::HoldSyncsForTesting(bool hold) {
  {
    std::lock_guard lock(write_mutex_);
    syncs_held_ = hold;
  }
  sync_wanted_.notify_all();
}

void SqliteDatabase::FailNextSyncForTesting() {
  std::lock_guard lock(write_mutex_);
  fail_next_sync_ = true;
}

void SqliteDatabase::AfterEachBatchForTesting(std::function<void()> hook) {
  std::lock_guard lock(write_mutex_);
  after_each_batch_ = std::move(hook);
}

void SqliteDatabase::ReaderSyncHooksForTesting(std::function<void()> arrived,
                                               std::function<void()> syncing) {
  std::lock_guard lock(reader_sync_mutex_);
  reader_arrived_hook_ = std::move(arrived);
  reader_syncing_hook_ = std::move(syncing);
}

void SqliteDatabase::SyncNowForTesting() {
  std::unique_lock lock(write_mutex_);
  if (!unsynced_.empty() && !syncing_) SyncCommitted(lock, nullptr, nullptr);
}

int SqliteDatabase::UnconsumedWakesForTesting() {
  return unconsumed_wakes_.load(std::memory_order_relaxed);
}

// ---- reads -----------------------------------------------------------------------------------

SqliteDatabase::ReaderLease::ReaderLease(SqliteDatabase& database) : db(database) {
  {
    std::lock_guard lock(db.readers_mutex_);
    if (!db.idle_readers_.empty()) {
      connection = std::move(db.idle_readers_.back());
      db.idle_readers_.pop_back();
      return;
    }
  }
  connection = std::make_unique<Connection>(db.ConnectionOptionsFor(/*reader=*/true));
}

SqliteDatabase::ReaderLease::~ReaderLease() {
  std::lock_guard lock(db.readers_mutex_);
  db.idle_readers_.push_back(std::move(connection));
}

// ---- the registry ----------------------------------------------------------------------------

void SqliteDatabase::EnsureTable(Connection& writer, sqlite::TableKind kind,
                                 const std::string& context, const std::string& aggregate) {
  const std::string name = sqlite::TableName(kind, context, aggregate);
  if (writer.known_tables().contains(name)) return;
  std::optional<std::int64_t> format;
  {
    Query q(writer, "SELECT format FROM wow_tables WHERE name = ?1");
    q.Bind(1, name);
    if (q.Step()) format = q.Int(0);
  }
  if (format && *format != sqlite::kFormatVersion) {
    if (kind != sqlite::TableKind::kTimer) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "SQLite database \"" + path_ + "\": table " + name + " is in format " +
                      std::to_string(*format) + "; this build reads format " +
                      std::to_string(sqlite::kFormatVersion) + " only");
    }
    // The timers are a view rebuilt from the log: a table of another format is dropped.
    writer.Execute("DROP TABLE IF EXISTS " + sqlite::Quoted(name));
    Query(writer, "DELETE FROM wow_tables WHERE name = ?1").Bind(1, name).Run();
    format.reset();
  }
  if (!format) {
    writer.Execute(sqlite::TableSchema(kind, name));
    Query(writer,
          "INSERT INTO wow_tables (name, kind, context, aggregate, format) "
          "VALUES (?1, ?2, ?3, ?4, ?5)")
        .Bind(1, name)
        .Bind(2, sqlite::KindName(kind))
        .Bind(3, context)
        .Bind(4, aggregate)
        .Bind(5, sqlite::kFormatVersion)
        .Run();
  }
  writer.known_tables().insert(name);
}

bool SqliteDatabase::TableExists(Connection& connection, const std::string& name) {
  const bool writer = &connection == writer_.get();
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

std::vector<sqlite::RegisteredTable> SqliteDatabase::Tables(Connection& connection,
                                                            sqlite::TableKind kind,
                                                            const std::string& context) {
  std::vector<sqlite::RegisteredTable> tables;
  Query q(connection,
          "SELECT aggregate, name FROM wow_tables WHERE kind = ?1 AND context = ?2 "
          "ORDER BY aggregate");
  q.Bind(1, sqlite::KindName(kind)).Bind(2, context);
  while (q.Step()) tables.push_back({q.Text(0), q.Text(1)});
  return tables;
}

void SqliteDatabase::ClaimPartitionCount(Connection& writer, const std::string& context,
                                         int partitions) {
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
  return std::make_shared<SqliteDatabase>(path, options);
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
