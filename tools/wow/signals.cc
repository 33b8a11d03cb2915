#include "signals.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <ctime>

namespace wow::tool {

namespace {

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Blocks the stop signals in the calling thread; returns true so it can run in an initializer.
bool BlockStopSignals() {
  const sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return true;
}

}  // namespace

StopOnSignals::StopOnSignals()
    : blocked_(BlockStopSignals()), watcher_([this](std::stop_token own) {
        const sigset_t set = StopSignals();
        // Waits in short slices so the destructor can end the watcher when no signal came.
        const timespec slice{0, 100'000'000};
        while (!own.stop_requested()) {
          const int signal = sigtimedwait(&set, nullptr, &slice);
          if (signal == SIGINT || signal == SIGTERM) {
            source_.request_stop();
            return;
          }
        }
      }) {}

StopOnSignals::~StopOnSignals() {
  watcher_.request_stop();
  // The jthread joins itself.
}

}  // namespace wow::tool
