// Forwarding wrappers of the store contracts: each forwards every call to the store it wraps, so
// a subclass overrides only what it needs, such as a fault injected into one operation (after
// LevelDB's EnvWrapper). An EventLogWrapper is taken to pass appends through to the log it wraps:
// a store set whose appends confirm their keys (StoreSet::appends_confirm_keys) keeps that
// promise with the wrapper in place (StoreSet::With), so a subclass must not report an append as
// done that its target did not do.
//
// Thread-safety: as the wrapped store.
#pragma once

#include <memory>

#include "wow/event_log.h"
#include "wow/reservation_store.h"
#include "wow/timer_store.h"

namespace wow {

class ReservationStoreWrapper : public ReservationStore {
 public:
  explicit ReservationStoreWrapper(std::shared_ptr<ReservationStore> target)
      : target_(std::move(target)) {}
  ReservationStore& target() { return *target_; }

  bool Reserve(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold, std::chrono::milliseconds ttl) override {
    return target_->Reserve(scope, key, owner, hold, ttl);
  }
  bool Confirm(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    return target_->Confirm(scope, key, owner, version);
  }
  bool Release(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    return target_->Release(scope, key, owner, version);
  }
  bool Abandon(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold) override {
    return target_->Abandon(scope, key, owner, hold);
  }
  std::optional<Reservation> Find(const ReservationScope& scope, const std::string& key) override {
    return target_->Find(scope, key);
  }
  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) override {
    return target_->List(scope, after_key, limit);
  }

 private:
  std::shared_ptr<ReservationStore> target_;
};

class TimerStoreWrapper : public TimerStore {
 public:
  explicit TimerStoreWrapper(std::shared_ptr<TimerStore> target) : target_(std::move(target)) {}
  TimerStore& target() { return *target_; }

  bool Put(const Timer& timer) override { return target_->Put(timer); }
  bool Cancel(const AggregateRef& owner, const std::string& key, Version version) override {
    return target_->Cancel(owner, key, version);
  }
  int CancelAll(const AggregateRef& owner, Version version) override {
    return target_->CancelAll(owner, version);
  }
  std::optional<Timer> Find(const AggregateRef& owner, const std::string& key) override {
    return target_->Find(owner, key);
  }
  std::vector<Timer> Due(const std::set<int>& partitions, EpochMillis until, int limit) override {
    return target_->Due(partitions, until, limit);
  }
  std::vector<Timer> Parked(const AggregateRef& target) override { return target_->Parked(target); }
  int Settle(const std::vector<TimerChange>& changes) override { return target_->Settle(changes); }

 private:
  std::shared_ptr<TimerStore> target_;
};

class EventLogWrapper : public EventLog {
 public:
  explicit EventLogWrapper(std::shared_ptr<EventLog> target) : target_(std::move(target)) {}
  EventLog& target() { return *target_; }
  const EventLog& target() const { return *target_; }

  const std::string& context() const override { return target_->context(); }
  void Create(int partitions) override { target_->Create(partitions); }
  int Open() override { return target_->Open(); }
  int partitions() const override { return target_->partitions(); }
  AppendResult Append(const Stream& stream) override { return target_->Append(stream); }
  std::vector<AppendResult> AppendAll(const std::vector<Stream>& streams) override {
    return target_->AppendAll(streams);
  }
  std::vector<Stream> Read(const AggregateRef& ref, Version from, Version to) override {
    return target_->Read(ref, from, to);
  }
  std::vector<Entry> ReadEntries(const AggregateRef& ref,
                                 const std::vector<Version>& versions) override {
    return target_->ReadEntries(ref, versions);
  }
  std::optional<Position> PositionOf(const AggregateRef& ref, Version version) override {
    return target_->PositionOf(ref, version);
  }
  std::optional<Entry> FindByRequestId(const std::string& aggregate, const std::string& tenant_id,
                                       const std::string& request_id) override {
    return target_->FindByRequestId(aggregate, tenant_id, request_id);
  }
  Sequence Head(int partition) override { return target_->Head(partition); }
  PartitionLineage Lineage(int partition) override { return target_->Lineage(partition); }
  std::vector<Entry> ReadAfter(int partition, Sequence after, int limit) override {
    return target_->ReadAfter(partition, after, limit);
  }
  std::vector<Entry> Tail(int partition, Sequence after, int limit,
                          std::chrono::milliseconds max_wait, std::stop_token stop) override {
    return target_->Tail(partition, after, limit, max_wait, std::move(stop));
  }
  std::vector<std::string> AggregateTypes() override { return target_->AggregateTypes(); }
  bool AcquireLease(int partition, const std::string& node,
                    std::chrono::milliseconds ttl) override {
    return target_->AcquireLease(partition, node, ttl);
  }
  void ReleaseLease(int partition, const std::string& node) override {
    target_->ReleaseLease(partition, node);
  }
  std::optional<Lease> LeaseOf(int partition) override { return target_->LeaseOf(partition); }
  Sequence Checkpoint(int partition, const std::string& subscription) override {
    return target_->Checkpoint(partition, subscription);
  }
  void CommitCheckpoint(int partition, const std::string& subscription,
                        Sequence sequence) override {
    target_->CommitCheckpoint(partition, subscription, sequence);
  }

 private:
  std::shared_ptr<EventLog> target_;
};

}  // namespace wow
