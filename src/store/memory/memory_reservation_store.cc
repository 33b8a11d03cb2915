// The in-memory ReservationStore: the reference semantics of DESIGN §5.1, one mutex over a map.
#include <map>
#include <mutex>

#include "wow/error.h"
#include "wow/reservation_store.h"

namespace wow {
namespace {

class MemoryReservationStore final : public ReservationStore {
 public:
  explicit MemoryReservationStore(std::shared_ptr<const Clock> clock) : clock_(std::move(clock)) {
    Require(clock_ != nullptr, "a reservation store needs a clock");
  }

  bool Reserve(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold, std::chrono::milliseconds ttl) override {
    ValidateReserve(scope, key, owner, hold, ttl);
    std::lock_guard lock(mutex_);
    const EpochMillis now = clock_->NowMillis();
    auto [it, inserted] = keys_.try_emplace({scope, key});
    Reservation& r = it->second;
    if (inserted || IsExpiredPending(r, now)) {
      r = Reservation{key, owner, ReservationState::kPending, {hold}, now + ttl.count(),
                      kUnversioned};
      return true;
    }
    if (r.owner != owner) return false;
    if (r.state == ReservationState::kPending) {
      r.holds.insert(hold);
      r.expires_at = std::max(r.expires_at, now + ttl.count());
    }
    return true;
  }

  bool Confirm(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateReservation(scope, key, owner);
    ValidateVersion(version);
    Require(version != kAnyVersion, "ANY_VERSION is for releases; confirm a stream's version");
    std::lock_guard lock(mutex_);
    const EpochMillis now = clock_->NowMillis();
    auto [it, inserted] = keys_.try_emplace({scope, key});
    Reservation& r = it->second;
    if (!inserted && r.owner != owner && !IsExpiredPending(r, now)) return false;
    if (inserted || r.owner != owner || r.state == ReservationState::kPending) {
      r = Reservation{key, owner, ReservationState::kConfirmed, {}, 0, version};
    } else {
      r.version = std::max(r.version, version);
    }
    return true;
  }

  bool Release(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateReservation(scope, key, owner);
    ValidateVersion(version);
    std::lock_guard lock(mutex_);
    auto it = keys_.find({scope, key});
    if (it == keys_.end() || it->second.owner != owner) return false;
    const Reservation& r = it->second;
    if (r.state == ReservationState::kConfirmed && version != kAnyVersion && r.version > version) {
      return false;  // a later fact confirmed the key again: this release is an old one, replayed
    }
    keys_.erase(it);
    return true;
  }

  bool Abandon(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold) override {
    ValidateReservation(scope, key, owner);
    Require(!hold.empty(), "reservation hold (attempt id) is empty");
    std::lock_guard lock(mutex_);
    auto it = keys_.find({scope, key});
    if (it == keys_.end() || it->second.owner != owner ||
        it->second.state != ReservationState::kPending) {
      return false;
    }
    if (it->second.holds.erase(hold) == 0) return false;
    if (it->second.holds.empty()) keys_.erase(it);
    return true;
  }

  std::optional<Reservation> Find(const ReservationScope& scope, const std::string& key) override {
    ValidateReservationKey(scope, key);
    std::lock_guard lock(mutex_);
    auto it = keys_.find({scope, key});
    if (it == keys_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) override {
    ValidateReservationKey(scope, after_key.empty() ? "-" : after_key);
    Require(limit > 0, "list limit must be positive, got " + std::to_string(limit));
    std::lock_guard lock(mutex_);
    std::vector<Reservation> page;
    for (auto it = keys_.upper_bound({scope, after_key});
         it != keys_.end() && it->first.first == scope && static_cast<int>(page.size()) < limit;
         ++it) {
      page.push_back(it->second);
    }
    return page;
  }

 private:
  const std::shared_ptr<const Clock> clock_;
  std::mutex mutex_;
  std::map<std::pair<ReservationScope, std::string>, Reservation> keys_;
};

}  // namespace

std::unique_ptr<ReservationStore> NewMemoryReservationStore(std::shared_ptr<const Clock> clock) {
  return std::make_unique<MemoryReservationStore>(std::move(clock));
}

}  // namespace wow
