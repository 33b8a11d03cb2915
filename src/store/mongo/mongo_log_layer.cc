#include "store/mongo/mongo_log_layer.h"

#include <algorithm>

#include "wow/error.h"

namespace wow::mongo {

using mongo_log::LogDoc;
using mongo_log::WriteStatus;

Bson MongoLogLayer::PartitionFilter(int partition) const {
  return BsonFromJson(R"({"_id": )" + std::to_string(partition) + "}");
}

void MongoLogLayer::CreateCounters(int partitions) {
  for (int p = 0; p < partitions; ++p) {
    executor_.Update(CounterUpsert(context_, p), "creating the log counter of partition " +
                                                     std::to_string(p) + " of " + context_);
  }
}

mongo_log::Block MongoLogLayer::ReserveBlock(int partition, const std::string& node, Sequence size,
                                             const std::vector<Sequence>& finished) {
  const std::string what =
      "reserving sequences of partition " + std::to_string(partition) + " in " + counters_;
  const Bson pipeline = ReserveBlockPipeline(node, size, finished);
  std::optional<Bson> before =
      executor_.FindAndModify(counters_, *PartitionFilter(partition), *pipeline, what);
  if (!before) {
    throw Error(ErrorCode::kFailedPrecondition,
                what + ": the partition has no counter; create the log first");
  }
  const mongo_log::Counter counter = ParseCounter(**before);
  return {node, counter.next, counter.next + size - 1, false};
}

void MongoLogLayer::MarkSealing(int partition, Sequence first) {
  UpdateCommand command{counters_, PartitionFilter(partition), MarkSealingPipeline(first), false,
                        true};
  executor_.Update(command, "sealing block " + std::to_string(first) + " of " + counters_);
}

void MongoLogLayer::RemoveBlock(int partition, Sequence first) {
  UpdateCommand command{counters_, PartitionFilter(partition), RemoveBlockUpdate(first), false,
                        false};
  executor_.Update(command, "closing block " + std::to_string(first) + " of " + counters_);
}

mongo_log::Counter MongoLogLayer::ReadCounter(int partition) {
  FindCommand query{counters_, PartitionFilter(partition), nullptr, 1, nullptr};
  std::vector<Bson> found = executor_.Find(query, "reading " + counters_);
  if (found.empty()) {
    throw Error(ErrorCode::kFailedPrecondition,
                "partition " + std::to_string(partition) + " of " + context_ + " has no counter");
  }
  return ParseCounter(*found.front());
}

std::vector<std::string> MongoLogLayer::ReadRegistry() {
  return collections_.Registered("log", context_, kLogFormat);
}

void MongoLogLayer::Register(const std::string& collection) {
  const std::string prefix = LogCollectionName(context_, "");
  if (!collection.starts_with(prefix) || collection.size() == prefix.size()) {
    throw Error(ErrorCode::kInvalidArgument,
                collection + " is not a log collection of " + context_);
  }
  // The indexes first: the record makes the collection visible to every tail.
  executor_.RunCommand(*LogIndexesCommand(collection, collections_.sharded()), true,
                       "creating the indexes of " + collection);
  CollectionSpec spec{collection, "log",
                      context_,   collection.substr(prefix.size()),
                      kLogFormat, BsonFromJson(R"({"partition": 1})")};
  collections_.Ensure(spec);
}

std::vector<WriteStatus> MongoLogLayer::Insert(const std::string& collection,
                                               const std::vector<LogDoc>& docs, bool ordered) {
  std::vector<Bson> documents;
  documents.reserve(docs.size());
  for (const LogDoc& doc : docs) documents.push_back(LogDocument(doc));
  const InsertOutcome outcome =
      executor_.InsertMany(collection, documents, ordered, "appending to " + collection);
  std::vector<WriteStatus> statuses(docs.size(), WriteStatus::kWritten);
  std::size_t first_failed = docs.size();
  for (const Bson& error : outcome.write_errors) {
    const auto index = FindInteger(*error, "index");
    const auto status = StatusOfWriteError(*error);
    if (!index || *index < 0 || static_cast<std::size_t>(*index) >= docs.size() || !status) {
      throw Error(ErrorCode::kInternal, "appending to " + collection +
                                            ": the server refused a document: " + ToJson(*error));
    }
    statuses[static_cast<std::size_t>(*index)] = *status;
    first_failed = std::min(first_failed, static_cast<std::size_t>(*index));
  }
  if (ordered) {
    for (std::size_t i = first_failed + 1; i < docs.size(); ++i) {
      statuses[i] = WriteStatus::kNotAttempted;
    }
  }
  return statuses;
}

mongo_log::LogLayer::TailRead MongoLogLayer::ReadTail(int partition, Sequence after,
                                                      const std::vector<std::string>& collections,
                                                      int limit) {
  const Bson pipeline = TailPipeline(partition, after, collections, limit);
  TailRead read;
  read.docs.resize(collections.size());
  bool counted = false;
  for (const Bson& doc :
       executor_.Aggregate(counters_, *pipeline, "reading the tail of " + context_)) {
    const auto c = FindInteger(*doc, "_c");
    if (!c) {
      read.counter = ParseCounter(*doc);
      counted = true;
      continue;
    }
    if (*c < 0 || static_cast<std::size_t>(*c) >= collections.size()) {
      throw Error(ErrorCode::kInternal, "the tail read a document of no collection it asked for");
    }
    read.docs[static_cast<std::size_t>(*c)].push_back(
        ParseLogDocument(*doc, collections[static_cast<std::size_t>(*c)]));
  }
  if (!counted) {
    throw Error(ErrorCode::kFailedPrecondition,
                "partition " + std::to_string(partition) + " of " + context_ + " has no counter");
  }
  return read;
}

std::optional<Sequence> MongoLogLayer::FindVersion(const std::string& collection, int partition,
                                                   const std::string& tenant_id,
                                                   const std::string& id, Version version) {
  std::vector<Bson> found =
      executor_.Find(VersionQuery(collection, partition, tenant_id, id, version),
                     "reading a version of " + collection);
  if (found.empty()) return std::nullopt;
  return ParseLogDocument(*found.front(), collection).sequence;
}

std::optional<Entry> MongoLogLayer::FindRequest(const std::string& collection,
                                                const std::string& tenant_id,
                                                const std::string& request_id) {
  std::vector<Bson> found = executor_.Find(RequestQuery(collection, tenant_id, request_id),
                                           "reading a request of " + collection);
  if (found.empty()) return std::nullopt;
  LogDoc doc = ParseLogDocument(*found.front(), collection);
  return Entry{{doc.partition, doc.sequence}, std::move(doc.stream)};
}

}  // namespace wow::mongo
