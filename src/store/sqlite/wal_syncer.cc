#include "store/sqlite/wal_syncer.h"

#include <cerrno>
#include <chrono>
#include <system_error>
#include <utility>

#include "core/background_thread.h"
#include "wow/error.h"

namespace wow::sqlite {

namespace {

std::uint64_t MicrosOf(std::chrono::steady_clock::duration elapsed) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
}

}  // namespace

WalSyncer::WalSyncer(std::mutex& mutex, std::string path, std::string wal_path)
    : mutex_(mutex), path_(std::move(path)), wal_path_(std::move(wal_path)) {}

WalSyncer::~WalSyncer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wanted_.notify_all();
  thread_ = {};  // joins
}

void WalSyncer::Start() {
  thread_ = core::StartBackgroundThread([this] { Run(); });
}

void WalSyncer::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wanted_.wait(lock, [&] { return stopping_ || (!unsynced_.empty() && !held_ && !syncing_); });
    if (unsynced_.empty() || syncing_) {
      if (stopping_ && unsynced_.empty()) return;  // every write acknowledged
      continue;
    }
    SyncCommitted(lock, nullptr, nullptr);
  }
}

void WalSyncer::SyncCommitted(std::unique_lock<std::mutex>& lock, const WriteRequest* self,
                              std::vector<WriteRequest*>* done_already) {
  // Every batch committed so far shares this sync.
  syncing_ = true;
  std::vector<WriteRequest*> synced;
  synced.swap(unsynced_);
  const std::uint64_t transactions = std::exchange(unsynced_transactions_, 0);
  const bool fail = std::exchange(fail_next_sync_, false);
  std::exception_ptr failure = failure_;  // after a failure, no later sync vouches
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
  syncing_micros_ += MicrosOf(took);
  if (failure) {
    failure_ = failure;
  } else {
    synced_ += transactions;
    ++syncs_;
  }
  for (WriteRequest* request : synced) {
    if (failure) request->error = failure;
    request->done = true;
  }
  if (!unsynced_.empty()) wanted_.notify_one();  // committed while this sync ran
  lock.unlock();
  for (WriteRequest* request : synced) {
    if (request != self) request->wake.Post();
  }
  lock.lock();
}

void WalSyncer::SyncWal(bool simulate_failure) {
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
    std::string failed;
    wal_file_.fd = OpenWalToSync(wal_path_, false, &failed);
    if (wal_file_.fd < 0) fail(failed);
  }
  const int rc = simulate_failure ? (errno = EIO, -1) : DataSync(wal_file_.fd);
  if (rc != 0) fail("syncing the write-ahead log");
}

void WalSyncer::AddStats(SqliteWriteStats& stats) const {
  stats.synced += synced_;
  stats.syncs += syncs_;
  stats.syncing_micros += syncing_micros_;
}

}  // namespace wow::sqlite
