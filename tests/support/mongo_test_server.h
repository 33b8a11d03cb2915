// MongoTestServer: a running instance of the project's MongoDB TEST SERVER (a test double, not
// MongoDB: tests/mongo_server/server.js, Node.js), started as a child process on a free loopback
// port for the tests of the MongoDB stores. The constructor starts
// `node <repo>/tests/mongo_server/server.js --port 0 [--interleave SEED]`, sends its output to a
// log file, and returns once the server's "listening" line names its port; the destructor sends
// SIGTERM and waits for it to exit. The server reports a one-node replica set; its data lives in
// its memory and dies with it. Failure messages name LogPath(). Not thread-safe to construct or
// destroy concurrently with use; the accessors are const and safe from any thread; neither
// copyable nor movable (it owns the child process).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace wow::testing_support {

class MongoTestServer {
 public:
  struct Options {
    // Seed of the interleaving mode (writes yield between reading and writing), or none.
    std::optional<std::uint32_t> interleave_seed;
    // A standalone server (`--standalone`): hello reports no replica set.
    bool standalone = false;
    // A mongos of this many shards (`--mongos N`, sharding.js), or none: hello answers as a
    // mongos, and the sharding commands keep config.chunks.
    std::optional<int> mongos_shards;
  };

  // Why the test server cannot run here ("node" not on PATH, or its npm packages not installed
  // by scripts/install-deps.sh), or nullopt when it can. Tests skip with this reason.
  static std::optional<std::string> Unavailable();

  // Starts the server and waits (at most 30 s) until it listens. Throws std::runtime_error,
  // naming the log file, when it cannot start or exits first.
  MongoTestServer() : MongoTestServer(Options{}) {}
  explicit MongoTestServer(Options options);
  // Sends SIGTERM and waits for the server to exit (SIGKILL after 10 s). Keeps the log file.
  ~MongoTestServer();
  MongoTestServer(const MongoTestServer&) = delete;
  MongoTestServer& operator=(const MongoTestServer&) = delete;

  // The port the server listens on, on 127.0.0.1.
  int port() const { return port_; }
  // The replica set name the server reports ("rs0").
  const std::string& set_name() const { return set_name_; }
  // A connection string for the server: mongodb://127.0.0.1:PORT/?replicaSet=rs0 (a standalone's
  // names no replica set).
  std::string uri() const;
  // The file the server's output (one line per command) goes to.
  const std::filesystem::path& log_path() const { return log_path_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string set_name_ = "rs0";  // empty for a standalone
  std::filesystem::path log_path_;
};

}  // namespace wow::testing_support
