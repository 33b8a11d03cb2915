#include "store/sqlite/checkpointer.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <memory>
#include <utility>

#include "core/background_thread.h"

namespace wow::sqlite {

Checkpointer::Checkpointer(Connection& writer, ConnectionOptions connection, std::string path)
    : writer_(writer), connection_(std::move(connection)), path_(std::move(path)) {
  thread_ = core::StartBackgroundThread([this] { Run(); });
  sqlite3_wal_hook(writer_.handle(), &Checkpointer::OnWalCommit, this);
}

Checkpointer::~Checkpointer() {
  sqlite3_wal_hook(writer_.handle(), nullptr, nullptr);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wanted_.notify_all();
  thread_ = {};  // joins
}

int Checkpointer::OnWalCommit(void* self, sqlite3* db, const char* name, int frames) {
  auto& checkpointer = *static_cast<Checkpointer*>(self);
  if (frames >= kWriterCheckpointFrames) {
    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    return SQLITE_OK;  // as SQLite's own automatic checkpoint: a failure is retried next time
  }
  int& requested = checkpointer.requested_frames_;
  if (frames < requested) requested = 0;  // the log restarted
  if (frames - requested >= kCheckpointerFrames) {
    requested = frames;
    {
      std::lock_guard lock(checkpointer.mutex_);
      checkpointer.requested_ = true;
    }
    checkpointer.wanted_.notify_one();
  }
  return SQLITE_OK;
}

void Checkpointer::Run() {
  std::unique_ptr<Connection> connection;
  std::unique_lock lock(mutex_);
  for (;;) {
    wanted_.wait(lock, [&] { return stopping_ || requested_; });
    if (stopping_) return;
    requested_ = false;
    lock.unlock();
    try {
      if (!connection) connection = std::make_unique<Connection>(connection_);
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

}  // namespace wow::sqlite
