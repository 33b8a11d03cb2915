// CatalogHttp: the eShop catalog's HTTP/JSON interface (docs/SERVICE.md lists the routes): a
// request's method, target, body and Idempotency-Key in, a reply out. It matches the route
// (http_routes.h), answers 404, 405 and OPTIONS itself, and hands the rest to the handlers
// (catalog_handlers.h), which validate, run commands and turn outcomes into replies. Every body is
// JSON; every error is {"code": "...", "message": "..."}; bad input gets a 4xx and writes nothing.
//
// Thread-safety: safe for concurrent use; Handle blocks on the store, so the HTTP server calls it
// off its I/O threads.
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

#include "catalog_handlers.h"
#include "http_message.h"
#include "http_routes.h"
#include "http_text.h"
#include "service_metrics.h"
#include "wow/command_processor.h"

namespace eshop {

struct CatalogHttpOptions {
  std::size_t max_body_bytes = 64 * 1024;  // larger bodies get 413
  // How many times a command is sent again, with the same request id, after an unknown outcome
  // or Error(kUnavailable); then the client gets 503 with Retry-After.
  int resend_attempts = 3;
  std::chrono::milliseconds resend_backoff{25};  // doubled per attempt
  // How long a command with wait=projected waits for the catalog projection; then 202.
  std::chrono::milliseconds projection_wait{5'000};
  // How long a draft ({"draft": true}) has to be published in before its timer expires it.
  std::chrono::milliseconds draft_time{std::chrono::hours(24 * 7)};
};

class CatalogHttp {
 public:
  // REQUIRES: `processor` outlives this object and has BrandType() and CategoryType() registered;
  // a runner applies CatalogProjection() to `read_models` (the lists read them); neither
  // `read_models` nor `metrics` is null. Construct it before the threads that call Handle start.
  CatalogHttp(wow::CommandProcessor& processor, std::shared_ptr<wow::ReadModelStore> read_models,
              std::shared_ptr<ServiceMetrics> metrics, CatalogHttpOptions options = {});
  ~CatalogHttp();

  CatalogHttp(const CatalogHttp&) = delete;
  CatalogHttp& operator=(const CatalogHttp&) = delete;

  // Answers `request` as read by the HTTP server: its Idempotency-Key header, when there is one
  // (two are 400; an empty one is 400 on a command), then Handle. Never throws but bad_alloc.
  HttpReply Serve(const HttpRequest& request);

  // Answers one request: `method`, the raw request target (path and query, still
  // percent-encoded), the body, and the Idempotency-Key header when there is one. Never throws.
  HttpReply Handle(std::string_view method, std::string_view target, std::string_view body,
                   std::optional<std::string_view> idempotency_key);

  ServiceMetrics& metrics() { return *metrics_; }

 private:
  HttpReply Dispatch(std::string_view method, std::string_view target, std::string_view body,
                     std::optional<std::string_view> idempotency_key);

  std::shared_ptr<ServiceMetrics> metrics_;
  std::size_t max_body_bytes_;
  Router router_;
  std::unique_ptr<CatalogHandlers> handlers_;
};

}  // namespace eshop
