// WriteRequest (private): one SqliteDatabase::Write call, as the group commit (group_commit.h)
// and the syncer (wal_syncer.h) hand it between threads; and Wakeup, the semaphore its thread
// sleeps on until the leader or the syncer is done with it.
//
// Thread-safety: a request lives on its Write call's stack. Its fields other than `wake` are
// written under the group commit's mutex by the thread that holds the request at the time (the
// leader, or the syncer), before that thread posts `wake`; the post hands them to the request's
// thread, which reads them once its Wait returns. A request is gone as soon as its thread returns
// from Write, so whoever posts must not touch it after the post.
#pragma once

#include <semaphore.h>

#include <atomic>
#include <exception>
#include <functional>

#include "store/sqlite/connection.h"

namespace wow {

class SqliteDatabaseTestPeer;

namespace sqlite {

// How far a write's commit must reach before Write returns, when SqliteOptions::synchronous is
// kFull (under kNormal and kOff every commit is as the option says).
//   kDurable  on disk: the write-ahead log was synced after the commit. For the appends,
//             and what nothing else could rebuild.
//   kLazy     in the write-ahead log, synced by the next sync or checkpoint: survives a crash of
//             the process, and a power loss may lose it only with every later commit. For what
//             the log rebuilds (confirmed keys, timers, checkpoints) and what expires anyway
//             (pending keys, leases).
enum class WriteSync { kDurable, kLazy };

// A POSIX semaphore: unlike a condition variable, it may be posted after the mutex that guards
// the state is released, and destroyed as soon as the waiter returns (POSIX allows it).
class Wakeup {
 public:
  Wakeup() { sem_init(&semaphore_, 0, 0); }
  // Counts a post no Wait consumed (see SqliteDatabaseTestPeer::UnconsumedWakes).
  ~Wakeup() {
    int value = 0;
    sem_getvalue(&semaphore_, &value);
    if (value != 0) unconsumed_.fetch_add(1, std::memory_order_relaxed);
    sem_destroy(&semaphore_);
  }
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Lets one Wait return, now or when it comes.
  void Post() { sem_post(&semaphore_); }
  // Returns once a Post is there for it, consuming it.
  void Wait() {
    while (sem_wait(&semaphore_) != 0) {  // only EINTR: a signal handler ran
    }
  }

 private:
  friend class ::wow::SqliteDatabaseTestPeer;
  // The wakes in this process destroyed with a post no Wait consumed: each is a bug, for that
  // post could instead have landed on the thread's next write.
  static inline std::atomic<int> unconsumed_{0};

  sem_t semaphore_;
};

// One Write call. Its thread sleeps on `wake` until it is the leader or its work is done.
struct WriteRequest {
  const std::function<void(Connection&)>* work = nullptr;
  int weight = 1;  // counts toward max_group_commit
  WriteSync sync = WriteSync::kDurable;
  bool done = false;         // committed (and synced, when durable under FULL), or failed
  std::exception_ptr error;  // the failure, when it failed
  Wakeup wake;
};

}  // namespace sqlite
}  // namespace wow
