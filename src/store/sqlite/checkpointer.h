// Checkpointer (private): copies the write-ahead log into the database file, mostly off the
// writer's path. The checkpointer thread, woken by the writer every kCheckpointerFrames frames it
// commits, copies the log's frames into the file (PASSIVE, beside the writer), on a connection of
// its own. It never catches up with a writer that never pauses, so the writer still checkpoints
// itself once the log holds kWriterCheckpointFrames frames (instead of SQLite's automatic
// checkpoint at 1000): only a checkpoint with no commit of this process running meanwhile can copy
// the whole log, which lets the next transaction restart it from its beginning; by then the
// checkpointer has copied most of it. (A checkpointer alone, measured, let the log grow without
// bound.)
//
// Thread-safety: safe for concurrent use. The WAL hook runs on the writer's thread, inside its
// commit; it takes the checkpointer's mutex only to wake the thread, and holds no other lock. The
// thread checkpoints without the mutex.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "store/sqlite/connection.h"

namespace wow::sqlite {

// The checkpointer copies the log into the file every this many frames the writer appends...
inline constexpr int kCheckpointerFrames = 256;
// ...and the writer checkpoints itself past this many: a checkpoint that starts while no commit
// of this process runs can copy the whole log, so that the next transaction restarts it from its
// beginning. The checkpointer alone never catches up with a writer that never pauses.
inline constexpr int kWriterCheckpointFrames = 2000;

class Checkpointer {
 public:
  // Installs itself as `writer`'s WAL hook (replacing SQLite's automatic checkpoints), and starts
  // its thread, which opens its own connection with `connection` when first woken. `writer`
  // outlives the checkpointer. `path` names the database in messages.
  Checkpointer(Connection& writer, ConnectionOptions connection, std::string path);
  // Removes the hook and joins the thread. REQUIRES: no transaction of the writer commits
  // meanwhile.
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // The thread's checkpoints that succeeded so far (SqliteWriteStats::checkpoints).
  std::uint64_t checkpoints() const { return checkpoints_.load(std::memory_order_relaxed); }

 private:
  // sqlite3_wal_hook of the writer, after each commit that leaves `frames` in the write-ahead log:
  // wakes the thread every kCheckpointerFrames, and checkpoints on the writer past
  // kWriterCheckpointFrames. Always SQLITE_OK: a failed checkpoint is retried by the next.
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int frames);
  // The thread: copies the log's frames into the file (PASSIVE) whenever woken, until destroyed.
  void Run();

  Connection& writer_;
  const ConnectionOptions connection_;
  const std::string path_;

  int requested_frames_ = 0;  // the log's frames at the last wake; the writer's own (the hook's)

  std::mutex mutex_;
  std::condition_variable wanted_;
  bool requested_ = false;  // guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  std::atomic<std::uint64_t> checkpoints_{0};
  std::jthread thread_;
};

}  // namespace wow::sqlite
