// MongoEventLog (wow/mongo.h): the EventLog of one context on MongoDB. The multi-node algorithm
// (store/mongo/log/multi_node_log.h) runs on the log's collections (mongo_log_layer.h); this file
// adds what a log is besides: the partition count and format (a document "log" in the counters
// collection), the reads by aggregate and request, the head, leases (in each counter) and
// checkpoints (wow_log_checkpoints__<context>), and the blocking tail.
#include <algorithm>
#include <atomic>
#include <set>

#include "store/common/commit_signal.h"
#include "store/mongo/deployment.h"
#include "store/mongo/log/multi_node_log.h"
#include "store/mongo/log_commands.h"
#include "store/mongo/mongo_log_layer.h"
#include "wow/error.h"
#include "wow/mongo.h"

namespace wow {
namespace {

using mongo::AppendInt64;
using mongo::AppendText;
using mongo::Bson;
using mongo::BsonFromJson;
using mongo::FindCommand;
using mongo::FindInteger;
using mongo::FindText;
using mongo::NewBson;
using mongo::UpdateCommand;

constexpr const char* kLogRecordId = "log";

class MongoEventLog final : public EventLog {
 public:
  MongoEventLog(std::shared_ptr<MongoDeployment> deployment, std::string context,
                std::shared_ptr<const Clock> clock, const MongoLogOptions& options)
      : deployment_(std::move(deployment)),
        context_(std::move(context)),
        clock_(std::move(clock)),
        counters_(mongo::CountersCollectionName(context_)),
        checkpoints_(mongo::CheckpointsCollectionName(context_)),
        layer_(deployment_->executor(), deployment_->collections(), context_),
        log_(layer_, clock_, AlgorithmOptions(options)) {
    ValidateTypeName(context_, "context");
    Require(clock_ != nullptr, "an event log needs a clock");
  }

  ~MongoEventLog() override {
    try {
      log_.Close();
    } catch (const Error&) {
      // Another node's tail seals what this one could not close, after the stall grace.
    }
  }

  const std::string& context() const override { return context_; }

  void Create(int partitions) override {
    ValidatePartitionCount(partitions);
    EnsureCollections();
    UpdateCommand record;
    record.collection = counters_;
    record.filter = BsonFromJson(R"({"_id": "log"})");
    record.update = NewBson();
    bson_t set;
    bson_append_document_begin(record.update.get(), "$setOnInsert", -1, &set);
    AppendInt64(&set, "partitions", partitions);
    AppendInt64(&set, "format", mongo::kLogFormat);
    bson_append_document_end(record.update.get(), &set);
    record.upsert = true;
    Executor().Update(record, "creating the event log of " + context_);
    const int stored = ReadPartitionCount();
    if (stored != partitions) {
      throw Error(ErrorCode::kFailedPrecondition, "event log of context \"" + context_ + "\" has " +
                                                      std::to_string(stored) + " partitions, not " +
                                                      std::to_string(partitions) +
                                                      "; the partition count never changes");
    }
    layer_.CreateCounters(partitions);
    Opened(partitions);
  }

  int Open() override {
    const int stored = ReadPartitionCount();
    if (stored == 0) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "event log of context \"" + context_ + "\" is not created; call Create first");
    }
    EnsureCollections();
    Opened(stored);
    return stored;
  }

  int partitions() const override { return RequireCreated(); }

  AppendResult Append(const Stream& stream) override { return AppendAll({stream}).front(); }

