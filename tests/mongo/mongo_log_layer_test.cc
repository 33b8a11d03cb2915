// The MongoDB log's collection layer (MongoLogLayer) against the MongoDB TEST SERVER (a test
// double), through libmongoc: the unique keys that settle appends, the counter's blocks, the
// tail's one aggregation, the registry; then three MongoEventLogs (nodes) appending at once while
// a fail point drops acknowledgements, and a tail on a fourth that delivers every stream that
// landed once, in order.
#include "store/mongo/mongo_log_layer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <thread>

#include "store/mongo/deployment.h"
#include "store/mongo/log_commands.h"
#include "support/mongo_test_deployment.h"
#include "wow/error.h"
#include "wow/mongo.h"

namespace wow {
namespace {

using mongo::MongoLogLayer;
using mongo_log::LogDoc;
using mongo_log::WriteStatus;
using testing_support::MongoTestServer;

const std::string kContext = "shop";

Stream StreamOf(const std::string& aggregate, const std::string& id, Version version,
                const std::string& request) {
  Stream s;
  s.ref = {kContext, aggregate, "t", id};
  s.version = version;
  s.request_id = request;
  s.events = {{"happened", R"({"n":1})"}};
  s.time = 1000 + version;
  s.transport = std::string("\x00\x01raw", 5);
  return s;
}

class MongoLogLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
    uri_ = testing_support::SharedMongoTestServer().uri();
    deployment_ = testing_support::FreshMongoDeployment(uri_);
    layer_ = Layer(deployment_);
    layer_->CreateCounters(2);
    a_ = mongo::LogCollectionName(kContext, "brand");
    b_ = mongo::LogCollectionName(kContext, "user");
  }
  void TearDown() override {
    if (!uri_.empty()) testing_support::SetFailPoint(uri_, R"("off")");
  }
  static std::unique_ptr<MongoLogLayer> Layer(const std::shared_ptr<MongoDeployment>& d) {
    return std::make_unique<MongoLogLayer>(d->executor(), d->collections(), kContext);
  }

  std::string uri_;
  std::shared_ptr<MongoDeployment> deployment_;
  std::unique_ptr<MongoLogLayer> layer_;
  std::string a_, b_;
};

TEST_F(MongoLogLayerTest, TheUniqueKeysTellAPositionAVersionAndARequestApart) {
  layer_->Register(a_);
  EXPECT_EQ(layer_->Insert(a_, {LogDoc::Entry(0, 1, StreamOf("brand", "x", 1, "r1"))}, true),
            std::vector{WriteStatus::kWritten});
  EXPECT_EQ(layer_->Insert(a_, {LogDoc::Own(0, 1)}, true),
            std::vector{WriteStatus::kPositionTaken});
  EXPECT_EQ(layer_->Insert(a_, {LogDoc::Entry(0, 2, StreamOf("brand", "x", 1, "r2"))}, true),
            std::vector{WriteStatus::kVersionTaken});
  EXPECT_EQ(layer_->Insert(a_, {LogDoc::Entry(0, 3, StreamOf("brand", "x", 2, "r1"))}, true),
            std::vector{WriteStatus::kRequestTaken});
  // Placeholders have no version or request: many of them sit beside each other.
  EXPECT_EQ(layer_->Insert(a_, {LogDoc::Own(0, 2), LogDoc::Seal(0, 3), LogDoc::Seal(1, 3)}, true),
            (std::vector{WriteStatus::kWritten, WriteStatus::kWritten, WriteStatus::kWritten}));
  // Ordered: the first taken position stops the insert; unordered: each document is tried.
  EXPECT_EQ(layer_->Insert(a_,
                           {LogDoc::Own(0, 4), LogDoc::Own(0, 2),
                            LogDoc::Entry(0, 5, StreamOf("brand", "y", 1, "r5"))},
                           true),
            (std::vector{WriteStatus::kWritten, WriteStatus::kPositionTaken,
                         WriteStatus::kNotAttempted}));
  EXPECT_EQ(
      layer_->Insert(a_, {LogDoc::Own(0, 2), LogDoc::Entry(0, 5, StreamOf("brand", "y", 1, "r5"))},
                     false),
      (std::vector{WriteStatus::kPositionTaken, WriteStatus::kWritten}));
  EXPECT_EQ(layer_->FindVersion(a_, 0, "t", "y", 1), 5);
  EXPECT_EQ(layer_->FindVersion(a_, 0, "t", "y", 2), std::nullopt);
  const auto original = layer_->FindRequest(a_, "t", "r1");
  ASSERT_TRUE(original);
  EXPECT_EQ(original->position, (Position{0, 1}));
  EXPECT_EQ(original->stream.version, 1);
  EXPECT_TRUE(original->stream.transport.empty()) << "a request lookup leaves the transport out";
  const auto read = layer_->ReadTail(0, 0, {a_}, 1);
  ASSERT_EQ(read.docs[0].size(), 1u);
  EXPECT_EQ(read.docs[0][0].stream.transport, std::string("\x00\x01raw", 5)) << "binary, unchanged";
  EXPECT_EQ(original->stream.events, StreamOf("brand", "x", 1, "r1").events);
}

