// StartBackgroundThread: starts one of the library's own threads (command workers, subscription
// tails, the timer service, the SQLite syncer) with every signal blocked, so that a signal sent to
// the process (SIGINT, SIGTERM) reaches the application's threads, which may be waiting for it
// with sigwait, and never kills the process through a thread the application does not know of.
//
// Thread-safety: safe to call from any thread.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>

namespace wow::core {

// A std::jthread running `run`, started with every signal blocked; the calling thread's signal
// mask is as before when it returns. Throws what std::jthread throws (std::system_error).
template <typename F>
std::jthread StartBackgroundThread(F&& run) {
  sigset_t all;
  sigfillset(&all);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  struct Restore {
    const sigset_t& mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous};
  return std::jthread(std::forward<F>(run));
}

// Sleeps for `duration`, or until `stop` is requested: how a background thread waits between
// passes.
inline void SleepFor(std::chrono::milliseconds duration, const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any never;
  std::unique_lock lock(mutex);
  never.wait_for(lock, stop, duration, [] { return false; });
}

}  // namespace wow::core
