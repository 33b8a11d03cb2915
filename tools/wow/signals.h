// StopOnSignals: turns SIGINT and SIGTERM into a stop request, so a command that follows the log
// ends cleanly (its loop sees stop_requested and returns) instead of dying mid-write.
//
// Create it on the main thread before the command starts threads of its own: it blocks the two
// signals in the calling thread, so the threads started afterwards inherit the mask and the
// signals wait for its watcher (the SQLite store starts no threads). The signals stay blocked
// after it is destroyed; the command is ending then. Not thread-safe itself: create and destroy
// a StopOnSignals on one thread.
#pragma once

#include <stop_token>
#include <thread>

namespace wow::tool {

class StopOnSignals {
 public:
  // Starts a thread that waits for SIGINT or SIGTERM and then requests a stop of token().
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  std::stop_token token() const { return source_.get_token(); }
  bool stop_requested() const { return source_.stop_requested(); }

 private:
  std::stop_source source_;
  bool blocked_;
  std::jthread watcher_;
};

}  // namespace wow::tool
