// The EventLog contract (seed 002, DESIGN §5.2), written against the interface alone: every rule
// has a test named after it, run unchanged over every backend.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "contract/backends.h"
#include "wow/error.h"

namespace wow::contract {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// The fixture's context and partition count, for the helpers below.
struct Names : EventLogContract {
  using EventLogContract::kContext;
  using EventLogContract::kPartitions;
};

AggregateRef Ref(const std::string& id, const std::string& aggregate = "brand",
                 const std::string& tenant = "t1") {
  return {Names::kContext, aggregate, tenant, id};
}

// A valid stream of `ref` at `version`, with a request id and transport of its own.
Stream MakeStream(const AggregateRef& ref, Version version) {
  const std::string name =
      ref.aggregate + "/" + ref.tenant_id + "/" + ref.id + "@" + std::to_string(version);
  Stream stream;
  stream.ref = ref;
  stream.version = version;
  stream.request_id = "req-" + name;
  stream.events = {{"created", R"({"name":"acme","price":12.5})"}, {"renamed", "{}"}};
  stream.reserved = {{"contract.brand-name", "acme", ReservationTenancy::kTenant}};
  stream.time = 1'700'000'000'000 + version;
  stream.transport = std::string("transport\0of ", 13) + name;
  return stream;
}

Stream WithRequest(Stream stream, std::string request_id) {
  stream.request_id = std::move(request_id);
  return stream;
}

Stream WithoutTransport(Stream stream) {
  stream.transport.clear();
  return stream;
}

// The code of the Error `call` throws; nullopt when it throws none.
template <typename Call>
std::optional<ErrorCode> ErrorOf(Call call) {
  try {
    call();
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

AppendResult::Kind KindOf(const AppendResult& result) { return result.kind(); }

// ---- Create ---------------------------------------------------------------------------------

TEST_P(EventLogContract, CreateRefusesAnotherPartitionCountNamingBoth) {
  log_->Create(4);
  try {
    log_->Create(7);
    FAIL() << "Create(7) of a log created with 4 partitions did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
    const std::string message = e.what();
    EXPECT_NE(message.find('4'), std::string::npos) << message;
    EXPECT_NE(message.find('7'), std::string::npos) << message;
  }
  EXPECT_EQ(log_->partitions(), 4);
}

TEST_P(EventLogContract, CreateWithTheSamePartitionCountKeepsTheLog) {
  log_->Create(kPartitions);
  const AppendResult appended = log_->Append(MakeStream(Ref("a"), 1));
  ASSERT_TRUE(appended.appended());
  log_->Create(kPartitions);
  EXPECT_EQ(log_->partitions(), kPartitions);
  EXPECT_EQ(log_->PositionOf(Ref("a"), 1), appended.position());
}

TEST_P(EventLogContract, CreateRejectsAPartitionCountOutsideOneTo4096) {
  for (int bad : {0, -1, 4097}) {
    EXPECT_EQ(ErrorOf([&] { log_->Create(bad); }), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ErrorOf([&] { log_->Head(0); }), ErrorCode::kFailedPrecondition);
  log_->Create(1);
  EXPECT_EQ(log_->partitions(), 1);
}

TEST_P(EventLogContract, OpenFindsTheCountOfACreatedLogAndRefusesAnUncreatedOne) {
  EXPECT_EQ(ErrorOf([&] { log_->Open(); }), ErrorCode::kFailedPrecondition);
  log_->Create(kPartitions);
  EXPECT_EQ(log_->Open(), kPartitions);
  EXPECT_EQ(log_->partitions(), kPartitions);
}

TEST_P(EventLogContract, CallsBeforeCreateFailWithFailedPrecondition) {
  const auto kNotCreated = ErrorCode::kFailedPrecondition;
  const Stream stream = MakeStream(Ref("a"), 1);
  EXPECT_EQ(ErrorOf([&] { log_->partitions(); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->Append(stream); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->AppendAll({stream}); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->Read(Ref("a"), 1, 10); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->ReadEntries(Ref("a"), {1}); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->PositionOf(Ref("a"), 1); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->FindByRequestId("brand", "t1", "r"); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->Head(0); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->Lineage(0); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->ReadAfter(0, 0, 10); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->Tail(0, 0, 10, milliseconds(0)); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->AggregateTypes(); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->AcquireLease(0, "n1", milliseconds(1000)); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->LeaseOf(0); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->Checkpoint(0, "s"); }), kNotCreated);
  EXPECT_EQ(ErrorOf([&] { log_->CommitCheckpoint(0, "s", 1); }), kNotCreated);
}

// ---- Append ---------------------------------------------------------------------------------

TEST_P(EventLogContract, AppendPlacesStreamsInTheirPartitionAtGaplessSequencesFromOne) {
  log_->Create(kPartitions);
  std::vector<Sequence> next(kPartitions, 1);
  for (Version version = 1; version <= 3; ++version) {
    for (const char* id : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
      const AppendResult result = log_->Append(MakeStream(Ref(id), version));
      ASSERT_EQ(result.kind(), AppendResult::Kind::kAppended) << result.reason();
      const int partition = PartitionOf("t1", id, kPartitions);
      EXPECT_EQ(result.position(), (Position{partition, next[partition]++})) << id;
    }
  }
  for (int p = 0; p < kPartitions; ++p) EXPECT_EQ(log_->Head(p), next[p] - 1) << p;
}

TEST_P(EventLogContract, AppendOfAVersionOtherThanTheNextIsAConflictAndStoresNothing) {
  log_->Create(kPartitions);
  ASSERT_TRUE(log_->Append(MakeStream(Ref("a"), 1)).appended());
  const int partition = PartitionOf("t1", "a", kPartitions);
  EXPECT_EQ(log_->Append(WithRequest(MakeStream(Ref("a"), 1), "again")), AppendResult::Conflict());
  EXPECT_EQ(log_->Append(MakeStream(Ref("a"), 3)), AppendResult::Conflict());
  EXPECT_EQ(log_->Append(MakeStream(Ref("b"), 2)), AppendResult::Conflict());
  EXPECT_EQ(log_->Head(partition), 1);
  EXPECT_EQ(log_->Read(Ref("a"), 1, kAnyVersion).size(), 1u);
  EXPECT_TRUE(log_->Read(Ref("b"), 1, kAnyVersion).empty());
  EXPECT_FALSE(log_->FindByRequestId("brand", "t1", "again").has_value());
}

TEST_P(EventLogContract, AppendOfAUsedRequestIdIsADuplicateSayingWhereTheOriginalIs) {
  log_->Create(kPartitions);
  const AppendResult original = log_->Append(WithRequest(MakeStream(Ref("a"), 1), "r"));
  ASSERT_TRUE(original.appended());
  ASSERT_TRUE(log_->Append(MakeStream(Ref("a"), 2)).appended());
  const AppendResult expected = AppendResult::Duplicate(original.position(), 1);
  EXPECT_EQ(log_->Append(WithRequest(MakeStream(Ref("a"), 3), "r")), expected);
  EXPECT_EQ(log_->Append(WithRequest(MakeStream(Ref("b"), 1), "r")), expected)
      << "a request id is unique per aggregate type and tenant, across its aggregates";
  EXPECT_EQ(log_->Read(Ref("a"), 1, kAnyVersion).size(), 2u);
  EXPECT_TRUE(log_->Read(Ref("b"), 1, kAnyVersion).empty());
}

TEST_P(EventLogContract, DuplicateIsReportedBeforeConflict) {
  log_->Create(kPartitions);
  const Stream stream = MakeStream(Ref("a"), 1);
  const AppendResult original = log_->Append(stream);
  ASSERT_TRUE(original.appended());
  EXPECT_EQ(log_->Append(stream), AppendResult::Duplicate(original.position(), 1));
}

TEST_P(EventLogContract, TheSameRequestIdInAnotherTenantOrAggregateTypeIsNoDuplicate) {
  log_->Create(kPartitions);
  ASSERT_TRUE(log_->Append(WithRequest(MakeStream(Ref("a"), 1), "r")).appended());
  EXPECT_TRUE(log_->Append(WithRequest(MakeStream(Ref("a", "brand", "t2"), 1), "r")).appended());
  EXPECT_TRUE(log_->Append(WithRequest(MakeStream(Ref("a", "brand", ""), 1), "r")).appended());
  EXPECT_TRUE(log_->Append(WithRequest(MakeStream(Ref("a", "category"), 1), "r")).appended());
}

TEST_P(EventLogContract, AppendRefusesEachKindOfInvalidStreamAndStoresNothing) {
  log_->Create(kPartitions);
  const Stream valid = MakeStream(Ref("a"), 1);
  std::map<std::string, Stream> invalid;
  invalid["no events"] = valid;
  invalid["no events"].events.clear();
  invalid["version 0"] = valid;
  invalid["version 0"].version = 0;
  invalid["version -1"] = valid;
  invalid["version -1"].version = -1;
  invalid["body not JSON"] = valid;
  invalid["body not JSON"].events[1].body = "{not json";
  invalid["body not an object"] = valid;
  invalid["body not an object"].events[0].body = "[1,2]";
  invalid["event of no type"] = valid;
  invalid["event of no type"].events[0].type.clear();
  invalid["another context"] = valid;
  invalid["another context"].ref.context = "other";
  invalid["malformed aggregate type"] = valid;
  invalid["malformed aggregate type"].ref.aggregate = "Brand Type";
  invalid["empty request id"] = WithRequest(valid, "");
  invalid["request id over 256 bytes"] = WithRequest(valid, std::string(257, 'r'));
  for (const auto& [what, stream] : invalid) {
    const AppendResult result = log_->Append(stream);
    EXPECT_EQ(result.kind(), AppendResult::Kind::kRefused) << what;
    EXPECT_FALSE(result.reason().empty()) << what;
  }
  for (int p = 0; p < kPartitions; ++p) EXPECT_EQ(log_->Head(p), 0) << p;
  EXPECT_TRUE(log_->Read(Ref("a"), 1, kAnyVersion).empty());
  EXPECT_FALSE(log_->FindByRequestId("brand", "t1", valid.request_id).has_value());
  EXPECT_TRUE(log_->AggregateTypes().empty());
  EXPECT_TRUE(log_->Append(valid).appended()) << "the refusals left version 1 free";
}

// ---- AppendAll ------------------------------------------------------------------------------

TEST_P(EventLogContract, AppendAllGivesEachStreamTheOutcomeAppendWouldGiveInOrder) {
  log_->Create(kPartitions);
  const AppendResult first = log_->Append(WithRequest(MakeStream(Ref("a"), 1), "a1"));
  ASSERT_TRUE(first.appended());
  const std::vector<AppendResult> results = log_->AppendAll({
      MakeStream(Ref("b"), 1),
      MakeStream(Ref("a"), 2),
      MakeStream(Ref("b"), 2),
      WithRequest(MakeStream(Ref("c"), 1), "a1"),
      MakeStream(Ref("d"), 2),
      MakeStream(Ref("b"), 3),
  });
  ASSERT_EQ(results.size(), 6u);
  EXPECT_TRUE(results[0].appended());
  EXPECT_TRUE(results[1].appended());
  EXPECT_TRUE(results[2].appended());
  EXPECT_EQ(results[3], AppendResult::Duplicate(first.position(), 1));
  EXPECT_EQ(results[4], AppendResult::Conflict());
  EXPECT_TRUE(results[5].appended());
  EXPECT_EQ(log_->PositionOf(Ref("b"), 1), results[0].position());
  EXPECT_EQ(log_->PositionOf(Ref("a"), 2), results[1].position());
  EXPECT_EQ(log_->PositionOf(Ref("b"), 3), results[5].position());
  EXPECT_LT(results[0].position(), results[2].position());
  EXPECT_LT(results[2].position(), results[5].position());
  EXPECT_FALSE(log_->PositionOf(Ref("c"), 1).has_value());
  EXPECT_FALSE(log_->PositionOf(Ref("d"), 2).has_value());
}

TEST_P(EventLogContract, AppendAllRefusedStreamFailsAloneWithItsAggregatesLaterStreams) {
  log_->Create(kPartitions);
  Stream refused = MakeStream(Ref("b"), 1);
  refused.events.clear();
  const std::vector<AppendResult> results = log_->AppendAll({
      MakeStream(Ref("a"), 1),
      refused,
      MakeStream(Ref("a"), 2),
      WithRequest(MakeStream(Ref("b"), 1), "b-retry"),
      MakeStream(Ref("b"), 2),
      MakeStream(Ref("c"), 1),
  });
  ASSERT_EQ(results.size(), 6u);
  EXPECT_TRUE(results[0].appended());
  EXPECT_EQ(KindOf(results[1]), AppendResult::Kind::kRefused);
  EXPECT_TRUE(results[2].appended());
  EXPECT_EQ(results[3], AppendResult::Conflict()) << "b's later streams fail with it";
  EXPECT_EQ(results[4], AppendResult::Conflict());
  EXPECT_TRUE(results[5].appended());
  EXPECT_EQ(log_->Read(Ref("a"), 1, kAnyVersion).size(), 2u);
  EXPECT_TRUE(log_->Read(Ref("b"), 1, kAnyVersion).empty());
  EXPECT_EQ(log_->Read(Ref("c"), 1, kAnyVersion).size(), 1u);
  Sequence total = 0;
  for (int p = 0; p < kPartitions; ++p) total += log_->Head(p);
  EXPECT_EQ(total, 3);
}

TEST_P(EventLogContract, AppendAllOfNoStreamsAppendsNothing) {
  log_->Create(kPartitions);
  EXPECT_TRUE(log_->AppendAll({}).empty());
  for (int p = 0; p < kPartitions; ++p) EXPECT_EQ(log_->Head(p), 0) << p;
}

// ---- Reads ----------------------------------------------------------------------------------

TEST_P(EventLogContract, ReadReturnsTheVersionRangeInOrderWithoutTransport) {
  log_->Create(kPartitions);
  std::vector<Stream> streams;
  for (Version v = 1; v <= 5; ++v) {
    streams.push_back(MakeStream(Ref("a"), v));
    ASSERT_TRUE(log_->Append(streams.back()).appended());
  }
  EXPECT_EQ(log_->Read(Ref("a"), 2, 4),
            (std::vector<Stream>{WithoutTransport(streams[1]), WithoutTransport(streams[2]),
                                 WithoutTransport(streams[3])}));
  EXPECT_EQ(log_->Read(Ref("a"), 1, kAnyVersion).size(), 5u);
  EXPECT_EQ(log_->Read(Ref("a"), 0, 1), (std::vector<Stream>{WithoutTransport(streams[0])}));
  EXPECT_TRUE(log_->Read(Ref("a"), 6, 10).empty());
  EXPECT_TRUE(log_->Read(Ref("a"), 4, 2).empty());
  EXPECT_TRUE(log_->Read(Ref("nobody"), 1, kAnyVersion).empty());
}

TEST_P(EventLogContract, AnEventBodyReadsBackWithItsDecimalDigitsAndKeyOrder) {
  log_->Create(kPartitions);
  Stream stream = MakeStream(Ref("a"), 1);
  stream.events[0].body =
      R"({"price":12.50,"tiny":0.000001,"big":123456789012345678901234567890,"neg":-7,)"
      R"("text":"café ☕ \"quoted\"","list":[1,2.5,null,true,{}],"nested":{"z":[[]],"a":0}})";
  ASSERT_TRUE(log_->Append(stream).appended());
  const std::vector<Stream> read = log_->Read(Ref("a"), 1, 1);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].events, stream.events);
  const std::vector<Entry> tail = log_->ReadAfter(PartitionOf("t1", "a", kPartitions), 0, 10);
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail[0].stream.events, stream.events);
}

