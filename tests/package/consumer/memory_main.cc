// The in-memory stores, as a user's program links them: exits non-zero when a check fails.
#include <iostream>

#include <wow/event_log.h>
#include <wow/reservation_store.h>

#include "brand.h"

int main() {
  auto clock = std::make_shared<wow::ManualClock>();
  std::shared_ptr<wow::EventLog> log = wow::NewMemoryEventLog(consumer::kContext, clock);
  std::shared_ptr<wow::ReservationStore> keys = wow::NewMemoryReservationStore(clock);
  const int failures = consumer::CheckBrands(log, keys, clock);
  std::cout << (failures == 0 ? "consumer_memory: ok\n" : "consumer_memory: FAILED\n");
  return failures == 0 ? 0 : 1;
}