TEST_F(MongoLogLayerTest, BlocksAreReservedInOrderMarkedAndRemovedOnTheCounter) {
  const auto first = layer_->ReserveBlock(0, "n1", 3, {});
  const auto second = layer_->ReserveBlock(0, "n2", 1, {});
  EXPECT_EQ(first, (mongo_log::Block{"n1", 1, 3, false}));
  EXPECT_EQ(second, (mongo_log::Block{"n2", 4, 4, false}));
  EXPECT_EQ(layer_->ReserveBlock(1, "n1", 2, {}), (mongo_log::Block{"n1", 1, 2, false}))
      << "each partition counts on its own";
  layer_->MarkSealing(0, 4);
  auto counter = layer_->ReadCounter(0);
  EXPECT_EQ(counter.next, 5);
  EXPECT_EQ(counter.blocks, (std::vector<mongo_log::Block>{first, {"n2", 4, 4, true}}));
  layer_->RemoveBlock(0, 1);
  counter = layer_->ReadCounter(0);
  EXPECT_EQ(counter.blocks, (std::vector<mongo_log::Block>{{"n2", 4, 4, true}}));
  EXPECT_EQ(counter.BlockOf(4)->node, "n2");
  EXPECT_EQ(counter.BlockOf(2), nullptr);
  // A reservation removes the finished blocks it names in the same update.
  EXPECT_EQ(layer_->ReserveBlock(0, "n2", 2, {4}), (mongo_log::Block{"n2", 5, 6, false}));
  EXPECT_EQ(layer_->ReadCounter(0).blocks, (std::vector<mongo_log::Block>{{"n2", 5, 6, false}}));
}

TEST_F(MongoLogLayerTest, TheTailReadsTheCounterThenEachCollectionAfterTheCursorInOneAggregation) {
  layer_->Register(b_);
  layer_->Register(a_);
  EXPECT_EQ(layer_->ReadRegistry(), (std::vector{a_, b_}));
  layer_->ReserveBlock(0, "n1", 6, {});
  layer_->Insert(a_,
                 {LogDoc::Entry(0, 1, StreamOf("brand", "x", 1, "r1")), LogDoc::Own(0, 3),
                  LogDoc::Entry(0, 5, StreamOf("brand", "x", 2, "r2"))},
                 true);
  layer_->Insert(b_, {LogDoc::Entry(0, 2, StreamOf("user", "u", 1, "q1")), LogDoc::Seal(0, 4)},
                 true);
  layer_->Insert(b_, {LogDoc::Entry(1, 1, StreamOf("user", "v", 1, "q2"))}, true);

  const auto read = layer_->ReadTail(0, 1, {a_, b_}, 10);
  EXPECT_EQ(read.counter.next, 7);
  ASSERT_EQ(read.docs.size(), 2u);
  ASSERT_EQ(read.docs[0].size(), 2u);
  EXPECT_EQ(read.docs[0][0].sequence, 3);
  EXPECT_EQ(read.docs[0][0].kind, LogDoc::Kind::kOwnPlaceholder);
  EXPECT_EQ(read.docs[0][1].sequence, 5);
  EXPECT_EQ(read.docs[0][1].stream.request_id, "r2");
  ASSERT_EQ(read.docs[1].size(), 2u);
  EXPECT_EQ(read.docs[1][0].sequence, 2);
  EXPECT_EQ(read.docs[1][1].kind, LogDoc::Kind::kSealPlaceholder);

  const auto limited = layer_->ReadTail(0, 0, {a_, b_}, 1);
  ASSERT_EQ(limited.docs[0].size(), 1u);
  EXPECT_EQ(limited.docs[0][0].sequence, 1);
  EXPECT_EQ(limited.docs[1][0].sequence, 2);
}

