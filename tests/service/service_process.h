// ServiceProcess: a wow-catalog process started for a test, and small HTTP helpers to drive it.
//
// The binary is the wow-catalog built beside the tests, or $WOW_CATALOG_BINARY when set (to hold
// another build to the same tests). The process listens on a free loopback port (--listen
// 127.0.0.1:0); the constructor reads the port from the line the service prints when it listens.
// Its stderr goes to a file beside the database (Log() reads it, for failure messages). The
// destructor kills the process (SIGKILL) when it still runs, and the child dies with the test
// process too (PR_SET_PDEATHSIG).
//
// Thread-safety: a ServiceProcess belongs to one thread; the HTTP helpers are safe for concurrent
// use (each call opens its own connection).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace wow::service_test {

class ServiceProcess {
 public:
  // Starts the service on the store `db` (a path, or a store URI) with `extra` flags, and waits
  // until it listens.
  // Fails the test (ADD_FAILURE) and leaves port() at 0 when it does not start in time.
  explicit ServiceProcess(std::string db, std::vector<std::string> extra = {});
  ~ServiceProcess();
  ServiceProcess(const ServiceProcess&) = delete;
  ServiceProcess& operator=(const ServiceProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // Sends `signal` to the process.
  void Signal(int signal) const;
  // Waits up to `timeout` for the process to exit; its wait status, or nullopt on a timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  // SIGKILL, then waits for it.
  void Kill();

  // What the process wrote to stderr so far.
  std::string Log() const;

  // Starts the binary with `args` and waits for it to exit; its exit code (-1 when it did not
  // exit in `timeout`) and its stderr in `log`.
  static int RunToExit(const std::vector<std::string>& args, std::string& log,
                       std::chrono::milliseconds timeout);

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// A response as the tests see it.
struct Reply {
  int status = 0;  // 0 when the request failed (no connection, reset, timeout)
  std::string body;
  nlohmann::json json;  // the body parsed; discarded when it is not JSON
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string error;                                // why the request failed, when status is 0

  std::string Header(const std::string& name) const;
  // "status body", for assertion messages.
  std::string Describe() const;
};

// Sends one HTTP/1.1 request on a fresh connection (Connection: close) and reads the response.
// `path` is sent as given (already percent-encoded). A body is sent with Content-Type
// application/json and its Content-Length (0 for an empty body on POST and PUT). The tests speak
// HTTP over plain sockets, byte for byte what they mean to send.
Reply Send(int port, const std::string& method, const std::string& path,
           const std::string& body = "",
           const std::vector<std::pair<std::string, std::string>>& headers = {});

// Writes `request` as it is on a fresh connection and reads the answer until the server closes
// it or its Content-Length is complete; for requests no client would send.
Reply SendRaw(int port, const std::string& request);

// `text` percent-encoded for a path segment (everything but unreserved characters).
std::string PercentEncode(const std::string& text);

// What the log of the catalog in the store `db` (a path or a store URI) holds, read directly
// from the store.
struct LogSummary {
  long long streams = 0;  // every stream of every partition
  // For one tenant and aggregate type: aggregate id -> its current name.
  std::map<std::string, std::string> names;
};
LogSummary ReadLog(const std::string& db, const std::string& aggregate = "brand",
                   const std::string& tenant = "");

}  // namespace wow::service_test