  std::vector<AppendResult> AppendAll(const std::vector<Stream>& streams) override {
    const int partitions = RequireCreated();
    std::vector<std::optional<AppendResult>> results(streams.size());
    std::vector<mongo_log::MultiNodeLog::Placed> placed;
    std::vector<std::size_t> placed_index;
    std::set<std::string> refused_aggregates;  // an earlier stream of it was refused here
    for (std::size_t i = 0; i < streams.size(); ++i) {
      const Stream& s = streams[i];
      std::optional<std::string> reason = InvalidStreamReason(s, context_);
      if (!reason) reason = mongo::UnstorableStreamReason(s);
      const std::string key = s.ref.aggregate + '\0' + s.ref.tenant_id + '\0' + s.ref.id;
      if (reason) {
        results[i] = AppendResult::Refused(*reason);
        refused_aggregates.insert(key);
        continue;
      }
      if (refused_aggregates.contains(key)) {
        results[i] = AppendResult::Conflict();  // decided on a stream that was refused
        continue;
      }
      placed.push_back({&s, mongo::LogCollectionName(context_, s.ref.aggregate),
                        PartitionOf(s.ref.tenant_id, s.ref.id, partitions)});
      placed_index.push_back(i);
    }
    if (!placed.empty()) {
      std::vector<AppendResult> appended = log_.Append(placed);
      for (std::size_t k = 0; k < appended.size(); ++k) {
        if (appended[k].appended()) signal_->Notify(appended[k].position().partition);
        results[placed_index[k]] = std::move(appended[k]);
      }
    }
    std::vector<AppendResult> out;
    out.reserve(results.size());
    for (auto& r : results) out.push_back(std::move(*r));
    return out;
  }

  std::vector<Stream> Read(const AggregateRef& ref, Version from, Version to) override {
    RequireOwnRef(ref);
    if (from > to) return {};
    FindCommand query = AggregateQuery(ref);
    bson_t range;
    bson_append_document_begin(query.filter.get(), "version", -1, &range);
    AppendInt64(&range, "$gte", from);
    AppendInt64(&range, "$lte", to);
    bson_append_document_end(query.filter.get(), &range);
    query.projection = BsonFromJson(R"({"transport": 0})");
    std::vector<Stream> streams;
    Sequence last_sequence = 0;
    for (const Bson& doc : Executor().Find(query, "reading " + ToString(ref))) {
      mongo_log::LogDoc entry = mongo::ParseLogDocument(*doc, query.collection);
      last_sequence = entry.sequence;
      streams.push_back(std::move(entry.stream));
    }
    if (!streams.empty()) {
      log_.Remember(query.collection, ref, streams.back().version, last_sequence);
    }
    return streams;
  }

  std::vector<Entry> ReadEntries(const AggregateRef& ref,
                                 const std::vector<Version>& versions) override {
    RequireOwnRef(ref);
    if (versions.empty()) return {};
    FindCommand query = AggregateQuery(ref);
    bson_t in, list;
    bson_append_document_begin(query.filter.get(), "version", -1, &in);
    bson_append_array_begin(&in, "$in", -1, &list);
    for (std::size_t i = 0; i < versions.size(); ++i) {
      AppendInt64(&list, std::to_string(i), versions[i]);
    }
    bson_append_array_end(&in, &list);
    bson_append_document_end(query.filter.get(), &in);
    std::vector<Entry> entries;
    for (const Bson& doc : Executor().Find(query, "reading " + ToString(ref))) {
      mongo_log::LogDoc entry = mongo::ParseLogDocument(*doc, query.collection);
      entries.push_back({{entry.partition, entry.sequence}, std::move(entry.stream)});
    }
    return entries;
  }

  std::optional<Position> PositionOf(const AggregateRef& ref, Version version) override {
    RequireOwnRef(ref);
    const int partitions = RequireCreated();
    const int partition = PartitionOf(ref.tenant_id, ref.id, partitions);
    auto at = layer_.FindVersion(mongo::LogCollectionName(context_, ref.aggregate), partition,
                                 ref.tenant_id, ref.id, version);
    if (!at) return std::nullopt;
    return Position{partition, *at};
  }

  std::optional<Entry> FindByRequestId(const std::string& aggregate, const std::string& tenant_id,
                                       const std::string& request_id) override {
    RequireCreated();
    ValidateTypeName(aggregate, "aggregate type");
    return layer_.FindRequest(mongo::LogCollectionName(context_, aggregate), tenant_id, request_id);
  }

  Sequence Head(int partition) override {
    ValidatePartition(partition, RequireCreated());
    const std::vector<std::string> collections = layer_.ReadRegistry();
    if (collections.empty()) return 0;
    Sequence head = 0;
    for (const Bson& doc :
         Executor().Aggregate(collections.front(), *mongo::HeadPipeline(partition, collections),
                              "reading the head of partition " + std::to_string(partition) +
                                  " of " + context_)) {
      head = std::max(head, FindInteger(*doc, "sequence").value_or(0));
    }
    return head;
  }

