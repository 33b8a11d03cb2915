#include "support/mongo_test_server.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "wow/model.h"

extern char** environ;

namespace wow::testing_support {
namespace {

constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr auto kStopTimeout = std::chrono::seconds(10);
constexpr auto kPollInterval = std::chrono::milliseconds(20);

std::filesystem::path ServerDir() { return std::filesystem::path(WOW_SOURCE_DIR) / "tests" / "mongo_server"; }

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// True when an executable named `name` is in one of PATH's directories.
bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && ::access((std::filesystem::path(dir) / name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// Waits up to `timeout` for the child to exit; true when it did (and was reaped).
bool WaitForExit(pid_t pid, std::chrono::steady_clock::duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = ::waitpid(pid, nullptr, WNOHANG);
    if (done == pid || done < 0) return true;
    std::this_thread::sleep_for(kPollInterval);
  }
  return false;
}

// Stops the child: SIGTERM, then SIGKILL if it has not exited within kStopTimeout.
void Stop(pid_t pid) {
  ::kill(pid, SIGTERM);
  if (!WaitForExit(pid, kStopTimeout)) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

}  // namespace

std::optional<std::string> MongoTestServer::Unavailable() {
  if (!OnPath("node")) return "the MongoDB test server needs Node.js (`node` is not on PATH); run scripts/install-deps.sh";
  for (const char* package : {"bson", "mingo"}) {
    if (!std::filesystem::exists(ServerDir() / "node_modules" / package)) {
      return "the MongoDB test server's npm packages are not installed (" + (ServerDir() / "node_modules").string() +
             " lacks " + package + "); run scripts/install-deps.sh";
    }
  }
  return std::nullopt;
}

MongoTestServer::MongoTestServer(Options options)
    : log_path_(std::filesystem::temp_directory_path() / ("wow-mongo-test-server-" + NewId() + ".log")) {
  const std::string script = (ServerDir() / "server.js").string();
  std::vector<std::string> args = {"node", script, "--port", "0"};
  if (options.interleave_seed) {
    args.push_back("--interleave");
    args.push_back(std::to_string(*options.interleave_seed));
  }
  if (options.standalone) {
    args.push_back("--standalone");
    set_name_.clear();
  }
  if (options.mongos_shards) {
    args.push_back("--mongos");
    args.push_back(std::to_string(*options.mongos_shards));
    set_name_.clear();
  }
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const int spawned = ::posix_spawnp(&pid_, "node", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    throw std::runtime_error("cannot start the MongoDB test server (node " + script +
                             "): " + std::generic_category().message(spawned));
  }

  const std::regex listening(R"(listening on 127\.0\.0\.1:(\d+))");
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (true) {
    std::smatch match;
    const std::string log = ReadFile(log_path_);
    if (std::regex_search(log, match, listening)) {
      port_ = std::stoi(match[1].str());
      return;
    }
    const bool exited = ::waitpid(pid_, nullptr, WNOHANG) == pid_;
    if (exited || std::chrono::steady_clock::now() >= deadline) {
      if (!exited) Stop(pid_);
      throw std::runtime_error(std::string("the MongoDB test server ") + (exited ? "exited" : "did not listen within 30 s") +
                               " before listening; its log: " + log_path_.string() + "\n" + ReadFile(log_path_));
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

MongoTestServer::~MongoTestServer() { Stop(pid_); }

std::string MongoTestServer::uri() const {
  const std::string base = "mongodb://127.0.0.1:" + std::to_string(port_) + "/";
  return set_name_.empty() ? base : base + "?replicaSet=" + set_name_;
}

}  // namespace wow::testing_support
