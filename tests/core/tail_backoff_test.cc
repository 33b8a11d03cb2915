// TailWithBackoff, the blocking part of every backend's EventLog::Tail: an idle tail polls less
// and less often, up to the maximum interval; a commit wakes it at once; a wake that finds nothing
// keeps the backoff it had.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "store/common/commit_signal.h"

namespace wow::store {
namespace {

using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A read_after that finds nothing and notes when it was called.
struct CountingReads {
  std::vector<Entry> operator()() {
    std::lock_guard lock(mutex);
    times.push_back(Steady::now());
    return {};
  }
  // The gaps between consecutive reads, in ms.
  std::vector<long> Gaps() {
    std::lock_guard lock(mutex);
    std::vector<long> gaps;
    for (size_t i = 1; i < times.size(); ++i) {
      gaps.push_back(std::chrono::duration_cast<milliseconds>(times[i] - times[i - 1]).count());
    }
    return gaps;
  }
  std::mutex mutex;
  std::vector<Steady::time_point> times;
};

TEST(TailBackoff, AnIdleTailDoublesItsWaitSoItReadsAboutSevenTimesIn1600Ms) {
  CommitSignal signal(1);
  CountingReads reads;
  TailWithBackoff(signal, 0, milliseconds(1600), std::stop_token{}, TailPolicy{},
                  [&] { return reads(); });
  // 0, 50, 150, 350, 750, 1550 ms, and once more at the deadline: 7. Polling every 50 ms: 33.
  EXPECT_LE(reads.times.size(), 8u) << ::testing::PrintToString(reads.Gaps());
  EXPECT_GE(reads.times.size(), 4u);
}

TEST(TailBackoff, TheWaitStopsGrowingAtTheMaximumInterval) {
  CommitSignal signal(1);
  CountingReads reads;
  TailWithBackoff(signal, 0, milliseconds(1000), std::stop_token{},
                  TailPolicy{milliseconds(10), milliseconds(40)}, [&] { return reads(); });
  // 10, 20, 40, 40, 40, ...: about 26 reads. Doubling without a cap: about 8.
  EXPECT_GE(reads.times.size(), 14u);
  const std::vector<long> gaps = reads.Gaps();
  ASSERT_GE(gaps.size(), 6u);
  EXPECT_LT(gaps[gaps.size() - 2], 80) << "a gap past the maximum interval";
}

TEST(TailBackoff, ACommitWakesTheTailAtOnceAndAWakeThatFindsNothingKeepsTheBackoff) {
  CommitSignal signal(1);
  CountingReads reads;
  std::jthread committer([&] {
    std::this_thread::sleep_for(milliseconds(400));  // the tail waits 320 ms by now
    signal.Notify(0);
  });
  const auto start = Steady::now();
  TailWithBackoff(signal, 0, milliseconds(1200), std::stop_token{},
                  TailPolicy{milliseconds(20), milliseconds(10'000)}, [&] { return reads(); });
  committer.join();
  // Reads at 0, 20, 60, 140, 300; the wake at 400; then the same 320 ms wait, not 20 again.
  std::lock_guard lock(reads.mutex);
  size_t woken = 0;
  while (woken < reads.times.size() && reads.times[woken] - start < milliseconds(390)) ++woken;
  ASSERT_LT(woken + 1, reads.times.size()) << "no read after the wake";
  const auto woke_at = reads.times[woken] - start;
  EXPECT_LT(woke_at, milliseconds(600)) << "the commit did not wake the tail at once";
  EXPECT_GE(reads.times[woken + 1] - reads.times[woken], milliseconds(160))
      << "the wake reset the backoff";
}

TEST(TailBackoff, AStopEndsTheWaitAtOnce) {
  CommitSignal signal(1);
  CountingReads reads;
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    stop.request_stop();
  });
  const auto start = Steady::now();
  TailWithBackoff(signal, 0, milliseconds(60'000), stop.get_token(), TailPolicy{},
                  [&] { return reads(); });
  EXPECT_LT(Steady::now() - start, milliseconds(30'000));
}

}  // namespace
}  // namespace wow::store