  PartitionLineage Lineage(int partition) override {
    ValidatePartition(partition, RequireCreated());
    const Bson counter = CounterDocument(partition);
    PartitionLineage lineage;
    if (auto parent = FindInteger(*counter, "parent")) lineage.parent = static_cast<int>(*parent);
    lineage.epoch = static_cast<int>(FindInteger(*counter, "epoch").value_or(0));
    return lineage;
  }

  std::vector<Entry> ReadAfter(int partition, Sequence after, int limit) override {
    ValidatePartition(partition, RequireCreated());
    Require(after >= 0, [&] { return "sequence " + std::to_string(after) + " is below 0"; });
    Require(limit > 0, [&] { return "read limit must be positive, got " + std::to_string(limit); });
    return log_.ReadAfter(partition, after, limit);
  }

  std::vector<Entry> Tail(int partition, Sequence after, int limit,
                          std::chrono::milliseconds max_wait, std::stop_token stop) override {
    ValidatePartition(partition, RequireCreated());
    return store::TailWithBackoff(*signal_, partition, max_wait, stop, store::TailPolicy{},
                                  [&] { return ReadAfter(partition, after, limit); });
  }

  std::vector<std::string> AggregateTypes() override {
    RequireCreated();
    const std::string prefix = mongo::LogCollectionName(context_, "");
    std::vector<std::string> types;
    for (const std::string& collection : layer_.ReadRegistry()) {
      types.push_back(collection.substr(prefix.size()));
    }
    std::sort(types.begin(), types.end());
    return types;
  }

  bool AcquireLease(int partition, const std::string& node,
                    std::chrono::milliseconds ttl) override {
    ValidateLeaseRequest(node, ttl);
    ValidatePartition(partition, RequireCreated());
    const EpochMillis now = clock_->NowMillis();
    const UpdateCommand take =
        mongo::LeaseTakeCommand(context_, partition, node, now, now + ttl.count());
    return Executor()
               .Update(take, "taking the lease of partition " + std::to_string(partition))
               .matched > 0;
  }

  void ReleaseLease(int partition, const std::string& node) override {
    ValidatePartition(partition, RequireCreated());
    const EpochMillis now = clock_->NowMillis();
    // A released lease stays stored, expired at once, so LeaseOf still says who held it last.
    const UpdateCommand release = mongo::LeaseReleaseCommand(context_, partition, node, now);
    Executor().Update(release, "releasing the lease of partition " + std::to_string(partition));
  }

  std::optional<Lease> LeaseOf(int partition) override {
    ValidatePartition(partition, RequireCreated());
    const Bson counter = CounterDocument(partition);
    const auto node = FindText(*counter, "lease.node");
    const auto expires_at = FindInteger(*counter, "lease.expires_at");
    if (!node || !expires_at) return std::nullopt;
    return Lease{std::string(*node), *expires_at};
  }

  Sequence Checkpoint(int partition, const std::string& subscription) override {
    Require(!subscription.empty(), "subscription name is empty");
    ValidatePartition(partition, RequireCreated());
    for (const Bson& doc :
         Executor().Find(mongo::CheckpointQuery(context_, partition, subscription),
                         "reading checkpoint " + subscription)) {
      return FindInteger(*doc, "sequence").value_or(0);
    }
    return 0;
  }

  void CommitCheckpoint(int partition, const std::string& subscription,
                        Sequence sequence) override {
    Require(!subscription.empty(), "subscription name is empty");
    Require(sequence >= 0,
            [&] { return "checkpoint sequence " + std::to_string(sequence) + " is below 0"; });
    ValidatePartition(partition, RequireCreated());
    const UpdateCommand commit =
        mongo::CheckpointCommitCommand(context_, partition, subscription, sequence);
    Executor().Update(commit, "committing checkpoint " + subscription);
  }

 private:
  static mongo_log::MultiNodeLogOptions AlgorithmOptions(const MongoLogOptions& options) {
    Require(options.block_size >= 1, "a log's block size is at least 1");
    Require(options.stall_grace.count() > 0, "a log's stall grace is positive");
    mongo_log::MultiNodeLogOptions out;
    out.node = NewId();
    out.block_size = options.block_size;
    out.stall_grace = options.stall_grace;
    return out;
  }