TEST_F(MongoLogLayerTest, ACollectionOfAnotherContextIsNotRegistered) {
  EXPECT_THROW(layer_->Register(mongo::LogCollectionName("other", "brand")), Error);
  EXPECT_TRUE(layer_->ReadRegistry().empty());
}

TEST_F(MongoLogLayerTest, ACollectionRecordedForAnotherAggregateIsRefusedAndLeftAsItIs) {
  const std::string database = Describe(*deployment_).database;
  testing_support::RunMongoCommand(
      uri_,
      R"({"insert": "wow_collections", "documents": [{"_id": ")" + a_ +
          R"(", "kind": "log", "context": "shop", "aggregate": "other", "format": 1}]})",
      database);
  try {
    layer_->Register(a_);
    ADD_FAILURE() << "registered a collection recorded for another aggregate";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
    EXPECT_NE(std::string(e.what()).find("another store"), std::string::npos) << e.what();
  }
  const std::string record = testing_support::RunMongoCommand(
      uri_, R"({"find": "wow_collections", "filter": {"_id": ")" + a_ + R"("}})", database);
  EXPECT_NE(record.find(R"("aggregate" : "other")"), std::string::npos) << record;
}

// Three nodes (three pools) append at once to one context while the server drops the
// acknowledgements of inserts; a fourth node's tail delivers every stream that landed, once and
// in sequence order, each aggregate's in version order.
TEST_F(MongoLogLayerTest, AnInexactNumberIsRefusedAloneWithItsAggregatesLaterStreamsAndNotWritten) {
  auto log = NewMongoEventLog(deployment_, kContext, SystemClock::Instance());
  log->Create(2);
  Stream inexact = StreamOf("brand", "x", 1, "r1");
  inexact.events[0].body = R"({"n":0.12345678901234567890123456789012345})";
  const std::vector<AppendResult> results =
      log->AppendAll({inexact, StreamOf("brand", "x", 2, "r2"), StreamOf("brand", "y", 1, "r3")});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].kind(), AppendResult::Kind::kRefused);
  EXPECT_NE(results[0].reason().find("Decimal128"), std::string::npos) << results[0].reason();
  EXPECT_EQ(results[1].kind(), AppendResult::Kind::kConflict) << "decided on the refused stream";
  EXPECT_TRUE(results[2].appended());
  EXPECT_TRUE(log->Read(inexact.ref, 1, kAnyVersion).empty());
  std::size_t entries = 0;
  for (int p = 0; p < 2; ++p) entries += log->ReadAfter(p, 0, 10).size();
  EXPECT_EQ(entries, 1u) << "only y's stream, and no placeholder for the refused one";
}

