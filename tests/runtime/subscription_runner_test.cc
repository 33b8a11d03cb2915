// The SubscriptionRunner's writes while it runs: the lease is renewed once a third of its time to
// live has passed, checkpoints are committed at most once per checkpoint_interval (and within it
// once a partition goes idle), and Stop commits what was handled, so a restart delivers nothing
// twice; WaitUntilCaughtUp waits for the checkpoints, up to a deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "wow/error.h"
#include "wow/event_log.h"
#include "wow/store_wrappers.h"
#include "wow/subscription.h"

namespace wow {
namespace {

using std::chrono::milliseconds;

constexpr const char* kContext = "shop";

// Counts the runner's lease and checkpoint writes.
class CountingLog : public EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  bool AcquireLease(int partition, const std::string& node, milliseconds ttl) override {
    ++leases;
    return EventLogWrapper::AcquireLease(partition, node, ttl);
  }
  void CommitCheckpoint(int partition, const std::string& subscription,
                        Sequence sequence) override {
    ++checkpoint_commits;
    EventLogWrapper::CommitCheckpoint(partition, subscription, sequence);
  }
  std::atomic<int> leases{0};
  std::atomic<int> checkpoint_commits{0};
};

class CountingSubscription : public Subscription {
 public:
  const std::string& name() const override { return name_; }
  void Handle(const Entry&) override { ++handled; }
  std::atomic<int> handled{0};

