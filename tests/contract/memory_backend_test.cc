// The contract suites over the in-memory stores.
#include "contract/backends.h"

namespace wow::contract {
namespace {

Backend MemoryBackend() {
  return Backend{
      "Memory",
      [](const BackendEnv& env) { return NewMemoryReservationStore(env.clock); },
      [](const BackendEnv& env, const std::string& context) {
        return NewMemoryEventLog(context, env.clock);
      },
      [](const BackendEnv&, const std::string& context, int partitions) {
        return NewMemoryTimerStore(context, partitions);
      },
  };
}

INSTANTIATE_TEST_SUITE_P(Memory, ReservationStoreContract, ::testing::Values(MemoryBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Memory, ReservationStoreModel, ::testing::Values(MemoryBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Memory, EventLogContract, ::testing::Values(MemoryBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Memory, TimerStoreContract, ::testing::Values(MemoryBackend()),
                         BackendName());

}  // namespace
}  // namespace wow::contract