TEST_F(MongoLogLayerTest, ThreeNodesAppendWhileAcknowledgementsDropAndAFourthTailsEveryStreamOnce) {
  // Each node is a store of its own, with its own pool: MongoEventLogs on one database.
  const std::string database = Describe(*deployment_).database;
  auto node = [&] {
    MongoOptions options;
    options.database = database;
    MongoLogOptions log_options;
    log_options.block_size = 2;
    log_options.stall_grace = std::chrono::milliseconds(300);
    return NewMongoEventLog(OpenMongoDeployment(uri_, options), kContext, SystemClock::Instance(),
                            log_options);
  };
  std::vector<std::unique_ptr<EventLog>> writers;
  for (int i = 0; i < 3; ++i) writers.push_back(node());
  writers[0]->Create(2);
  for (auto& w : writers) EXPECT_EQ(w->Open(), 2);
  auto reader = node();
  reader->Open();
  // About a third of the inserts lose their reply, their connection closed: libmongoc retries
  // once, and a retry that meets the fail point again leaves its append unknown.
  testing_support::SetFailPoint(
      uri_, R"({"activationProbability": 0.35})",
      R"({"failCommands": ["insert"], "closeConnectionAfterReply": true})");

  constexpr int kPerWriter = 20;
  std::vector<std::thread> threads;
  std::vector<std::vector<Entry>> acknowledged(writers.size());
  std::atomic<int> unknown{0};
  for (std::size_t w = 0; w < writers.size(); ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kPerWriter; ++i) {
        const std::string aggregate = i % 2 == 0 ? "brand" : "user";
        const std::string id = "w" + std::to_string(w) + "-" + std::to_string(i % 4);
        try {
          // A decision: read the aggregate (the log remembers where it is), append its next.
          const auto read = writers[w]->Read({kContext, aggregate, "t", id}, 1, 1000);
          const Stream s = StreamOf(aggregate, id, static_cast<Version>(read.size()) + 1, NewId());
          const AppendResult result = writers[w]->Append(s);
          if (result.appended()) acknowledged[w].push_back({result.position(), s});
          if (result.kind() == AppendResult::Kind::kUnknown) ++unknown;
        } catch (const Error&) {
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  writers.clear();  // each closes its blocks
  testing_support::SetFailPoint(uri_, R"("off")");

  // The tail, until it has passed every acknowledged append and a stall grace of quiet.
  std::map<int, std::vector<Entry>> delivered;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int quiet = 0; quiet < 5 && std::chrono::steady_clock::now() < deadline;) {
    bool found = false;
    for (int p = 0; p < 2; ++p) {
      const Sequence after = delivered[p].empty() ? 0 : delivered[p].back().position.sequence;
      for (Entry& e : reader->ReadAfter(p, after, 8)) {
        delivered[p].push_back(std::move(e));
        found = true;
      }
    }
    quiet = found ? 0 : quiet + 1;
    if (!found) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }

  // What landed, read from the collections themselves.
  std::map<std::pair<int, Sequence>, std::string> landed;
  for (const char* aggregate : {"brand", "user"}) {
    const auto collection = mongo::LogCollectionName(kContext, aggregate);
    for (int p = 0; p < 2; ++p) {
      const auto read = layer_->ReadTail(p, 0, {collection}, 1000);
      for (const LogDoc& doc : read.docs[0]) {
        if (doc.entry()) landed[{p, doc.sequence}] = doc.stream.request_id;
      }
    }
  }
  std::map<std::pair<int, Sequence>, std::string> seen;
  std::map<std::string, Version> versions;
  for (const auto& [p, entries] : delivered) {
    Sequence last = 0;
    for (const Entry& e : entries) {
      EXPECT_GT(e.position.sequence, last) << "in sequence order, never twice";
      last = e.position.sequence;
      seen[{p, e.position.sequence}] = e.stream.request_id;
      Version& v = versions[e.stream.ref.aggregate + e.stream.ref.id];
      EXPECT_EQ(e.stream.version, v + 1) << "each aggregate's streams in version order";
      v = e.stream.version;
    }
  }
  EXPECT_EQ(seen, landed) << "every stream that landed, delivered once";
  std::size_t acked = 0;
  for (const auto& list : acknowledged) {
    for (const Entry& e : list) {
      ++acked;
      EXPECT_EQ(seen[std::make_pair(e.position.partition, e.position.sequence)],
                e.stream.request_id);
    }
  }
  EXPECT_GT(acked, 30u) << "most appends were acknowledged";
  RecordProperty("landed", static_cast<int>(landed.size()));
  RecordProperty("acknowledged", static_cast<int>(acked));
  RecordProperty("unknown", unknown.load());
  std::printf("%zu streams landed, %zu acknowledged, %d unknown\n", landed.size(), acked,
              unknown.load());
}

}  // namespace
}  // namespace wow
