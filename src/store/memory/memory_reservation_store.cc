// The in-memory ReservationStore: the rules of core/reservation_rules.h over a map, one mutex.
#include <map>
#include <mutex>

#include "core/reservation_rules.h"
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
    return Apply(scope, key, core::ReservationOp::Reserve(owner, hold, ttl));
  }

  bool Confirm(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateConfirm(scope, key, owner, version);
    return Apply(scope, key, core::ReservationOp::Confirm(owner, version));
  }

  bool Release(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateRelease(scope, key, owner, version);
    return Apply(scope, key, core::ReservationOp::Release(owner, version));
  }

  bool Abandon(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold) override {
    ValidateAbandon(scope, key, owner, hold);
    return Apply(scope, key, core::ReservationOp::Abandon(owner, hold));
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
    Require(limit > 0, [&] { return "list limit must be positive, got " + std::to_string(limit); });
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
  // Applies `op` to the key's reservation under the lock, by the one copy of the rules.
  bool Apply(const ReservationScope& scope, const std::string& key, const core::ReservationOp& op) {
    std::lock_guard lock(mutex_);
    auto it = keys_.find({scope, key});
    std::optional<Reservation> current;
    if (it != keys_.end()) current = it->second;
    core::ReservationOutcome outcome =
        core::ApplyReservationRule(current, key, op, clock_->NowMillis());
    switch (outcome.write) {
      case core::ReservationOutcome::Write::kNone:
        break;
      case core::ReservationOutcome::Write::kStore:
        keys_.insert_or_assign({scope, key}, std::move(outcome.stored));
        break;
      case core::ReservationOutcome::Write::kDelete:
        keys_.erase(it);
        break;
    }
    return outcome.answer;
  }

  const std::shared_ptr<const Clock> clock_;
  std::mutex mutex_;
  std::map<std::pair<ReservationScope, std::string>, Reservation> keys_;
};

}  // namespace

std::unique_ptr<ReservationStore> NewMemoryReservationStore(std::shared_ptr<const Clock> clock) {
  return std::make_unique<MemoryReservationStore>(std::move(clock));
}

}  // namespace wow