TEST_P(EventLogContract, ReadEntriesAndPositionOfGiveTheStreamsWithTransportAndPlace) {
  log_->Create(kPartitions);
  std::vector<Stream> streams;
  std::vector<Position> positions;
  for (Version v = 1; v <= 4; ++v) {
    streams.push_back(MakeStream(Ref("a"), v));
    ASSERT_TRUE(log_->Append(MakeStream(Ref("b"), v)).appended());
    const AppendResult result = log_->Append(streams.back());
    ASSERT_TRUE(result.appended());
    positions.push_back(result.position());
  }
  const std::vector<Entry> entries = log_->ReadEntries(Ref("a"), {3, 9, 1});
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].position, positions[0]);
  EXPECT_EQ(entries[0].stream, streams[0]);
  EXPECT_EQ(entries[1].position, positions[2]);
  EXPECT_EQ(entries[1].stream, streams[2]);
  for (Version v = 1; v <= 4; ++v) EXPECT_EQ(log_->PositionOf(Ref("a"), v), positions[v - 1]);
  EXPECT_FALSE(log_->PositionOf(Ref("a"), 5).has_value());
  EXPECT_FALSE(log_->PositionOf(Ref("nobody"), 1).has_value());
  EXPECT_TRUE(log_->ReadEntries(Ref("nobody"), {1}).empty());
}

