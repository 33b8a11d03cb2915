// ReaderSync (private): SqliteDatabase::SyncForReaders. Syncs the write-ahead log on the calling
// thread, through a descriptor of its own (the syncer's is the group commit's), so that a reader
// does not act on another process's commit before it is on disk. Concurrent callers share syncs:
// a sync that started after a call began covers every commit its caller saw.
//
// Thread-safety: safe for concurrent use. One mutex serializes the syncs and guards the
// descriptor; it is held across the fdatasync, and no other lock is taken under it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "store/sqlite/wal_file.h"

namespace wow {

class SqliteDatabaseTestPeer;

namespace sqlite {

class ReaderSync {
 public:
  // Syncs the write-ahead log at `wal_path`, opened by the first sync that finds it. `path` names
  // the database in messages.
  ReaderSync(std::string path, std::string wal_path);
  ReaderSync(const ReaderSync&) = delete;
  ReaderSync& operator=(const ReaderSync&) = delete;

  // Makes every transaction committed to the file before the call, by this process or another,
  // durable: syncs the write-ahead log, unless a sync that started after the call began
  // succeeded meanwhile (nothing either when the file has no log: its commits were checkpointed
  // into the file, synced). Throws Error(kUnavailable) when the sync fails.
  void Sync();

  // The syncs that succeeded so far (SqliteWriteStats::reader_syncs).
  std::uint64_t syncs() const { return syncs_.load(std::memory_order_relaxed); }

 private:
  friend class ::wow::SqliteDatabaseTestPeer;

  const std::string path_;
  const std::string wal_path_;

  std::mutex mutex_;
  WalFile wal_file_;  // guarded by mutex_
  // The syncs, numbered as they start; the number of the last that succeeded; their count.
  std::atomic<std::uint64_t> started_{0};
  std::uint64_t synced_through_ = 0;  // guarded by mutex_
  std::atomic<std::uint64_t> syncs_{0};
  // Test seams, set while no Sync runs (null: none): `arrived_hook_` runs on each caller's thread
  // once it noted the syncs started before it; `syncing_hook_` on the syncing thread, before its
  // fdatasync.
  std::function<void()> arrived_hook_;
  std::function<void()> syncing_hook_;
};

}  // namespace sqlite
}  // namespace wow
