// CatalogHttp: the eShop catalog's HTTP/JSON interface (docs/SERVICE.md lists the routes).
//
// It turns requests into commands for a CommandProcessor on which BrandType() and CategoryType()
// are registered, and the processor's outcomes into responses. Every body is JSON; every error is
// {"code": "...", "message": "..."}. Bad input (malformed JSON, wrong types, an unknown route or
// method, an over-long or malformed tenant, id, name or Idempotency-Key) gets a 4xx and writes
// nothing.
//
// An Idempotency-Key makes a command idempotent: it is the command's request id, so a repeat that
// finds the original stream in the log appends nothing and answers what the original answered,
// rebuilt from that stream (and says so in the header Idempotent-Replayed: true). The key is
// unique per aggregate type and tenant; a key reused for another command is refused (422).
// Commands that changed nothing (rejected, no-op) leave no trace, so their repeat is decided
// again. When the log cannot say whether an append landed (an unknown outcome, the store busy),
// the command is sent again with the same request id a few times before the client gets a 503.
//
// Thread-safety: safe for concurrent use; Handle runs on the HTTP server's worker threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service_metrics.h"
#include "wow/command_processor.h"

namespace httplib {
class Server;
}

namespace eshop {

struct CatalogHttpOptions {
  std::size_t max_body_bytes = 64 * 1024;  // larger bodies get 413
  // How many times a command is sent again, with the same request id, after an unknown outcome
  // or Error(kUnavailable); then the client gets 503 with Retry-After.
  int resend_attempts = 3;
  std::chrono::milliseconds resend_backoff{25};  // doubled per attempt
};

// A response before it is written.
struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;  // JSON text (or Prometheus text for /metrics); empty for 204
  std::vector<std::pair<std::string, std::string>> headers;
};

// The longest tenant and aggregate id a route takes; both are 1 or more of [A-Za-z0-9._~-].
inline constexpr std::size_t kMaxTenantBytes = 64;
inline constexpr std::size_t kMaxIdBytes = 128;
// The longest Idempotency-Key: 1 or more visible ASCII characters (0x21 to 0x7e).
inline constexpr std::size_t kMaxIdempotencyKeyBytes = 200;

class CatalogHttp {
 public:
  // REQUIRES: `processor` outlives this object and has BrandType() and CategoryType() registered;
  // `metrics` is not null. Construct it before the threads that call Handle start.
  CatalogHttp(wow::CommandProcessor& processor, std::shared_ptr<ServiceMetrics> metrics,
              CatalogHttpOptions options = {});
  ~CatalogHttp();

  CatalogHttp(const CatalogHttp&) = delete;
  CatalogHttp& operator=(const CatalogHttp&) = delete;

  // Registers every route on `server`, with its body limit, an error handler that gives httplib's
  // own errors (400, 404, 413, 414, ...) a JSON body, an exception handler and a request counter.
  // REQUIRES: this object outlives the server's last request.
  void Register(httplib::Server& server);

  // Answers one request: `method`, the raw request target (path and query, still
  // percent-encoded), the body, and the Idempotency-Key header when there is one. Never throws.
  HttpReply Handle(std::string_view method, std::string_view target, std::string_view body,
                   std::optional<std::string_view> idempotency_key);

  ServiceMetrics& metrics() { return *metrics_; }

 private:
  class Impl;
  std::shared_ptr<ServiceMetrics> metrics_;
  std::size_t max_body_bytes_;
  std::unique_ptr<Impl> impl_;
};

// Sets the listen backlog of `server`'s bound socket (call after bind_to_port). httplib 0.11
// listens with a backlog of 5, so a burst of new connections overflows the accept queue and some
// are reset. Returns false when the server is not bound or listen() fails.
bool SetListenBacklog(httplib::Server& server, int backlog);

// Makes `server` bind without SO_REUSEPORT (which httplib sets), so a port another process
// listens on is refused instead of shared. Call before binding.
void RefuseSharedPorts(httplib::Server& server);

// The JSON error body {"code": code, "message": message}.
nlohmann::json ErrorBody(std::string_view code, std::string_view message);

}  // namespace eshop
