// MongoLogLayer: the log's collections on MongoDB (log_commands.h), as the multi-node algorithm
// sees them (store/mongo/log/log_layer.h). Every write is sent with w: majority, every read with
// readConcern: majority (executor.h); a write whose outcome is unknown throws Error(kUnavailable).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <string>

#include "store/mongo/collections.h"
#include "store/mongo/executor.h"
#include "store/mongo/log/log_layer.h"
#include "store/mongo/log_commands.h"

namespace wow::mongo {

class MongoLogLayer final : public mongo_log::LogLayer {
 public:
  // The log of `context`; `executor` and `collections` must outlive the layer.
  MongoLogLayer(const Executor& executor, Collections& collections, std::string context)
      : executor_(executor),
        collections_(collections),
        context_(std::move(context)),
        counters_(CountersCollectionName(context_)) {}

  // Creates the counters of partitions 0 .. partitions - 1 where missing.
  void CreateCounters(int partitions);

  mongo_log::Block ReserveBlock(int partition, const std::string& node, Sequence size) override;
  void MarkSealing(int partition, Sequence first) override;
  void RemoveBlock(int partition, Sequence first) override;
  mongo_log::Counter ReadCounter(int partition) override;
  std::vector<std::string> ReadRegistry() override;
  void Register(const std::string& collection) override;
  std::vector<mongo_log::WriteStatus> Insert(const std::string& collection,
                                             const std::vector<mongo_log::LogDoc>& docs,
                                             bool ordered) override;
  TailRead ReadTail(int partition, Sequence after, const std::vector<std::string>& collections,
                    int limit) override;
  std::optional<Sequence> FindVersion(const std::string& collection, const std::string& tenant_id,
                                      const std::string& id, Version version) override;
  std::optional<Entry> FindRequest(const std::string& collection, const std::string& tenant_id,
                                   const std::string& request_id) override;

 private:
  Bson PartitionFilter(int partition) const;

  const Executor& executor_;
  Collections& collections_;
  const std::string context_;
  const std::string counters_;
};

}  // namespace wow::mongo
