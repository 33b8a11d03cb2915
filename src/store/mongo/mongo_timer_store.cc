// The TimerStore on MongoDB (seed 003): the commands of timer_commands.h, sent through the
// deployment's executor. A put is one conditional upsert, settled by a read when it meets the
// owner_key index; a cancel one delete; CancelAll one deleteMany; a settle one unordered bulk
// write per collection; the due and parked reads one aggregation over the registry each.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/timer_rules.h"
#include "store/mongo/deployment.h"
#include "store/mongo/log_commands.h"
#include "store/mongo/timer_commands.h"
#include "wow/error.h"
#include "wow/mongo.h"

namespace wow {
namespace {

using mongo::Bson;

// How often a Put that met the owner_key index reads and tries again before it gives up with
// kAborted: each try follows a write by another node (a cancel, a settle), so only a timer that
// changes continuously exhausts them.
constexpr int kMaxPutTries = 16;

// A node's claim to rebuild a timer collection of an earlier format lapses after kRebuildClaim
// (the node died rebuilding); a node waits at most kRebuildWait for another's rebuild.
constexpr std::chrono::milliseconds kRebuildClaim{30'000};
constexpr std::chrono::milliseconds kRebuildWait{60'000};
// MongoDB's NamespaceNotFound: a drop of a collection that is not there.
constexpr std::uint32_t kNamespaceNotFound = 26;

class MongoTimerStore final : public TimerStore {
 public:
  MongoTimerStore(std::shared_ptr<MongoDeployment> deployment, std::string context,
                  int partitions)
      : deployment_(std::move(deployment)), context_(std::move(context)), partitions_(partitions) {
    Require(deployment_ != nullptr, "a MongoDB timer store needs a deployment");
    ValidateTypeName(context_, "context");
    ValidatePartitionCount(partitions_);
    RebuildEarlierFormats();
  }

  bool Put(const Timer& timer) override {
    ValidateTimer(timer, context_, partitions_);
    const mongo::UpdateCommand command = mongo::PutTimerCommand(timer);  // bad text before I/O
    Ensure(timer.owner.aggregate);
    const std::string what = What("putting", timer.owner, timer.key);
    for (int attempt = 0; attempt < kMaxPutTries; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(attempt));
      const mongo::WriteOutcome outcome = executor().Update(command, what);
      if (!outcome.duplicate) return true;
      // A stored timer the filter does not admit: later (false), or this very fact (true). Gone
      // or changed meanwhile, the upsert goes again.
      const std::optional<Timer> stored = Find(timer.owner, timer.key);
      if (!stored) continue;
      if (stored->version > timer.version) return false;
      if (stored->version == timer.version && stored->timer_id == timer.timer_id) return true;
    }
    throw Error(ErrorCode::kAborted, "MongoDB: " + what + " met the owner_key index " +
                                         std::to_string(kMaxPutTries) +
                                         " times while the timer kept changing; retry later");
  }

  bool Cancel(const AggregateRef& owner, const std::string& key, Version version) override {
    ValidateTimerKey(owner, key, context_);
    ValidateVersion(version, "timer version");
    const mongo::DeleteCommand command =
        mongo::CancelTimerCommand(owner, PartitionOf(owner), key, version);
    Ensure(owner.aggregate);
    return executor().Delete(command, What("cancelling", owner, key)).deleted == 1;
  }

  int CancelAll(const AggregateRef& owner, Version version) override {
    ValidateTimerOwner(owner, context_);
    ValidateVersion(version, "timer version");
    const mongo::DeleteCommand command =
        mongo::CancelAllTimersCommand(owner, PartitionOf(owner), version);
    Ensure(owner.aggregate);
    return static_cast<int>(
        executor().Delete(command, "cancelling the timers of " + ToString(owner)).deleted);
  }

  std::optional<Timer> Find(const AggregateRef& owner, const std::string& key) override {
    ValidateTimerKey(owner, key, context_);
    const mongo::FindCommand command = mongo::FindTimerCommand(owner, PartitionOf(owner), key);
    Ensure(owner.aggregate);
    std::vector<Bson> found = executor().Find(command, What("reading", owner, key));
    if (found.empty()) return std::nullopt;
    return mongo::ParseTimer(*found.front(), command.collection);
  }

  std::vector<Timer> Due(const std::set<int>& partitions, EpochMillis until, int limit) override {
    for (int p : partitions) ValidatePartition(p, partitions_);
    Require(limit > 0, [&] { return "due limit must be positive, got " + std::to_string(limit); });
    if (partitions.empty()) return {};
    std::vector<Timer> due = ReadOverRegistry("reading the due timers", [&](const auto& names) {
      return mongo::DuePipeline(context_, names, partitions, until, limit);
    });
    core::KeepEarliestDue(due, limit);
    return due;
  }

  std::vector<Timer> Parked(const AggregateRef& target) override {
    ValidateRef(target);
    std::vector<Timer> parked =
        ReadOverRegistry("reading the parked timers of " + ToString(target),
                         [&](const auto& names) {
                           return mongo::ParkedPipeline(context_, names, target);
                         });
    std::sort(parked.begin(), parked.end(), core::DueFirst<Timer>);
    return parked;
  }

  int Settle(const std::vector<TimerChange>& changes) override {
    ValidateSettle(changes, context_, partitions_);
    std::map<std::string, std::vector<mongo::BulkOperation>> by_aggregate;
    for (const TimerChange& change : changes) {
      by_aggregate[change.loaded.owner.aggregate].push_back(mongo::SettleOperation(change));
    }
    int applied = 0;
    for (const auto& [aggregate, operations] : by_aggregate) {
      Ensure(aggregate);
      const std::string collection = mongo::TimerCollectionName(context_, aggregate);
      const std::string what = "settling " + std::to_string(operations.size()) +
                               " timer changes in " + collection;
      const mongo::BulkOutcome outcome = executor().BulkWrite(collection, operations, what);
      if (!outcome.write_errors.empty()) {
        throw Error(ErrorCode::kInternal,
                    "MongoDB: " + what + ": the server refused " +
                        std::to_string(outcome.write_errors.size()) + " of them (" +
                        mongo::ToJson(*outcome.write_errors.front()).substr(0, 300) +
                        "); the others applied");
      }
      applied += static_cast<int>(outcome.matched + outcome.deleted);
    }
    return applied;
  }

 private:
  const mongo::Executor& executor() const { return deployment_->executor(); }

  int PartitionOf(const AggregateRef& owner) const {
    return wow::PartitionOf(owner.tenant_id, owner.id, partitions_);
  }

  static std::string What(std::string_view verb, const AggregateRef& owner,
                          const std::string& key) {
    return std::string(verb) + " timer \"" + key.substr(0, 100) + "\" of " + ToString(owner);
  }

  // Drops the context's timer collections of an earlier format, with the context's timer
  // checkpoints first, so that the timer subscription (which reads its checkpoints after the
  // store is open) puts their timers again from the log's start. Each collection is claimed in
  // its record, so that of nodes opening at once one drops it while the others wait until it is
  // done; a claim older than kRebuildClaim (a node that died rebuilding) is taken over. Throws
  // Error(kUnavailable) when another node's rebuild lasts longer than kRebuildWait.
  void RebuildEarlierFormats() {
    const auto deadline = std::chrono::steady_clock::now() + kRebuildWait;
    for (;;) {
      const std::vector<Bson> records = executor().Find(
          mongo::EarlierTimerFormatsQuery(context_), "reading the timer collections' formats");
      if (records.empty()) return;
      if (deployment_->collections().ddl() == MongoOptions::Ddl::kNone) {
        throw Error(ErrorCode::kFailedPrecondition,
                    "MongoDB: timer collection " +
                        std::string(mongo::FindText(*records.front(), "_id").value_or("")) +
                        " is of an earlier format, and the stores were opened with Ddl::kNone, "
                        "which drops nothing; open them once with Ddl::kAuto to rebuild it from "
                        "the log");
      }
      std::string waiting_for;
      for (const Bson& record : records) {
        const std::string name(mongo::FindText(*record, "_id").value_or(""));
        const EpochMillis now = SystemClock::Instance()->NowMillis();
        const std::string what = "rebuilding timer collection " + name;
        if (executor()
                .Update(mongo::ClaimTimerRebuildCommand(name, now, kRebuildClaim.count()), what)
                .matched == 0) {
          waiting_for = name;  // another node rebuilds it
          continue;
        }
        spdlog::warn(
            "MongoDB timer collection {} is in format {}; this build reads format {}: dropping "
            "it and the timer checkpoints of context \"{}\", so its timers are put again from "
            "the log",
            name, mongo::FindInteger(*record, "format").value_or(0), mongo::kTimerFormat,
            context_);
        executor().Delete(
            mongo::CheckpointsDropCommand(context_, std::string(kTimerSubscriptionName)), what);
        const auto dropped =
            executor().TryCommand(*mongo::DropCollectionCommand(name), true);
        if (dropped.failure && dropped.failure->code != kNamespaceNotFound) {
          throw mongo::ToError(*dropped.failure, what);
        }
        executor().Delete(mongo::EarlierTimerFormatRecordDelete(name), what);
        deployment_->collections().Forget(name);
      }
      if (waiting_for.empty()) continue;
      if (std::chrono::steady_clock::now() >= deadline) {
        throw Error(ErrorCode::kUnavailable,
                    "MongoDB: another node has been rebuilding timer collection " + waiting_for +
                        " (of an earlier format) for over " +
                        std::to_string(kRebuildWait.count() / 1000) +
                        " s; open the store again once it is done, or, if no node is running, "
                        "in " +
                        std::to_string(kRebuildClaim.count() / 1000) +
                        " s, when its claim has lapsed");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Creates `aggregate`'s collection with its indexes and records it, once per store.
  void Ensure(const std::string& aggregate) {
    const std::string name = mongo::TimerCollectionName(context_, aggregate);
    {
      std::lock_guard lock(mutex_);
      if (ensured_.contains(name)) return;
    }
    deployment_->collections().Ensure(
        {name, "timer", context_, aggregate, mongo::kTimerFormat, mongo::TimerShardKey(),
         partitions_});
    if (deployment_->collections().ddl() == MongoOptions::Ddl::kAuto) {
      executor().RunCommand(*mongo::TimerIndexesCommand(name), true,
                            "creating the indexes of " + name);
    }
    std::lock_guard lock(mutex_);
    ensured_.insert(name);
  }

  // The timers the pipeline `build(names)` yields over the registered collections `names`. The
  // pipeline's first document counts the registered collections: another count than the names
  // read means a collection was registered (or dropped) since, so the registry is read again and
  // the pipeline run anew.
  template <typename Build>
  std::vector<Timer> ReadOverRegistry(const std::string& what, Build build) {
    std::vector<std::string> names;
    {
      std::lock_guard lock(mutex_);
      names = registered_;
    }
    for (int round = 0;; ++round) {
      std::vector<Timer> timers;
      std::int64_t counted = 0;
      for (const Bson& doc :
           executor().Aggregate(mongo::kCollectionsRegistry, *build(names), what)) {
        const auto c = mongo::FindInteger(*doc, "_c");
        if (!c) {
          counted = mongo::FindInteger(*doc, "collections").value_or(0);
          continue;
        }
        if (*c < 0 || static_cast<std::size_t>(*c) >= names.size()) {
          throw Error(ErrorCode::kInternal, "MongoDB: " + what + ": a document of no collection");
        }
        timers.push_back(mongo::ParseTimer(*doc, names[static_cast<std::size_t>(*c)]));
      }
      if (counted == static_cast<std::int64_t>(names.size()) || round == 2) return timers;
      names = deployment_->collections().Registered("timer", context_, mongo::kTimerFormat);
      std::lock_guard lock(mutex_);
      registered_ = names;
    }
  }

  const std::shared_ptr<MongoDeployment> deployment_;
  const std::string context_;
  const int partitions_;
  std::mutex mutex_;
  std::set<std::string> ensured_;         // collections created or checked by this store
  std::vector<std::string> registered_;  // the registry as last read
};

}  // namespace

std::unique_ptr<TimerStore> NewMongoTimerStore(std::shared_ptr<MongoDeployment> deployment,
                                               std::string context, int partitions) {
  return std::make_unique<MongoTimerStore>(std::move(deployment), std::move(context), partitions);
}

}  // namespace wow
