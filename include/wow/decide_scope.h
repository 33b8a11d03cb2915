// DecideScope: what a decide function may do beyond reading the state: reserve and release keys
// unique across aggregates, schedule and cancel timers, and read the clock.
//
// A scope is bound to one attempt at deciding one command for one aggregate. Reserve asks the
// ReservationStore at once (a pending reservation held by this attempt, for a short time to
// live); Release, Schedule and Cancel are only recorded, and committed with the decision's events.
// When the events are appended the runtime confirms each reserved key and releases each released
// key at the stream's version; when they surely are not (rejection, no-op, a decide function that
// throws, a version conflict, a duplicate request) it abandons this attempt's holds. A key the
// aggregate already holds stays held whatever an attempt does.
//
// Thread-safety: a scope belongs to the thread running the decide function; do not share it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "wow/model.h"
#include "wow/reservation_store.h"
#include "wow/stream.h"

namespace wow {

// The namespaces an aggregate type reserves in, each with its tenancy (AggregateType::Reserves).
using NamespaceTenancies = std::map<std::string, ReservationTenancy, std::less<>>;

class DecideScope {
 public:
  // A scope for `self`'s attempt `attempt`; reserves in `reservations` for `ttl`, reads `clock`.
  // `declared`: the namespaces self's type declared (not owned; outlives the scope), or null.
  DecideScope(AggregateRef self, std::string attempt, ReservationStore& reservations,
              const Clock& clock, std::chrono::milliseconds ttl,
              const NamespaceTenancies* declared = nullptr);

  DecideScope(const DecideScope&) = delete;
  DecideScope& operator=(const DecideScope&) = delete;

  // Reserves `key` in namespace `ns` for this aggregate, unique within its tenant (kTenant) or
  // across the context's tenants (kSystem): the tenancy the type declared for `ns` (see
  // TenancyOf). Returns true when this aggregate holds the key (newly, or already), false when
  // another aggregate holds it. Throws Error(kInvalidArgument) for an empty or over-long
  // namespace or key and for a tenancy TenancyOf refuses; Error from the store when it fails.
  bool Reserve(std::string_view ns, std::string_view key,
               std::optional<ReservationTenancy> tenancy = std::nullopt);

  // Gives `key` up once the events are appended (at their version); nothing is released when
  // they are not. Throws Error(kInvalidArgument) for an empty or over-long namespace or key and
  // for a tenancy TenancyOf refuses.
  void Release(std::string_view ns, std::string_view key,
               std::optional<ReservationTenancy> tenancy = std::nullopt);

  // The tenancy of `ns` for an aggregate of type `type`, which declared `declared`: the declared
  // one when the type declared any namespace (a namespace it did not declare, or a `given`
  // tenancy other than the declared, is Error(kInvalidArgument)); else `given`, or kTenant.
  static ReservationTenancy TenancyOf(const NamespaceTenancies* declared, std::string_view type,
                                      std::string_view ns,
                                      std::optional<ReservationTenancy> given);

  // Sets this aggregate's timer `key` (replacing one of that key) to send `command` to `target`
  // at `due_at`, once the events are appended. Firing follows `rule`.
  template <typename Command>
  void Schedule(std::string_view key, EpochMillis due_at, const AggregateRef& target,
                const Command& command, TimerRule rule = {}) {
    ScheduleMessage(key, due_at, target, std::string(Command::kType),
                    nlohmann::json(command).dump(), std::move(rule));
  }

  // Cancels this aggregate's timer `key` once the events are appended.
  void Cancel(std::string_view key);

  // The current time of the injected clock.
  EpochMillis Now() const;

  // The aggregate deciding.
  const AggregateRef& self() const { return self_; }

  // The attempt's id: the hold of its reservations.
  const std::string& attempt() const { return attempt_; }

  // What the attempt recorded: keys it reserved (and so holds), keys to release, timer facts.
  const std::vector<KeyFact>& reserved() const { return reserved_; }
  const std::vector<KeyFact>& released() const { return released_; }
  const std::vector<TimerFact>& timers() const { return timers_; }

  // The reservation scope of `ns` under `tenancy` for `owner`.
  static ReservationScope ScopeOf(const AggregateRef& owner, std::string_view ns,
                                  ReservationTenancy tenancy);

 private:
  void ScheduleMessage(std::string_view key, EpochMillis due_at, const AggregateRef& target,
                       std::string command_type, std::string body, TimerRule rule);

  AggregateRef self_;
  std::string attempt_;
  ReservationStore& reservations_;
  const Clock& clock_;
  std::chrono::milliseconds ttl_;
  const NamespaceTenancies* declared_;
  std::vector<KeyFact> reserved_;
  std::vector<KeyFact> released_;
  std::vector<TimerFact> timers_;
};

}  // namespace wow