TEST_P(EventLogContract, ReadsOfARefOfAnotherContextOrMalformedAreInvalidArguments) {
  log_->Create(kPartitions);
  AggregateRef other = Ref("a");
  other.context = "other";
  AggregateRef malformed = Ref("a");
  malformed.aggregate = "Brand Type";
  for (const AggregateRef& ref : {other, malformed}) {
    EXPECT_EQ(ErrorOf([&] { log_->Read(ref, 1, 10); }), ErrorCode::kInvalidArgument) << ref;
    EXPECT_EQ(ErrorOf([&] { log_->ReadEntries(ref, {1}); }), ErrorCode::kInvalidArgument) << ref;
    EXPECT_EQ(ErrorOf([&] { log_->PositionOf(ref, 1); }), ErrorCode::kInvalidArgument) << ref;
  }
  EXPECT_EQ(ErrorOf([&] { log_->FindByRequestId("Brand Type", "t1", "r"); }),
            ErrorCode::kInvalidArgument);
}

TEST_P(EventLogContract, FindByRequestIdReturnsTheCommittedEntryWithoutTransport) {
  log_->Create(kPartitions);
  ASSERT_TRUE(log_->Append(MakeStream(Ref("a"), 1)).appended());
  const Stream stream = WithRequest(MakeStream(Ref("a"), 2), "r");
  const AppendResult appended = log_->Append(stream);
  ASSERT_TRUE(appended.appended());
  const std::optional<Entry> found = log_->FindByRequestId("brand", "t1", "r");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->position, appended.position());
  EXPECT_EQ(found->stream, WithoutTransport(stream));
  EXPECT_FALSE(log_->FindByRequestId("brand", "t2", "r").has_value());
  EXPECT_FALSE(log_->FindByRequestId("category", "t1", "r").has_value());
  EXPECT_FALSE(log_->FindByRequestId("brand", "t1", "other").has_value());
}

