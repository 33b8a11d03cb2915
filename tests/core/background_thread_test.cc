// The library's own threads start with every signal blocked, and the caller's mask is left as it
// was: a SIGINT for the application never lands in a thread of the library.
#include "core/background_thread.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

namespace wow {
namespace {

bool Blocked(int signal) {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, signal) == 1;
}

TEST(StartBackgroundThread, StartsTheThreadWithEverySignalBlockedAndRestoresTheCallersMask) {
  ASSERT_FALSE(Blocked(SIGINT));
  bool int_blocked = false;
  bool term_blocked = false;
  core::StartBackgroundThread([&] {
    int_blocked = Blocked(SIGINT);
    term_blocked = Blocked(SIGTERM);
  }).join();
  EXPECT_TRUE(int_blocked);
  EXPECT_TRUE(term_blocked);
  EXPECT_FALSE(Blocked(SIGINT)) << "the caller's mask was not restored";
}

}  // namespace
}  // namespace wow
