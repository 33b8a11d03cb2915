#include "wow/decide_scope.h"

#include "wow/error.h"

namespace wow {

DecideScope::DecideScope(AggregateRef self, std::string attempt, ReservationStore& reservations,
                         const Clock& clock, std::chrono::milliseconds ttl,
                         const NamespaceTenancies* declared)
    : self_(std::move(self)),
      attempt_(std::move(attempt)),
      reservations_(reservations),
      clock_(clock),
      ttl_(ttl),
      declared_(declared) {}

ReservationTenancy DecideScope::TenancyOf(const NamespaceTenancies* declared,
                                          std::string_view type, std::string_view ns,
                                          std::optional<ReservationTenancy> given) {
  if (declared == nullptr || declared->empty()) return given.value_or(ReservationTenancy::kTenant);
  const auto it = declared->find(ns);
  Require(it != declared->end(), [&] {
    return "aggregate type " + std::string(type) + " declares no namespace \"" +
           std::string(ns.substr(0, 100)) + "\" (AggregateType::Reserves)";
  });
  Require(!given || *given == it->second, [&] {
    return "namespace \"" + it->first + "\" of aggregate type " + std::string(type) +
           " is declared " +
           (it->second == ReservationTenancy::kSystem ? "system-wide" : "per tenant") +
           "; a call names the other tenancy";
  });
  return it->second;
}

ReservationScope DecideScope::ScopeOf(const AggregateRef& owner, std::string_view ns,
                                      ReservationTenancy tenancy) {
  return ReservationScope{
      owner.context, owner.aggregate,
      tenancy == ReservationTenancy::kSystem ? std::string(kSystemTenant) : owner.tenant_id,
      std::string(ns)};
}

bool DecideScope::Reserve(std::string_view ns, std::string_view key,
                          std::optional<ReservationTenancy> given) {
  const ReservationTenancy tenancy = TenancyOf(declared_, self_.aggregate, ns, given);
  const std::string k(key);
  if (!reservations_.Reserve(ScopeOf(self_, ns, tenancy), k, self_, attempt_, ttl_)) return false;
  reserved_.push_back(KeyFact{std::string(ns), k, tenancy});
  return true;
}

void DecideScope::Release(std::string_view ns, std::string_view key,
                          std::optional<ReservationTenancy> given) {
  const ReservationTenancy tenancy = TenancyOf(declared_, self_.aggregate, ns, given);
  ValidateReservation(ScopeOf(self_, ns, tenancy), key, self_);
  released_.push_back(KeyFact{std::string(ns), std::string(key), tenancy});
}

void DecideScope::Cancel(std::string_view key) {
  Require(!key.empty(), "a timer's key is empty");
  TimerFact fact;
  fact.kind = TimerFact::Kind::kCancel;
  fact.key = std::string(key);
  timers_.push_back(std::move(fact));
}

EpochMillis DecideScope::Now() const { return clock_.NowMillis(); }

void DecideScope::ScheduleMessage(std::string_view key, EpochMillis due_at,
                                  const AggregateRef& target, std::string command_type,
                                  std::string body, TimerRule rule) {
  Require(!key.empty(), "a timer's key is empty");
  ValidateRef(target);
  Require(rule.max_attempts >= 1,
          [&] { return "timer \"" + std::string(key) + "\" allows no attempt"; });
  TimerFact fact;
  fact.kind = TimerFact::Kind::kSchedule;
  fact.key = std::string(key);
  fact.timer_id = NewId();
  fact.due_at = due_at;
  fact.target = target;
  fact.command_type = std::move(command_type);
  fact.body = std::move(body);
  fact.rule = std::move(rule);
  timers_.push_back(std::move(fact));
}

}  // namespace wow