TEST_P(EventLogContract, HeadIsTheHighestSequenceOfAPartitionAndZeroWhenEmpty) {
  log_->Create(kPartitions);
  for (int p = 0; p < kPartitions; ++p) EXPECT_EQ(log_->Head(p), 0) << p;
  std::vector<Sequence> heads(kPartitions, 0);
  for (const char* id : {"a", "b", "c", "d", "e"}) {
    const AppendResult result = log_->Append(MakeStream(Ref(id), 1));
    ASSERT_TRUE(result.appended());
    heads[result.position().partition] = result.position().sequence;
  }
  for (int p = 0; p < kPartitions; ++p) EXPECT_EQ(log_->Head(p), heads[p]) << p;
}

TEST_P(EventLogContract, LineageOfEveryPartitionIsTheRoot) {
  log_->Create(kPartitions);
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(log_->Lineage(p), (PartitionLineage{std::nullopt, 0})) << p;
  }
}

TEST_P(EventLogContract, AggregateTypesListsTheTypesWithStreamsSorted) {
  log_->Create(kPartitions);
  EXPECT_TRUE(log_->AggregateTypes().empty());
  ASSERT_TRUE(log_->Append(MakeStream(Ref("a", "category"), 1)).appended());
  ASSERT_TRUE(log_->Append(MakeStream(Ref("a", "brand"), 1)).appended());
  ASSERT_TRUE(log_->Append(MakeStream(Ref("b", "brand"), 1)).appended());
  ASSERT_EQ(log_->Append(MakeStream(Ref("a", "widget"), 2)), AppendResult::Conflict());
  EXPECT_EQ(log_->AggregateTypes(), (std::vector<std::string>{"brand", "category"}));
}