  const mongo::Executor& Executor() const { return deployment_->executor(); }

  void EnsureCollections() {
    deployment_->collections().Ensure(
        {counters_, "log_counters", context_, "", mongo::kLogFormat, nullptr});
    deployment_->collections().Ensure(
        {checkpoints_, "log_checkpoints", context_, "", mongo::kLogFormat, nullptr});
  }

  // The stored partition count; 0 when the log was never created.
  int ReadPartitionCount() {
    FindCommand query{counters_, BsonFromJson(R"({"_id": "log"})"), nullptr, 1, nullptr};
    for (const Bson& doc : Executor().Find(query, "reading the event log of " + context_)) {
      const auto format = FindInteger(*doc, "format");
      if (format != mongo::kLogFormat) {
        throw Error(ErrorCode::kFailedPrecondition,
                    "event log of context \"" + context_ + "\" is in format " +
                        std::to_string(format.value_or(-1)) + ", and this build reads format " +
                        std::to_string(mongo::kLogFormat));
      }
      return static_cast<int>(FindInteger(*doc, "partitions").value_or(0));
    }
    return 0;
  }

  void Opened(int partitions) {
    std::lock_guard lock(mutex_);
    if (!signal_) signal_ = std::make_unique<store::CommitSignal>(partitions);
    partitions_ = partitions;
  }

  int RequireCreated() const {
    const int partitions = partitions_.load();
    if (partitions == 0) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "event log of context \"" + context_ + "\" is not created; call Create first");
    }
    return partitions;
  }

  void RequireOwnRef(const AggregateRef& ref) const {
    RequireCreated();
    ValidateRef(ref);
    Require(ref.context == context_, [&] {
      return "aggregate " + ToString(ref) + " is not of context \"" + context_ + "\"";
    });
  }

  // The entries of `ref`, by the version key (which starts with the partition).
  FindCommand AggregateQuery(const AggregateRef& ref) const {
    mongo::RequireStorableText(ref.tenant_id, "tenant id");
    mongo::RequireStorableText(ref.id, "aggregate id");
    FindCommand query;
    query.collection = mongo::LogCollectionName(context_, ref.aggregate);
    query.filter = NewBson();
    AppendInt64(query.filter.get(), "partition",
                PartitionOf(ref.tenant_id, ref.id, RequireCreated()));
    AppendText(query.filter.get(), "tenant_id", ref.tenant_id);
    AppendText(query.filter.get(), "id", ref.id);
    AppendText(query.filter.get(), "kind", "entry");
    query.sort = BsonFromJson(R"({"version": 1})");
    return query;
  }

  Bson CounterDocument(int partition) {
    FindCommand query{counters_, BsonFromJson(R"({"_id": )" + std::to_string(partition) + "}"),
                      nullptr, 1, nullptr};
    std::vector<Bson> found = Executor().Find(query, "reading " + counters_);
    if (found.empty()) {
      throw Error(ErrorCode::kDataLoss, "partition " + std::to_string(partition) + " of " +
                                            context_ + " has no counter in " + counters_);
    }
    return std::move(found.front());
  }

  const std::shared_ptr<MongoDeployment> deployment_;
  const std::string context_;
  const std::shared_ptr<const Clock> clock_;
  const std::string counters_;
  const std::string checkpoints_;
  mongo::MongoLogLayer layer_;
  mongo_log::MultiNodeLog log_;
  std::mutex mutex_;
  std::atomic<int> partitions_{0};
  std::unique_ptr<store::CommitSignal> signal_;
};

}  // namespace

std::unique_ptr<EventLog> NewMongoEventLog(std::shared_ptr<MongoDeployment> deployment,
                                           std::string context, std::shared_ptr<const Clock> clock,
                                           MongoLogOptions options) {
  Require(deployment != nullptr, "an event log needs a deployment");
  return std::make_unique<MongoEventLog>(std::move(deployment), std::move(context),
                                         std::move(clock), options);
}

}  // namespace wow
