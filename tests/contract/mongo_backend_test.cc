// The contract suites over the MongoDB stores: on the project's MongoDB TEST SERVER (a test double,
// in its interleaving mode, so concurrent writes race as on a real server), and on the real replica
// set WOW_TEST_MONGODB_URI names when it is set. Each store gets a database of its own. Where
// Node.js or the test server's packages are missing, the test-server backend skips with the
// reason.
#include "contract/backends.h"
#include "support/mongo_test_deployment.h"
#include "wow/mongo.h"

namespace wow::contract {
namespace {

using testing_support::MongoTestServer;

Backend MongoBackend(std::string name, std::function<std::optional<std::string>()> uri,
                     int load_percent) {
  return Backend{
      std::move(name),
      [uri](const BackendEnv& env) -> std::unique_ptr<ReservationStore> {
        const std::optional<std::string> at = uri();
        if (!at) return nullptr;
        return NewMongoReservationStore(testing_support::FreshMongoDeployment(*at), env.clock);
      },
      [uri](const BackendEnv& env, const std::string& context) -> std::unique_ptr<EventLog> {
        const std::optional<std::string> at = uri();
        if (!at) return nullptr;
        return NewMongoEventLog(testing_support::FreshMongoDeployment(*at), context, env.clock);
      },
      [uri](const BackendEnv&, const std::string& context,
            int partitions) -> std::unique_ptr<TimerStore> {
        const std::optional<std::string> at = uri();
        if (!at) return nullptr;
        return NewMongoTimerStore(testing_support::FreshMongoDeployment(*at), context, partitions);
      },
      [uri](const BackendEnv& env, const std::string& context) -> Backend::ReadModels {
        const std::optional<std::string> at = uri();
        if (!at) return {};
        std::shared_ptr<MongoDeployment> deployment = testing_support::FreshMongoDeployment(*at);
        return {NewMongoEventLog(deployment, context, env.clock),
                NewMongoReadModelStore(deployment, context)};
      },
      load_percent,
      nullptr,  // MongoDB's appends leave the keys to the processor and the subscription
  };
}

std::vector<Backend> MongoBackends() {
  std::vector<Backend> backends = {MongoBackend("MongoTestServer", []() -> std::optional<std::string> {
    if (MongoTestServer::Unavailable()) return std::nullopt;
    return testing_support::SharedMongoTestServer().uri();
  }, /*load_percent=*/10)};
  if (testing_support::RealMongoUri()) {
    backends.push_back(MongoBackend("MongoReplicaSet", testing_support::RealMongoUri, 100));
  }
  return backends;
}

INSTANTIATE_TEST_SUITE_P(Mongo, ReservationStoreContract, ::testing::ValuesIn(MongoBackends()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Mongo, ReservationStoreModel, ::testing::ValuesIn(MongoBackends()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Mongo, EventLogContract, ::testing::ValuesIn(MongoBackends()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Mongo, ReadModelStoreContract, ::testing::ValuesIn(MongoBackends()),
                         BackendName());
INSTANTIATE_TEST_SUITE_P(Mongo, TimerStoreContract, ::testing::ValuesIn(MongoBackends()),
                         BackendName());

}  // namespace
}  // namespace wow::contract
