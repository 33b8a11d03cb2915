#include "catalog_http.h"

#include <spdlog/spdlog.h>

#include "catalog.h"
#include "wow/error.h"
#include "wow/name_key.h"

namespace eshop {

CatalogHttp::CatalogHttp(wow::CommandProcessor& processor,
                         std::shared_ptr<wow::ReadModelStore> read_models,
                         std::shared_ptr<ServiceMetrics> metrics, CatalogHttpOptions options)
    : metrics_(std::move(metrics)),
      max_body_bytes_(options.max_body_bytes),
      router_(CatalogKinds()) {
  wow::Require(metrics_ != nullptr, "CatalogHttp needs metrics");
  // ICU builds its data on first use; build it here, before the server's threads exist, so they
  // all find it built (and ThreadSanitizer sees why).
  wow::MakeNameKey("Warm-up");
  LegacyNameKey("Warm-up");
  handlers_ = std::make_unique<CatalogHandlers>(
      processor, std::move(read_models), *metrics_,
      ResendPolicy{options.resend_attempts, options.resend_backoff, options.projection_wait,
                   options.draft_time});
}

CatalogHttp::~CatalogHttp() = default;

HttpReply CatalogHttp::Handle(std::string_view method, std::string_view target,
                              std::string_view body,
                              std::optional<std::string_view> idempotency_key) {
  try {
    return Dispatch(method, target, body, idempotency_key);
  } catch (const wow::Error& e) {
    return CatalogHandlers::FromError(e);
  } catch (const std::exception& e) {
    spdlog::error("{} {} failed: {}", method, target, e.what());
    return ErrorReply(500, "INTERNAL", std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("{} {} failed with an unknown exception", method, target);
    return ErrorReply(500, "INTERNAL", "internal error");
  }
}

HttpReply CatalogHttp::Dispatch(std::string_view method, std::string_view target,
                                std::string_view body,
                                std::optional<std::string_view> idempotency_key) {
  if (body.size() > max_body_bytes_) {
    return ErrorReply(413, "BODY_TOO_LARGE",
                      "a request body has at most " + std::to_string(max_body_bytes_) + " bytes");
  }
  const RouteMatch match = router_.Match(method, target);
  switch (match.outcome) {
    case RouteMatch::Outcome::kBadPath:
      return ErrorReply(400, "INVALID_PATH", match.message);
    case RouteMatch::Outcome::kNoRoute:
      return ErrorReply(404, "NOT_FOUND", "no route for " + match.path);
    case RouteMatch::Outcome::kOptions: {
      HttpReply reply;
      reply.status = 204;
      reply.content_type.clear();
      reply.headers.emplace_back("Allow", match.allow);
      return reply;
    }
    case RouteMatch::Outcome::kMethodNotAllowed: {
      HttpReply reply = ErrorReply(
          405, "METHOD_NOT_ALLOWED",
          std::string(method) + " is not allowed on " + match.path + "; allowed: " + match.allow);
      reply.headers.emplace_back("Allow", match.allow);
      return reply;
    }
    case RouteMatch::Outcome::kMatched:
      break;
  }
  return handlers_->Serve(match.route, body, idempotency_key);
}

HttpReply CatalogHttp::Serve(const HttpRequest& request) {
  const std::vector<std::string_view> keys = request.Values("Idempotency-Key");
  if (keys.size() > 1) {
    return ErrorReply(400, "INVALID_IDEMPOTENCY_KEY", "a request has one Idempotency-Key");
  }
  std::optional<std::string_view> key;
  if (!keys.empty()) key = keys.front();
  return Handle(request.method, request.target, request.body, key);
}

}  // namespace eshop
