// The commands the MongoDB event log sends, counted by the MongoDB TEST SERVER (a test double; its
// wowCommandCounts): per Append, per AppendAll of 16 and of 256 streams, per Head, per tail poll,
// and per idle minute of a tail. Counts, not speeds: the double says nothing of a real server's speed.
// docs/MONGODB.md quotes what this test prints.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "support/mongo_test_deployment.h"
#include "wow/mongo.h"

namespace wow {
namespace {

using testing_support::MongoTestServer;

class MongoLogRoundTripsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
    uri_ = testing_support::SharedMongoTestServer().uri();
    deployment_ = testing_support::FreshMongoDeployment(uri_);
    log_ = NewMongoEventLog(deployment_, "shop", SystemClock::Instance());
    log_->Create(4);
    Append(1, "warm-up");      // the collection, its indexes and registration, once
    log_->ReadAfter(0, 0, 1);  // the tail's first look at the registry, once
    Counts();
  }

  // The commands the server received since the last call, by name, without the driver's own
  // (hello, the monitor's) and the count's.
  std::map<std::string, int> Counts() {
    const std::string reply =
        testing_support::RunMongoCommand(uri_, R"({"wowCommandCounts": 1, "reset": true})");
    std::map<std::string, int> counts;
    for (const char* name : {"insert", "findAndModify", "find", "aggregate", "update", "delete",
                             "createIndexes", "create", "getMore"}) {
      const std::string key = std::string("\"") + name + "\" : ";
      if (auto at = reply.find(key); at != std::string::npos) {
        counts[name] = std::stoi(reply.substr(at + key.size()));
      }
    }
    return counts;
  }
  static int Total(const std::map<std::string, int>& counts) {
    int total = 0;
    for (const auto& [name, n] : counts) total += n;
    return total;
  }
  static std::string Describe(const std::map<std::string, int>& counts) {
    std::string out;
    for (const auto& [name, n] : counts) out += " " + name + " " + std::to_string(n);
    return out;
  }

  Stream StreamOf(const std::string& id, Version version) {
    Stream s;
    s.ref = {"shop", "brand", "t", id};
    s.version = version;
    s.request_id = NewId();
    s.events = {{"happened", "{}"}};
    return s;
  }
  void Append(int count, const std::string& prefix) {
    std::vector<Stream> streams;
    for (int i = 0; i < count; ++i) streams.push_back(StreamOf(prefix + std::to_string(i), 1));
    for (const AppendResult& r : log_->AppendAll(streams)) ASSERT_TRUE(r.appended());
  }

  std::string uri_;
  std::shared_ptr<MongoDeployment> deployment_;
  std::unique_ptr<EventLog> log_;
};

TEST_F(MongoLogRoundTripsTest, CommandsPerAppendAppendAllAndTailPoll) {
  // Append: a block from the partition's counter (the same update removes this node's finished
  // one), then the insert.
  ASSERT_TRUE(log_->Append(StreamOf("a", 1)).appended());
  const auto append = Counts();
  // The aggregate's next stream: its previous sequence is remembered, so no read.
  ASSERT_TRUE(log_->Append(StreamOf("a", 2)).appended());
  const auto next = Counts();
  // A stream whose aggregate another node appended to: one read of its previous version.
  {
    auto other = NewMongoEventLog(deployment_, "shop", SystemClock::Instance());
    other->Open();
    ASSERT_TRUE(other->Append(StreamOf("b", 1)).appended());
  }
  Counts();
  ASSERT_TRUE(log_->Append(StreamOf("b", 2)).appended());
  const auto unseen = Counts();
  Append(16, "g16-");
  const auto group16 = Counts();
  Append(256, "g256-");
  const auto group256 = Counts();
  // A tail poll that finds the partition caught up, and one that reads 64 entries.
  Counts();
  Sequence head = log_->Head(0);
  const auto head_read = Counts();
  EXPECT_TRUE(log_->ReadAfter(0, head, 64).empty());
  const auto idle_poll = Counts();
  log_->ReadAfter(0, 0, 64);
  const auto busy_poll = Counts();

  std::printf(
      "round trips: Append%s | next Append%s | unseen aggregate%s | AppendAll 16%s | "
      "AppendAll 256%s | Head%s | idle poll%s | poll of 64%s\n",
      Describe(append).c_str(), Describe(next).c_str(), Describe(unseen).c_str(),
      Describe(group16).c_str(), Describe(group256).c_str(), Describe(head_read).c_str(),
      Describe(idle_poll).c_str(),
      Describe(busy_poll).c_str());
  EXPECT_EQ(append, (std::map<std::string, int>{{"findAndModify", 1}, {"insert", 1}}));
  EXPECT_EQ(next, append);
  EXPECT_EQ(Total(unseen), 3);
  // A group takes one block per partition (4) and one insert per aggregate collection (1).
  EXPECT_EQ(group16, (std::map<std::string, int>{{"findAndModify", 4}, {"insert", 1}}));
  EXPECT_EQ(group256, group16);
  // Head: the registry, then one aggregation over the collections it names.
  EXPECT_EQ(head_read, (std::map<std::string, int>{{"find", 1}, {"aggregate", 1}}));
  EXPECT_EQ(idle_poll, (std::map<std::string, int>{{"aggregate", 1}}));
  EXPECT_EQ(Total(busy_poll), 1);
  RecordProperty("append", Total(append));
  RecordProperty("append_all_256", Total(group256));
}

TEST_F(MongoLogRoundTripsTest, AnIdleTailPollsOnItsBackoffSchedule) {
  // An idle tail polls at 0, 50, 150, 350, 750, 1550, 2550 ms and at its 3 s deadline: 8 polls,
  // then one a second: about 64 in its first idle minute and 60 in each one after, one command
  // each.
  Counts();
  const Sequence head = log_->Head(0);
  Counts();
  EXPECT_TRUE(log_->Tail(0, head, 64, std::chrono::milliseconds(3000)).empty());
  const auto idle = Counts();
  std::printf("round trips: an idle tail's 3 s%s\n", Describe(idle).c_str());
  EXPECT_EQ(idle, (std::map<std::string, int>{{"aggregate", 8}}));
}

}  // namespace
}  // namespace wow
