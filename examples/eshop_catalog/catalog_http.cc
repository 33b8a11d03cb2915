#include "catalog_http.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "catalog.h"
#include "wow/error.h"

namespace eshop {

CatalogHttp::CatalogHttp(wow::CommandProcessor& processor, std::shared_ptr<ServiceMetrics> metrics,
                         CatalogHttpOptions options)
    : metrics_(std::move(metrics)),
      max_body_bytes_(options.max_body_bytes),
      router_(CatalogKinds()) {
  wow::Require(metrics_ != nullptr, "CatalogHttp needs metrics");
  // ICU builds its normaliser on first use; build it here, before the server's threads exist, so
  // they all find it built (and ThreadSanitizer sees why).
  NameKey("Warm-up");
  handlers_ = std::make_unique<CatalogHandlers>(
      processor, *metrics_, ResendPolicy{options.resend_attempts, options.resend_backoff});
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

namespace {

void Write(const HttpReply& reply, httplib::Response& res) {
  res.status = reply.status;
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  if (!reply.content_type.empty()) res.set_content(reply.body, reply.content_type);
}

// The JSON error of a response httplib made itself (no route matched its method, a malformed
// request, a body over the limit, ...).
std::pair<std::string_view, std::string> OwnError(const httplib::Request& req, int& status,
                                                  size_t max_body) {
  static const std::array<std::string_view, 7> kMethods = {"GET",    "HEAD",  "POST",   "PUT",
                                                           "DELETE", "PATCH", "OPTIONS"};
  const bool known_method =
      std::find(kMethods.begin(), kMethods.end(), req.method) != kMethods.end();
  if ((status == 400 || status == 404) && !req.method.empty() && !known_method &&
      !req.target.empty()) {
    status = 405;
  }
  switch (status) {
    case 400:
      return {"BAD_REQUEST", "the request is not well-formed HTTP/1.1"};
    case 404:
      return {"NOT_FOUND", "no route for " + req.path};
    case 405:
      return {"METHOD_NOT_ALLOWED", "the method " + req.method + " is not supported"};
    case 413:
      return {"BODY_TOO_LARGE",
              "a request body has at most " + std::to_string(max_body) + " bytes"};
    case 414:
      return {"URI_TOO_LONG", "the request target is too long"};
    case 416:
      return {"RANGE_NOT_SATISFIABLE", "ranges are not supported"};
    default:
      break;
  }
  if (status >= 500) return {"INTERNAL", "internal error"};
  return {"HTTP_" + std::to_string(status), "the request was refused"};
}

}  // namespace

namespace {

// Reaches httplib::Server's listening socket, which it keeps protected.
struct ServerSocket : httplib::Server {
  static socket_t Of(httplib::Server& server) {
    return (server.*(&ServerSocket::svr_sock_)).load();
  }
};

}  // namespace

bool SetListenBacklog(httplib::Server& server, int backlog) {
  const socket_t socket = ServerSocket::Of(server);
  return socket != INVALID_SOCKET && ::listen(socket, backlog) == 0;
}

void RefuseSharedPorts(httplib::Server& server) {
  server.set_socket_options([](socket_t socket) {
    const int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
}

void CatalogHttp::Register(httplib::Server& server) {
  const size_t max_body = max_body_bytes_;
  server.set_payload_max_length(max_body);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<std::string_view> key;
    std::string key_value;
    const size_t keys = req.get_header_value_count("Idempotency-Key");
    if (keys > 1) {
      Write(ErrorReply(400, "INVALID_IDEMPOTENCY_KEY", "a request has one Idempotency-Key"), res);
      return;
    }
    if (keys == 1) {
      key_value = req.get_header_value("Idempotency-Key");
      key = key_value;
    }
    Write(Handle(req.method, req.target, req.body, key), res);
  };
  // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 6.3), but httplib
  // 0.11 waits for one on POST, PUT and PATCH until its read timeout and then answers 400. Such
  // requests (curl -XPOST .../restore) are answered here, before httplib reads.
  server.set_pre_routing_handler([handler](const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    handler(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  server.Get(".*", handler);
  server.Post(".*", handler);
  server.Put(".*", handler);
  server.Delete(".*", handler);
  server.Patch(".*", handler);
  server.Options(".*", handler);
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [max_body](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        int status = res.status;
        auto [code, message] = OwnError(req, status, max_body);
        res.status = status;
        res.set_content(DumpJson(ErrorBody(code, message)), "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res,
                                  std::exception_ptr error) {
    std::string what = "unknown exception";
    try {
      if (error) std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("{} {} failed: {}", req.method, req.target, what);
    res.status = 500;
    res.set_content(DumpJson(ErrorBody("INTERNAL", "internal error: " + what)), "application/json");
  });
  server.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics_->CountHttp(req.method, res.status);
    spdlog::debug("{} {} -> {}", req.method, req.target, res.status);
  });
}

}  // namespace eshop
