// The in-memory TimerStore: the reference semantics of DESIGN §5.3, one mutex over a map keyed by
// (owner, key). Due and Parked scan every timer: this store serves tests, not millions of timers.
#include <algorithm>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "core/timer_rules.h"
#include "wow/error.h"
#include "wow/timer_store.h"

namespace wow {
namespace {

class MemoryTimerStore final : public TimerStore {
 public:
  MemoryTimerStore(std::string context, int partitions)
      : context_(std::move(context)), partitions_(partitions) {
    ValidateTypeName(context_, "context");
    ValidatePartitionCount(partitions_);
  }

  bool Put(const Timer& timer) override {
    ValidateTimer(timer);
    std::lock_guard lock(mutex_);
    auto [it, inserted] = timers_.try_emplace({timer.owner, timer.key}, timer);
    if (inserted) return true;
    const Timer& stored = it->second;
    if (stored.version > timer.version) return false;  // an old fact replayed
    // The same fact replayed: the stored timer (maybe claimed, retried or parked since) stays.
    if (stored.version == timer.version && stored.timer_id == timer.timer_id) return true;
    it->second = timer;
    return true;
  }

  bool Cancel(const AggregateRef& owner, const std::string& key, Version version) override {
    ValidateOwnerKey(owner, key);
    ValidateVersion(version, "timer version");
    std::lock_guard lock(mutex_);
    auto it = timers_.find({owner, key});
    if (it == timers_.end() || it->second.version > version) return false;
    timers_.erase(it);
    return true;
  }

  int CancelAll(const AggregateRef& owner, Version version) override {
    ValidateOwner(owner);
    ValidateVersion(version, "timer version");
    std::lock_guard lock(mutex_);
    int cancelled = 0;
    for (auto it = timers_.lower_bound({owner, ""});
         it != timers_.end() && it->first.first == owner;) {
      if (it->second.version <= version) {
        it = timers_.erase(it);
        ++cancelled;
      } else {
        ++it;
      }
    }
    return cancelled;
  }

  std::optional<Timer> Find(const AggregateRef& owner, const std::string& key) override {
    ValidateOwnerKey(owner, key);
    std::lock_guard lock(mutex_);
    auto it = timers_.find({owner, key});
    if (it == timers_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<Timer> Due(const std::set<int>& partitions, EpochMillis until, int limit) override {
    for (int p : partitions) ValidatePartition(p, partitions_);
    Require(limit > 0, [&] { return "due limit must be positive, got " + std::to_string(limit); });
    std::vector<Timer> due;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [_, t] : timers_) {
        if (t.state != TimerState::kParked && t.due_at <= until &&
            partitions.contains(t.partition)) {
          due.push_back(t);
        }
      }
    }
    core::KeepEarliestDue(due, limit);
    return due;
  }

  std::vector<Timer> Parked(const AggregateRef& target) override {
    ValidateRef(target);
    std::vector<Timer> parked;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [_, t] : timers_) {
        if (t.state == TimerState::kParked && t.target == target) parked.push_back(t);
      }
    }
    std::sort(parked.begin(), parked.end(), core::DueFirst<Timer>);
    return parked;
  }

  int Settle(const std::vector<TimerChange>& changes) override {
    ValidateSettle(changes, context_, partitions_);
    std::lock_guard lock(mutex_);
    int applied = 0;
    for (const TimerChange& change : changes) {
      const Timer& loaded = change.loaded;
      auto it = timers_.find({loaded.owner, loaded.key});
      if (it == timers_.end()) continue;
      Timer& t = it->second;
      if (std::tie(t.timer_id, t.version, t.state, t.attempt, t.due_at) !=
          std::tie(loaded.timer_id, loaded.version, loaded.state, loaded.attempt, loaded.due_at)) {
        continue;  // changed since it was loaded
      }
      ++applied;
      switch (change.kind) {
        case TimerChange::Kind::kClaim:
          t.state = TimerState::kFiring;
          t.due_at = change.new_due_at;
          break;
        case TimerChange::Kind::kRetry:
          t.state = TimerState::kPending;
          t.due_at = change.new_due_at;
          ++t.attempt;
          break;
        case TimerChange::Kind::kPark:
          t.state = TimerState::kParked;
          ++t.attempt;
          t.parked_version = change.target_version;
          break;
        case TimerChange::Kind::kDone:
          timers_.erase(it);
          break;
        case TimerChange::Kind::kRearm:
          t.state = TimerState::kPending;
          t.due_at = change.new_due_at;
          t.parked_version = kUnversioned;
          break;
      }
    }
    return applied;
  }

 private:
  void ValidateOwner(const AggregateRef& owner) const { ValidateTimerOwner(owner, context_); }
  void ValidateOwnerKey(const AggregateRef& owner, const std::string& key) const {
    ValidateTimerKey(owner, key, context_);
  }
  void ValidateTimer(const Timer& t) const { wow::ValidateTimer(t, context_, partitions_); }

  const std::string context_;
  const int partitions_;
  std::mutex mutex_;
  std::map<std::pair<AggregateRef, std::string>, Timer> timers_;
};

}  // namespace

std::unique_ptr<TimerStore> NewMemoryTimerStore(std::string_view context, int partitions) {
  return std::make_unique<MemoryTimerStore>(std::string(context), partitions);
}

}  // namespace wow
