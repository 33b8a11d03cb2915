#include "wow/projection.h"

#include <numeric>

#include "wow/error.h"
#include "wow/store_set.h"

namespace wow {
namespace {

class ProjectionSubscription final : public Subscription {
 public:
  ProjectionSubscription(std::shared_ptr<const Projection> projection,
                         std::shared_ptr<ReadModelStore> read_models)
      : projection_(std::move(projection)), read_models_(std::move(read_models)) {
    Require(projection_ != nullptr && read_models_ != nullptr,
            "a projection subscription needs its projection and its read models");
  }
  const std::string& name() const override { return projection_->subscription(); }
  void Handle(const Entry& entry) override {
    read_models_->Apply(projection_->subscription(), entry.position,
                        [&](ReadModelWriter& rows) { projection_->Handle(entry, rows); });
  }

 private:
  std::shared_ptr<const Projection> projection_;
  std::shared_ptr<ReadModelStore> read_models_;
};

}  // namespace

Projection::Projection(std::string_view name, std::vector<std::string> tables)
    : name_(name), subscription_("projection." + name_), tables_(std::move(tables)) {
  ValidateTypeName(name_, "projection");
  Require(!tables_.empty(), "a projection writes a table at least");
  for (const std::string& table : tables_) ValidateTypeName(table, "read model table");
}

Projection& Projection::OnEntry(EntryFn fn) {
  entries_.push_back(std::move(fn));
  return *this;
}

void Projection::Handle(const Entry& entry, ReadModelWriter& rows) const {
  for (const EntryFn& fn : entries_) fn(entry, rows);
  for (const EventRecord& event : entry.stream.events) {
    auto it = events_.find(event.type);
    if (it == events_.end()) continue;
    nlohmann::json body;
    try {
      body = nlohmann::json::parse(event.body);
    } catch (const nlohmann::json::exception& e) {
      throw Error(ErrorCode::kDataLoss, "event " + event.type + " of " + entry.stream.ref.id +
                                            " is not JSON: " + e.what());
    }
    it->second(body, entry.stream, rows);
  }
}

std::shared_ptr<Subscription> NewProjectionSubscription(
    std::shared_ptr<const Projection> projection, std::shared_ptr<ReadModelStore> read_models) {
  return std::make_shared<ProjectionSubscription>(std::move(projection), std::move(read_models));
}

std::vector<Sequence> SubscriptionLag(EventLog& log, const std::string& subscription) {
  std::vector<Sequence> lag;
  for (int p = 0; p < log.partitions(); ++p) {
    lag.push_back(std::max<Sequence>(0, log.Head(p) - log.Checkpoint(p, subscription)));
  }
  return lag;
}

std::int64_t RebuildProjection(const StoreSet& stores,
                               const std::shared_ptr<const Projection>& projection,
                               const std::function<void(std::int64_t, std::int64_t)>& progress) {
  Require(projection != nullptr, "a rebuild needs a projection");
  const std::shared_ptr<ReadModelStore>& read_models = stores.read_models();
  if (read_models == nullptr) {
    throw Error(ErrorCode::kFailedPrecondition,
                "store set " + stores.uri() + " keeps no read models to rebuild");
  }
  EventLog& log = *stores.log();
  // A live lease is a node that would go on from where it was: refuse before dropping anything.
  for (int p = 0; p < log.partitions(); ++p) {
    if (const std::optional<Lease> lease = log.LeaseOf(p);
        lease && lease->expires_at > stores.clock()->NowMillis()) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "partition " + std::to_string(p) + " is leased by node " + lease->node +
                      " until " + std::to_string(lease->expires_at) +
                      " (ms since the epoch): stop the nodes running projection " +
                      projection->name() + ", then rebuild it");
    }
  }
  read_models->Drop(projection->subscription(), projection->tables());
  std::vector<Sequence> heads;
  for (int p = 0; p < log.partitions(); ++p) heads.push_back(log.Head(p));
  const std::int64_t total = std::accumulate(heads.begin(), heads.end(), std::int64_t{0});
  SubscriptionRunner runner(stores.log(), {NewProjectionSubscription(projection, read_models)});
  const int applied = runner.CatchUp([&](int handled) {
    if (progress) progress(handled, total);
  });
  for (int p = 0; p < log.partitions(); ++p) log.ReleaseLease(p, runner.node());
  for (int p = 0; p < log.partitions(); ++p) {
    if (log.Checkpoint(p, projection->subscription()) < heads[static_cast<size_t>(p)]) {
      const std::optional<Lease> lease = log.LeaseOf(p);
      throw Error(ErrorCode::kUnavailable,
                  "partition " + std::to_string(p) + " is leased by node " +
                      (lease ? lease->node : std::string("?")) +
                      ", so the rebuild could not replay it; stop the nodes running projection " +
                      projection->name() + " and rebuild again");
    }
  }
  return applied;
}

}  // namespace wow