TEST_P(EventLogContract, ReadAfterReturnsEntriesAfterASequenceUpToTheLimitWithTransport) {
  log_->Create(kPartitions);
  std::vector<Stream> streams;
  for (Version v = 1; v <= 5; ++v) {
    streams.push_back(MakeStream(Ref("a"), v));
    ASSERT_TRUE(log_->Append(streams.back()).appended());
  }
  const int partition = PartitionOf("t1", "a", kPartitions);
  const std::vector<Entry> first = log_->ReadAfter(partition, 0, 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].position, (Position{partition, 1}));
  EXPECT_EQ(first[0].stream, streams[0]);
  EXPECT_EQ(first[1].position, (Position{partition, 2}));
  const std::vector<Entry> rest = log_->ReadAfter(partition, 2, 100);
  ASSERT_EQ(rest.size(), 3u);
  for (size_t i = 0; i < rest.size(); ++i) {
    EXPECT_EQ(rest[i].position, (Position{partition, static_cast<Sequence>(i) + 3}));
    EXPECT_EQ(rest[i].stream, streams[i + 2]);
  }
  EXPECT_TRUE(log_->ReadAfter(partition, 5, 100).empty());
  EXPECT_TRUE(log_->ReadAfter((partition + 1) % kPartitions, 0, 100).empty());
}

