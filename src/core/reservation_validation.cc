#include <ostream>

#include "wow/error.h"
#include "wow/reservation_store.h"

namespace wow {

std::string_view ReservationStateName(ReservationState state) {
  switch (state) {
    case ReservationState::kPending:
      return "PENDING";
    case ReservationState::kConfirmed:
      return "CONFIRMED";
  }
  return "UNKNOWN";
}

std::ostream& operator<<(std::ostream& out, ReservationState state) {
  return out << ReservationStateName(state);
}

void ValidateReservationKey(const ReservationScope& scope, std::string_view key) {
  ValidateTypeName(scope.context, "reservation scope's context");
  ValidateTypeName(scope.aggregate, "reservation scope's aggregate type");
  Require(scope.tenant_id.size() <= 256, "reservation scope's tenant is over 256 bytes");
  Require(!scope.ns.empty(), "reservation namespace is empty");
  Require(scope.ns.size() <= 512, "reservation namespace is over 512 bytes");
  Require(!key.empty(),
          [&] { return "reservation key is empty (namespace \"" + scope.ns + "\")"; });
  Require(key.size() <= kMaxReservationKeyBytes,
          [&] { return "reservation key is over 512 bytes (namespace \"" + scope.ns + "\")"; });
}

void ValidateReservation(const ReservationScope& scope, std::string_view key,
                         const AggregateRef& owner) {
  ValidateReservationKey(scope, key);
  ValidateRef(owner);
  Require(owner.context == scope.context && owner.aggregate == scope.aggregate, [&] {
    return "owner " + ToString(owner) + " is not of the scope's type " + scope.context + "/" +
           scope.aggregate;
  });
}

void ValidateReserve(const ReservationScope& scope, std::string_view key, const AggregateRef& owner,
                     std::string_view hold, std::chrono::milliseconds ttl) {
  ValidateReservation(scope, key, owner);
  Require(!hold.empty(), "reservation hold (attempt id) is empty");
  Require(ttl.count() > 0 && ttl <= kMaxReservationTtl, [&] {
    return "reservation ttl must be positive and at most 366 days, got " +
           std::to_string(ttl.count()) + " ms";
  });
}

void ValidateConfirm(const ReservationScope& scope, std::string_view key, const AggregateRef& owner,
                     Version version) {
  ValidateReservation(scope, key, owner);
  ValidateVersion(version);
  Require(version != kAnyVersion, "ANY_VERSION is for releases; confirm a stream's version");
}

void ValidateRelease(const ReservationScope& scope, std::string_view key, const AggregateRef& owner,
                     Version version) {
  ValidateReservation(scope, key, owner);
  ValidateVersion(version);
}

void ValidateAbandon(const ReservationScope& scope, std::string_view key, const AggregateRef& owner,
                     std::string_view hold) {
  ValidateReservation(scope, key, owner);
  Require(!hold.empty(), "reservation hold (attempt id) is empty");
}

}  // namespace wow
