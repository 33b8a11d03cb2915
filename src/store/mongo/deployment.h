// MongoDeployment (declared in wow/mongo.h): one client pool, the executor that sends commands
// through it, the collections' format records, and what the deployment said of itself when
// opened. The stores built on it share it.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <memory>

#include "store/mongo/client_pool.h"
#include "store/mongo/collections.h"
#include "store/mongo/executor.h"
#include "wow/mongo.h"

namespace wow {

// What a `hello` reply says of the server that sent it: a replica-set member (its set's name),
// a mongos, or neither (a standalone server, which majority reads and writes cannot use).
struct HelloKind {
  std::string set_name;
  bool mongos = false;
  bool standalone() const { return set_name.empty() && !mongos; }
};
HelloKind ClassifyHello(const bson_t& hello);

class MongoDeployment {
 public:
  MongoDeployment(std::shared_ptr<mongo::ClientPool> pool, const MongoOptions& options,
                  MongoDeploymentInfo info)
      : pool_(std::move(pool)),
        info_(std::move(info)),
        executor_(pool_, info_.database, options),
        collections_(executor_, options.ddl,
                     info_.mongos && options.sharding == MongoOptions::Sharding::kAuto) {}

  const MongoDeploymentInfo& info() const { return info_; }
  const mongo::Executor& executor() const { return executor_; }
  mongo::Collections& collections() { return collections_; }

 private:
  std::shared_ptr<mongo::ClientPool> pool_;
  MongoDeploymentInfo info_;
  mongo::Executor executor_;
  mongo::Collections collections_;
};

}  // namespace wow