// ---- Tail -----------------------------------------------------------------------------------

TEST_P(EventLogContract, TailReturnsWhatIsThereAtOnce) {
  log_->Create(kPartitions);
  ASSERT_TRUE(log_->Append(MakeStream(Ref("a"), 1)).appended());
  const int partition = PartitionOf("t1", "a", kPartitions);
  const auto start = SteadyClock::now();
  const std::vector<Entry> entries = log_->Tail(partition, 0, 10, milliseconds(10'000));
  EXPECT_LT(SteadyClock::now() - start, milliseconds(1000));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].stream, MakeStream(Ref("a"), 1));
}

TEST_P(EventLogContract, TailWaitsForACommitAndIsWokenByItWellUnderTheMaxPoll) {
  log_->Create(kPartitions);
  const int partition = PartitionOf("t1", "a", kPartitions);
  std::vector<Entry> tailed;
  std::jthread tail([&] { tailed = log_->Tail(partition, 0, 10, milliseconds(20'000)); });
  // Idle for 400 ms, a tail has backed off to polls 400 ms apart: an entry found by polling alone
  // would come about 350 ms after its commit. The wake-up brings it at once. The time is counted
  // from the append's return (a first append to a MongoDB log also creates its collection).
  std::this_thread::sleep_for(milliseconds(400));
  ASSERT_TRUE(log_->Append(MakeStream(Ref("a"), 1)).appended());
  const auto committed = SteadyClock::now();
  tail.join();
  EXPECT_LT(SteadyClock::now() - committed, milliseconds(200));
  ASSERT_EQ(tailed.size(), 1u);
  EXPECT_EQ(tailed[0].position, (Position{partition, 1}));
}

TEST_P(EventLogContract, TailReturnsNothingOnceMaxWaitPasses) {
  log_->Create(kPartitions);
  const auto start = SteadyClock::now();
  EXPECT_TRUE(log_->Tail(0, 0, 10, milliseconds(120)).empty());
  const auto waited = SteadyClock::now() - start;
  EXPECT_GE(waited, milliseconds(120));
  EXPECT_LT(waited, milliseconds(5'000));
}

TEST_P(EventLogContract, TailReturnsNothingWhenStopIsRequested) {
  log_->Create(kPartitions);
  std::stop_source stop;
  std::optional<std::vector<Entry>> tailed;
  const auto start = SteadyClock::now();
  std::jthread tail([&] { tailed = log_->Tail(0, 0, 10, milliseconds(30'000), stop.get_token()); });
  std::this_thread::sleep_for(milliseconds(100));  // let it wait; it returns either way
  stop.request_stop();
  tail.join();
  EXPECT_LT(SteadyClock::now() - start, milliseconds(5'000));
  ASSERT_TRUE(tailed.has_value());
  EXPECT_TRUE(tailed->empty());
}

// ---- Leases and checkpoints -----------------------------------------------------------------

TEST_P(EventLogContract, LeaseIsTakenAndRenewedByItsNodeAndRefusedToAnotherWhileLive) {
  log_->Create(kPartitions);
  EXPECT_FALSE(log_->LeaseOf(1).has_value());
  EXPECT_TRUE(log_->AcquireLease(1, "n1", milliseconds(10'000)));
  EXPECT_EQ(log_->LeaseOf(1), (Lease{"n1", clock_->NowMillis() + 10'000}));
  EXPECT_FALSE(log_->AcquireLease(1, "n2", milliseconds(10'000)));
  clock_->Advance(milliseconds(9'000));
  EXPECT_FALSE(log_->AcquireLease(1, "n2", milliseconds(10'000)));
  EXPECT_TRUE(log_->AcquireLease(1, "n1", milliseconds(10'000)));
  EXPECT_EQ(log_->LeaseOf(1), (Lease{"n1", clock_->NowMillis() + 10'000}));
  EXPECT_FALSE(log_->LeaseOf(0).has_value()) << "leases are per partition";
  EXPECT_TRUE(log_->AcquireLease(0, "n2", milliseconds(10'000)));
}

TEST_P(EventLogContract, ExpiredLeaseIsTakenByAnotherNode) {
  log_->Create(kPartitions);
  ASSERT_TRUE(log_->AcquireLease(2, "n1", milliseconds(10'000)));
  clock_->Advance(milliseconds(10'001));
  EXPECT_EQ(log_->LeaseOf(2), (Lease{"n1", clock_->NowMillis() - 1})) << "kept while expired";
  EXPECT_TRUE(log_->AcquireLease(2, "n2", milliseconds(5'000)));
  EXPECT_EQ(log_->LeaseOf(2), (Lease{"n2", clock_->NowMillis() + 5'000}));
  EXPECT_FALSE(log_->AcquireLease(2, "n1", milliseconds(5'000)));
}

TEST_P(EventLogContract, ReleaseGivesTheLeaseUpOnlyWhenItsNodeHoldsIt) {
  log_->Create(kPartitions);
  ASSERT_TRUE(log_->AcquireLease(0, "n1", milliseconds(10'000)));
  log_->ReleaseLease(0, "n2");
  EXPECT_EQ(log_->LeaseOf(0), (Lease{"n1", clock_->NowMillis() + 10'000}));
  EXPECT_FALSE(log_->AcquireLease(0, "n2", milliseconds(10'000)));
  log_->ReleaseLease(0, "n1");
  const std::optional<Lease> released = log_->LeaseOf(0);
  EXPECT_TRUE(!released || released->expires_at <= clock_->NowMillis()) << "no longer live";
  EXPECT_TRUE(log_->AcquireLease(0, "n2", milliseconds(10'000)));
}

TEST_P(EventLogContract, CheckpointNeverMovesBack) {
  log_->Create(kPartitions);
  EXPECT_EQ(log_->Checkpoint(0, "projection"), 0);
  log_->CommitCheckpoint(0, "projection", 5);
  EXPECT_EQ(log_->Checkpoint(0, "projection"), 5);
  log_->CommitCheckpoint(0, "projection", 3);
  EXPECT_EQ(log_->Checkpoint(0, "projection"), 5);
  log_->CommitCheckpoint(0, "projection", 9);
  EXPECT_EQ(log_->Checkpoint(0, "projection"), 9);
  EXPECT_EQ(log_->Checkpoint(0, "timers"), 0) << "checkpoints are per subscription";
  EXPECT_EQ(log_->Checkpoint(1, "projection"), 0) << "checkpoints are per partition";
}

TEST_P(EventLogContract, EveryPartitionOutsideTheLogIsAnInvalidArgument) {
  log_->Create(kPartitions);
  const milliseconds ttl(1000);
  for (int bad : {-1, kPartitions}) {
    const auto kBad = ErrorCode::kInvalidArgument;
    EXPECT_EQ(ErrorOf([&] { log_->Head(bad); }), kBad) << bad;
    EXPECT_EQ(ErrorOf([&] { log_->Lineage(bad); }), kBad) << bad;
    EXPECT_EQ(ErrorOf([&] { log_->ReadAfter(bad, 0, 10); }), kBad) << bad;
    EXPECT_EQ(ErrorOf([&] { log_->Tail(bad, 0, 10, milliseconds(0)); }), kBad) << bad;
    EXPECT_EQ(ErrorOf([&] { log_->AcquireLease(bad, "n1", ttl); }), kBad) << bad;
    EXPECT_EQ(ErrorOf([&] { log_->ReleaseLease(bad, "n1"); }), kBad) << bad;
    EXPECT_EQ(ErrorOf([&] { log_->LeaseOf(bad); }), kBad) << bad;
    EXPECT_EQ(ErrorOf([&] { log_->Checkpoint(bad, "s"); }), kBad) << bad;
    EXPECT_EQ(ErrorOf([&] { log_->CommitCheckpoint(bad, "s", 1); }), kBad) << bad;
  }
}

// ---- Concurrency ----------------------------------------------------------------------------

// A tail following every partition, started before 4 threads append 10,000 streams, sees each
// entry exactly once, at gapless sequences per partition, with each aggregate's versions in order.
TEST_P(EventLogContract, ConcurrentAppendsAreTailedExactlyOnceInOrder) {
  constexpr int kWriters = 4;
  constexpr int kAggregatesPerWriter = 25;
  const int kVersions = std::max(1, 100 * GetParam().load_percent / 100);
  const int kTotal = kWriters * kAggregatesPerWriter * kVersions;
  log_->Create(kPartitions);

  std::vector<Sequence> last(kPartitions, 0);
  std::map<AggregateRef, Version> versions;
  std::set<std::string> requests;
  std::vector<std::string> violations;
  int seen = 0;
  std::latch tailing(1);
  std::jthread tail([&] {
    tailing.count_down();
    const auto deadline = SteadyClock::now() + std::chrono::seconds(60);
    while (seen < kTotal && violations.empty() && SteadyClock::now() < deadline) {
      for (int p = 0; p < kPartitions; ++p) {
        for (const Entry& entry : log_->Tail(p, last[p], 500, milliseconds(5))) {
          const Position expected{p, last[p] + 1};
          Version& version = versions[entry.stream.ref];
          if (entry.position != expected) {
            violations.push_back("partition " + std::to_string(p) + " gave sequence " +
                                 std::to_string(entry.position.sequence) + " after " +
                                 std::to_string(last[p]));
          } else if (entry.stream.version != version + 1) {
            violations.push_back(ToString(entry.stream.ref) + " gave version " +
                                 std::to_string(entry.stream.version) + " after " +
                                 std::to_string(version));
          } else if (!requests.insert(entry.stream.request_id).second) {
            violations.push_back("request " + entry.stream.request_id + " seen twice");
          }
          last[p] = entry.position.sequence;
          version = entry.stream.version;
          ++seen;
        }
      }
    }
  });

  tailing.wait();
  std::atomic<int> not_appended = 0;
  {
    std::vector<std::jthread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        for (Version v = 1; v <= kVersions; ++v) {
          for (int a = 0; a < kAggregatesPerWriter; ++a) {
            const AggregateRef ref = Ref("w" + std::to_string(w) + "-" + std::to_string(a));
            if (!log_->Append(MakeStream(ref, v)).appended()) ++not_appended;
          }
        }
      });
    }
  }
  tail.join();

  EXPECT_EQ(not_appended.load(), 0);
  EXPECT_EQ(violations, std::vector<std::string>{});
  EXPECT_EQ(seen, kTotal);
  EXPECT_EQ(versions.size(), static_cast<size_t>(kWriters * kAggregatesPerWriter));
  for (const auto& [ref, version] : versions) EXPECT_EQ(version, kVersions) << ref;
  for (int p = 0; p < kPartitions; ++p) EXPECT_EQ(log_->Head(p), last[p]) << p;
}

}  // namespace
}  // namespace wow::contract
