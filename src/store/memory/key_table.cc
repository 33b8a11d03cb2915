#include "store/memory/key_table.h"

namespace wow::memory {

std::optional<Reservation> KeyTable::Find(const ReservationScope& scope,
                                          const std::string& key) const {
  const Keys* keys = KeysOf(scope);
  if (keys == nullptr) return std::nullopt;
  auto it = keys->find(key);
  if (it == keys->end()) return std::nullopt;
  return it->second;
}

std::vector<Reservation> KeyTable::List(const ReservationScope& scope,
                                        const std::string& after_key, int limit) const {
  std::vector<Reservation> page;
  const Keys* keys = KeysOf(scope);
  if (keys == nullptr) return page;
  for (auto it = keys->upper_bound(after_key);
       it != keys->end() && static_cast<int>(page.size()) < limit; ++it) {
    page.push_back(it->second);
  }
  return page;
}

bool KeyTable::Apply(const ReservationScope& scope, const std::string& key,
                     const core::ReservationOp& op, EpochMillis now) {
  auto in_scope = scopes_.find(scope);
  std::optional<Reservation> current;
  Keys::iterator it;
  if (in_scope != scopes_.end()) {
    it = in_scope->second.find(key);
    if (it != in_scope->second.end()) current = it->second;
  }
  core::ReservationOutcome outcome = core::ApplyReservationRule(current, key, op, now);
  switch (outcome.write) {
    case core::ReservationOutcome::Write::kNone:
      break;
    case core::ReservationOutcome::Write::kStore:
      if (in_scope == scopes_.end()) in_scope = scopes_.try_emplace(scope).first;
      in_scope->second.insert_or_assign(key, std::move(outcome.stored));
      break;
    case core::ReservationOutcome::Write::kDelete:  // the rules delete only a stored reservation
      in_scope->second.erase(it);
      if (in_scope->second.empty()) scopes_.erase(in_scope);
      break;
  }
  return outcome.answer;
}

const KeyTable::Keys* KeyTable::KeysOf(const ReservationScope& scope) const {
  auto it = scopes_.find(scope);
  return it == scopes_.end() ? nullptr : &it->second;
}

}  // namespace wow::memory