 private:
  const std::string name_ = "test.counting";
};

Stream StreamOf(const std::string& id, Version version) {
  Stream stream;
  stream.ref = {kContext, "brand", "t1", id};
  stream.version = version;
  stream.request_id = id + "@" + std::to_string(version);
  stream.events = {{"created", "{}"}};
  return stream;
}

SubscriptionRunnerOptions Options(milliseconds lease_ttl, milliseconds checkpoint_interval) {
  SubscriptionRunnerOptions options;
  options.lease_ttl = lease_ttl;
  options.checkpoint_interval = checkpoint_interval;
  return options;
}

// Waits until `subscription` handled `n` entries, for at most 10 s.
bool AwaitHandled(const CountingSubscription& subscription, int n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (subscription.handled.load() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  return subscription.handled.load() == n;
}

class SubscriptionRunnerWrites : public ::testing::Test {
 protected:
  void SetUp() override { log_->Create(1); }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::shared_ptr<CountingLog> log_ =
      std::make_shared<CountingLog>(NewMemoryEventLog(kContext, clock_));
  std::shared_ptr<CountingSubscription> subscription_ = std::make_shared<CountingSubscription>();
};

TEST_F(SubscriptionRunnerWrites, ARunningPartitionRenewsItsLeaseAndCommitsItsCheckpointRarely) {
  SubscriptionRunner runner(log_, {subscription_},
                            Options(std::chrono::hours(1), std::chrono::hours(1)));
  runner.Start();
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE(log_->Append(StreamOf("b" + std::to_string(i), 1)).appended());
    ASSERT_TRUE(AwaitHandled(*subscription_, i));  // one pass per entry
  }
  EXPECT_EQ(log_->leases.load(), 1) << "the lease was renewed before a third of its ttl passed";
  EXPECT_LE(log_->checkpoint_commits.load(), 1) << "a checkpoint commit per pass";
  runner.Stop();
  EXPECT_EQ(log_->Checkpoint(0, subscription_->name()), 20) << "Stop commits what was handled";

  // A restart delivers nothing again.
  SubscriptionRunner again(log_, {subscription_});
  EXPECT_EQ(again.CatchUp(), 0);
  EXPECT_EQ(subscription_->handled.load(), 20);
}

TEST_F(SubscriptionRunnerWrites, AZeroIntervalCommitsAfterEveryPass) {
  SubscriptionRunner runner(log_, {subscription_}, Options(milliseconds(10'000), milliseconds(0)));
  runner.Start();
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(log_->Append(StreamOf("b" + std::to_string(i), 1)).appended());
    ASSERT_TRUE(AwaitHandled(*subscription_, i));
    // The commit follows the handling within the same pass.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (log_->Checkpoint(0, subscription_->name()) < i &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    EXPECT_EQ(log_->Checkpoint(0, subscription_->name()), i);
  }
}

TEST_F(SubscriptionRunnerWrites, ACaughtUpPartitionWaitsPassIntervalAndStopCutsTheWaitShort) {
  SubscriptionRunnerOptions options = Options(milliseconds(10'000), milliseconds(0));
  options.pass_interval = std::chrono::hours(1);
  SubscriptionRunner runner(log_, {subscription_}, options);
  runner.Start();
  ASSERT_TRUE(log_->Append(StreamOf("b1", 1)).appended());
  ASSERT_TRUE(AwaitHandled(*subscription_, 1));
  ASSERT_TRUE(log_->Append(StreamOf("b2", 1)).appended());
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(subscription_->handled.load(), 1) << "the next pass did not wait";
  const auto stopping = std::chrono::steady_clock::now();
  runner.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(10));
}

// Waits until `subscription`'s checkpoint of partition 0 is `sequence`, for at most 10 s; returns
// how long it took.
std::chrono::steady_clock::duration AwaitCheckpoint(EventLog& log, const Subscription& subscription,
                                                    Sequence sequence) {
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::seconds(10);
  while (log.Checkpoint(0, subscription.name()) < sequence &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  return std::chrono::steady_clock::now() - started;
}

TEST_F(SubscriptionRunnerWrites, AnIdlePartitionCommitsItsLastCheckpointWithinTheInterval) {
  // The default lease (10 s): a pass of an idle partition waits up to a third of it for entries.
  SubscriptionRunner runner(log_, {subscription_},
                            Options(milliseconds(10'000), milliseconds(200)));
  runner.Start();
  ASSERT_TRUE(log_->Append(StreamOf("b1", 1)).appended());
  ASSERT_TRUE(AwaitHandled(*subscription_, 1));
  AwaitCheckpoint(*log_, *subscription_, 1);
  ASSERT_EQ(log_->Checkpoint(0, subscription_->name()), 1);
  // Handled within the interval of the last commit: its commit is due when the interval ends.
  ASSERT_TRUE(log_->Append(StreamOf("b2", 1)).appended());
  ASSERT_TRUE(AwaitHandled(*subscription_, 2));
  const auto took = AwaitCheckpoint(*log_, *subscription_, 2);
  EXPECT_EQ(log_->Checkpoint(0, subscription_->name()), 2);
  EXPECT_LT(took, milliseconds(1'500))
      << "the last checkpoint waited for the partition's next pass";
}

TEST_F(SubscriptionRunnerWrites, WaitUntilCaughtUpReturnsOnceTheCheckpointsReachTheHeads) {
  SubscriptionRunner runner(log_, {subscription_},
                            Options(milliseconds(10'000), milliseconds(200)));
  runner.Start();
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(log_->Append(StreamOf("b" + std::to_string(i), 1)).appended());
  }
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(runner.WaitUntilCaughtUp(std::chrono::seconds(5)));
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(1'500));
  EXPECT_EQ(log_->Checkpoint(0, subscription_->name()), 3);
  EXPECT_EQ(subscription_->handled.load(), 3);

  const AppendResult fourth = log_->Append(StreamOf("b4", 1));
  ASSERT_TRUE(fourth.appended());
  EXPECT_TRUE(runner.WaitUntilCaughtUp(fourth.position(), std::chrono::seconds(5)));
  EXPECT_GE(log_->Checkpoint(0, subscription_->name()), fourth.position().sequence);
}

TEST_F(SubscriptionRunnerWrites, WaitUntilCaughtUpGivesUpAtItsDeadline) {
  SubscriptionRunner runner(log_, {subscription_});  // not started: nothing moves on
  EXPECT_TRUE(runner.WaitUntilCaughtUp(milliseconds(0))) << "an empty log is caught up";
  const AppendResult first = log_->Append(StreamOf("b1", 1));
  ASSERT_TRUE(first.appended());
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(runner.WaitUntilCaughtUp(milliseconds(50)));
  EXPECT_GE(std::chrono::steady_clock::now() - started, milliseconds(50));
  EXPECT_FALSE(runner.WaitUntilCaughtUp(first.position(), milliseconds(0)));
  EXPECT_EQ(runner.CatchUp(), 1);
  EXPECT_TRUE(runner.WaitUntilCaughtUp(milliseconds(0)));
  EXPECT_TRUE(runner.WaitUntilCaughtUp(first.position(), milliseconds(0)));
  EXPECT_THROW(runner.WaitUntilCaughtUp(Position{1, 1}, milliseconds(0)), Error);
}

TEST_F(SubscriptionRunnerWrites, ANegativeIntervalIsRefused) {
  EXPECT_THROW(
      SubscriptionRunner(log_, {subscription_}, Options(milliseconds(10'000), milliseconds(-1))),
      Error);
  SubscriptionRunnerOptions options;
  options.pass_interval = milliseconds(-1);
  EXPECT_THROW(SubscriptionRunner(log_, {subscription_}, options), Error);
}

}  // namespace
}  // namespace wow
