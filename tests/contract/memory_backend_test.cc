// The contract suites over the in-memory stores.
#include "contract/backends.h"
#include "store/memory/memory_stores.h"
#include "wow/store_wrappers.h"

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
      [](const BackendEnv& env, const std::string& context) {
        return Backend::ReadModels{NewMemoryEventLog(context, env.clock),
                                   NewMemoryReadModelStore()};
      },
      /*load_percent=*/100,
      [](const BackendEnv& env, const std::string& context) {
        memory::LogAndReservations stores = memory::NewLogAndReservations(context, env.clock);
        return Backend::KeyConfirmingLog{std::move(stores.log), std::move(stores.reservations)};
      },
  };
}

// The memory stores behind the forwarding wrappers: a wrapper that forwards every call keeps the
// contract of what it wraps.
Backend WrappedMemoryBackend() {
  Backend backend = MemoryBackend();
  backend.name = "WrappedMemory";
  backend.timers = [](const BackendEnv&, const std::string& context, int partitions) {
    return std::make_unique<TimerStoreWrapper>(NewMemoryTimerStore(context, partitions));
  };
  return backend;
}

INSTANTIATE_TEST_SUITE_P(Memory, ReservationStoreContract, ::testing::Values(MemoryBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Memory, ReservationStoreModel, ::testing::Values(MemoryBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Memory, KeyConfirmingLogContract, ::testing::Values(MemoryBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Memory, EventLogContract, ::testing::Values(MemoryBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Memory, ReadModelStoreContract, ::testing::Values(MemoryBackend()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Memory, TimerStoreContract,
                         ::testing::Values(MemoryBackend(), WrappedMemoryBackend()), BackendName());

}  // namespace
}  // namespace wow::contract
