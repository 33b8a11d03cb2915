// The in-memory ReservationStore: the rules of core/reservation_rules.h over a map of scopes, each
// a map of its keys in order, under one mutex. A lookup compares the scope a few times and then
// only keys, without copying the scope or the key.
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
    const Keys* keys = KeysOf(scope);
    if (keys == nullptr) return std::nullopt;
    auto it = keys->find(key);
    if (it == keys->end()) return std::nullopt;
    return it->second;
  }

  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) override {
    ValidateReservationKey(scope, after_key.empty() ? "-" : after_key);
    Require(limit > 0, [&] { return "list limit must be positive, got " + std::to_string(limit); });
    std::lock_guard lock(mutex_);
    std::vector<Reservation> page;
    const Keys* keys = KeysOf(scope);
    if (keys == nullptr) return page;
    for (auto it = keys->upper_bound(after_key);
         it != keys->end() && static_cast<int>(page.size()) < limit; ++it) {
      page.push_back(it->second);
    }
    return page;
  }

 private:
  using Keys = std::map<std::string, Reservation, std::less<>>;

  // The keys of `scope`, or null when it has none. REQUIRES: mutex_ is held.
  const Keys* KeysOf(const ReservationScope& scope) const {
    auto it = scopes_.find(scope);
    return it == scopes_.end() ? nullptr : &it->second;
  }

  // Applies `op` to the key's reservation under the lock, by the one copy of the rules.
  bool Apply(const ReservationScope& scope, const std::string& key, const core::ReservationOp& op) {
    std::lock_guard lock(mutex_);
    auto in_scope = scopes_.find(scope);
    std::optional<Reservation> current;
    Keys::iterator it;
    if (in_scope != scopes_.end()) {
      it = in_scope->second.find(key);
      if (it != in_scope->second.end()) current = it->second;
    }
    core::ReservationOutcome outcome =
        core::ApplyReservationRule(current, key, op, clock_->NowMillis());
    switch (outcome.write) {
      case core::ReservationOutcome::Write::kNone:
        break;
      case core::ReservationOutcome::Write::kStore:
        if (in_scope == scopes_.end()) in_scope = scopes_.try_emplace(scope).first;
        in_scope->second.insert_or_assign(key, std::move(outcome.stored));
        break;
      case core::ReservationOutcome::Write::kDelete:  // only of a stored reservation
        in_scope->second.erase(it);
        if (in_scope->second.empty()) scopes_.erase(in_scope);
        break;
    }
    return outcome.answer;
  }

  const std::shared_ptr<const Clock> clock_;
  std::mutex mutex_;
  std::map<ReservationScope, Keys> scopes_;  // a scope without keys is erased
};

}  // namespace

std::unique_ptr<ReservationStore> NewMemoryReservationStore(std::shared_ptr<const Clock> clock) {
  return std::make_unique<MemoryReservationStore>(std::move(clock));
}

}  // namespace wow
