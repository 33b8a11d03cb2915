// The in-memory ReservationStore: the rules of core/reservation_rules.h over a key table
// (key_table.h) under its mutex. The table may be shared with the memory log made beside it
// (memory_stores.h), whose appends confirm and release their keys in it.
#include "core/reservation_rules.h"
#include "store/memory/key_table.h"
#include "store/memory/memory_stores.h"
#include "wow/error.h"
#include "wow/reservation_store.h"

namespace wow {
namespace {

class MemoryReservationStore final : public ReservationStore {
 public:
  MemoryReservationStore(std::shared_ptr<memory::SharedKeyTable> keys,
                         std::shared_ptr<const Clock> clock)
      : keys_(std::move(keys)), clock_(std::move(clock)) {
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
    std::lock_guard lock(keys_->mutex);
    return keys_->table.Find(scope, key);
  }

  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) override {
    ValidateReservationKey(scope, after_key.empty() ? "-" : after_key);
    Require(limit > 0, [&] { return "list limit must be positive, got " + std::to_string(limit); });
    std::lock_guard lock(keys_->mutex);
    return keys_->table.List(scope, after_key, limit);
  }

 private:
  bool Apply(const ReservationScope& scope, const std::string& key, const core::ReservationOp& op) {
    std::lock_guard lock(keys_->mutex);
    return keys_->table.Apply(scope, key, op, clock_->NowMillis());
  }

  const std::shared_ptr<memory::SharedKeyTable> keys_;
  const std::shared_ptr<const Clock> clock_;
};

}  // namespace

std::unique_ptr<ReservationStore> NewMemoryReservationStore(std::shared_ptr<const Clock> clock) {
  return std::make_unique<MemoryReservationStore>(std::make_shared<memory::SharedKeyTable>(),
                                                  std::move(clock));
}

namespace memory {

std::unique_ptr<ReservationStore> NewReservationStoreOn(std::shared_ptr<SharedKeyTable> keys,
                                                        std::shared_ptr<const Clock> clock) {
  return std::make_unique<MemoryReservationStore>(std::move(keys), std::move(clock));
}

}  // namespace memory
}  // namespace wow
