#include "store/sqlite/reader_sync.h"

#include <cerrno>
#include <system_error>
#include <utility>

#include "wow/error.h"

namespace wow::sqlite {

ReaderSync::ReaderSync(std::string path, std::string wal_path)
    : path_(std::move(path)), wal_path_(std::move(wal_path)) {}

void ReaderSync::Sync() {
  auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::kUnavailable,
                "SQLite database \"" + path_ + "\": " + what +
                    " failed: " + std::generic_category().message(errno) +
                    "; entries another process committed may not be on disk, so they are not "
                    "delivered: check the disk and the system log");
  };
  // Concurrent callers share syncs: a sync that started after this call began covers every
  // commit its caller saw.
  const std::uint64_t started_before = started_.load();
  if (arrived_hook_) arrived_hook_();
  std::lock_guard lock(mutex_);
  if (synced_through_ > started_before) return;
  if (wal_file_.fd < 0) {
    // Once it exists, the log stays the same file while this process has the database open.
    std::string failed;
    wal_file_.fd = OpenWalToSync(wal_path_, true, &failed);
    if (wal_file_.fd < 0) {
      if (failed.empty()) return;  // no log
      fail(failed);
    }
  }
  const std::uint64_t mine = started_.fetch_add(1) + 1;
  if (syncing_hook_) syncing_hook_();
  if (DataSync(wal_file_.fd) != 0) fail("syncing the write-ahead log");
  synced_through_ = mine;
  syncs_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace wow::sqlite
