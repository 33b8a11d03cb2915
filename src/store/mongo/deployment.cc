#include "store/mongo/deployment.h"

#include "wow/error.h"

namespace wow {

HelloKind ClassifyHello(const bson_t& hello) {
  HelloKind kind;
  if (const auto set_name = mongo::FindText(hello, "setName")) kind.set_name = *set_name;
  const auto msg = mongo::FindText(hello, "msg");
  kind.mongos = msg && *msg == "isdbgrid";
  return kind;
}

std::shared_ptr<MongoDeployment> OpenMongoDeployment(const std::string& uri,
                                                     const MongoOptions& options) {
  Require(options.max_time.count() > 0 && options.write_timeout.count() > 0 &&
              options.socket_timeout.count() > 0 && options.wait_queue_timeout.count() > 0,
          "MongoDB timeouts must be positive");
  auto pool = std::make_shared<mongo::ClientPool>(uri, options);
  MongoDeploymentInfo info;
  info.database = !options.database.empty()       ? options.database
                  : !pool->uri_database().empty() ? pool->uri_database()
                                                  : std::string("wow");
  mongo::RequireStorableText(info.database, "MongoDB database name");
  Require(
      info.database.size() <= 63 && info.database.find_first_of("/\\. \"$") == std::string::npos,
      [&] { return "MongoDB database name \"" + info.database + "\" is not valid"; });
  mongo::Executor probe(pool, info.database, options);
  const mongo::Bson hello = probe.RunAdminCommand(*mongo::BsonFromJson(R"({"hello": 1})"),
                                                  "asking the deployment what it is (hello)");
  const HelloKind kind = ClassifyHello(*hello);
  if (kind.standalone()) {
    throw Error(ErrorCode::kFailedPrecondition,
                "MongoDB: the server is a standalone, not a replica set or a mongos: Wow reads "
                "with readConcern majority and writes with w: majority, so that nothing it acts on "
                "can be rolled back, and only a replica set has a majority; start the server as a "
                "replica set (even one of one member, --replSet) and name it in the URI");
  }
  info.set_name = kind.set_name;
  info.mongos = kind.mongos;
  return std::make_shared<MongoDeployment>(std::move(pool), options, std::move(info));
}

const MongoDeploymentInfo& Describe(const MongoDeployment& deployment) { return deployment.info(); }

}  // namespace wow
