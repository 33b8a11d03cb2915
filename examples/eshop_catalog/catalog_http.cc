#include "catalog_http.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <functional>
#include <mutex>
#include <thread>

#include "catalog.h"
#include "wow/error.h"
#include "wow/incidents.h"

namespace eshop {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpReply JsonReply(int status, const json& body) {
  HttpReply reply;
  reply.status = status;
  reply.body = Dump(body);
  return reply;
}

HttpReply ErrorReply(int status, std::string_view code, std::string_view message) {
  return JsonReply(status, ErrorBody(code, message));
}

// `s` with its %XX escapes decoded; nullopt when an escape is malformed. '+' stays '+': this is
// a path, not a form.
std::optional<std::string> PercentDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int high = hex(s[i + 1]);
    const int low = hex(s[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    char32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      code = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      code = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(s[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    if ((extra == 2 && code < 0x800) || (extra == 3 && code < 0x10000) || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// Whether valid UTF-8 `s` holds a control character: C0, DEL or C1.
bool HasControlCharacter(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) return true;
  }
  return false;
}

// Whether `s` is 1 to `max` characters of [A-Za-z0-9._~-], the characters of a tenant or an id.
bool IsIdentifier(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '~' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsValidIdempotencyKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyBytes) return false;
  for (char c : key) {
    if (c < 0x21 || c > 0x7E) return false;
  }
  return true;
}

// One of the two named aggregate types, with everything a route needs to know of it.
struct NamedKind {
  std::string aggregate;   // "brand"
  std::string noun;        // "brand", for messages
  std::string collection;  // "brands", the path segment
  std::string names;       // "brand-names", the path segment of name lookups
  std::string ns;          // the namespace its names are reserved in
  std::string created;     // the event type of a create
  std::string renamed;     // the event type of a rename
  std::function<wow::CommandMessage(const std::string&)> create;
  std::function<wow::CommandMessage(const std::string&)> rename;
};

template <typename Create, typename Rename, typename Created, typename Renamed>
NamedKind MakeKind(std::string aggregate, std::string collection, std::string names,
                   std::string_view ns) {
  NamedKind kind;
  kind.aggregate = aggregate;
  kind.noun = aggregate;
  kind.collection = std::move(collection);
  kind.names = std::move(names);
  kind.ns = std::string(ns);
  kind.created = std::string(Created::kType);
  kind.renamed = std::string(Renamed::kType);
  kind.create = [](const std::string& name) { return wow::CommandMessage::Of(Create{name}); };
  kind.rename = [](const std::string& name) { return wow::CommandMessage::Of(Rename{name}); };
  return kind;
}

enum class Action { kHealth, kMetrics, kCreate, kGet, kRename, kDelete, kRestore, kLookup };

std::string_view CommandName(Action action) {
  switch (action) {
    case Action::kCreate:
      return "create";
    case Action::kRename:
      return "rename";
    case Action::kDelete:
      return "delete";
    case Action::kRestore:
      return "restore";
    default:
      return "none";
  }
}

// A request matched to a route: what to do and the decoded path parameters.
struct Route {
  Action action = Action::kHealth;
  const NamedKind* kind = nullptr;
  std::string tenant;
  std::string id;    // kGet, kRename, kDelete, kRestore
  std::string name;  // kLookup
};

// The name of the event `record` (a BrandCreated, CategoryRenamed, ... body); "" without one.
std::string NameOf(const wow::EventRecord& record) {
  const json body = json::parse(record.body, nullptr, false);
  if (body.is_object() && body.contains("name") && body["name"].is_string()) {
    return body["name"].get<std::string>();
  }
  return "";
}

}  // namespace

json ErrorBody(std::string_view code, std::string_view message) {
  return json{{"code", code}, {"message", message}};
}

class CatalogHttp::Impl {
 public:
  Impl(wow::CommandProcessor& processor, ServiceMetrics& metrics, CatalogHttpOptions options)
      : processor_(processor), metrics_(metrics), options_(options) {
    kinds_.push_back(MakeKind<CreateBrand, RenameBrand, BrandCreated, BrandRenamed>(
        "brand", "brands", "brand-names", kBrandNames));
    kinds_.push_back(MakeKind<CreateCategory, RenameCategory, CategoryCreated, CategoryRenamed>(
        "category", "categories", "category-names", kCategoryNames));
  }

  HttpReply Handle(std::string_view method, std::string_view target, std::string_view body,
                   std::optional<std::string_view> idempotency_key) {
    try {
      return Dispatch(method, target, body, idempotency_key);
    } catch (const wow::Error& e) {
      return FromError(e);
    } catch (const std::exception& e) {
      spdlog::error("{} {} failed: {}", method, target, e.what());
      return ErrorReply(500, "INTERNAL", std::string("internal error: ") + e.what());
    } catch (...) {
      spdlog::error("{} {} failed with an unknown exception", method, target);
      return ErrorReply(500, "INTERNAL", "internal error");
    }
  }

 private:
  HttpReply Dispatch(std::string_view method, std::string_view target, std::string_view body,
                     std::optional<std::string_view> idempotency_key) {
    if (body.size() > options_.max_body_bytes) {
      return ErrorReply(
          413, "BODY_TOO_LARGE",
          "a request body has at most " + std::to_string(options_.max_body_bytes) + " bytes");
    }
    const std::string_view path = target.substr(0, target.find('?'));
    if (path.empty() || path.front() != '/') {
      return ErrorReply(400, "INVALID_PATH", "the request target must be a path starting with /");
    }
    std::vector<std::string> segments;
    for (size_t begin = 1;;) {
      const size_t end = path.find('/', begin);
      std::optional<std::string> segment =
          PercentDecode(path.substr(begin, end == std::string_view::npos ? end : end - begin));
      if (!segment) {
        return ErrorReply(400, "INVALID_PATH", "the path has a malformed percent-encoding");
      }
      segments.push_back(std::move(*segment));
      if (end == std::string_view::npos) break;
      begin = end + 1;
    }

    // Match the path, then the method.
    Route route;
    const std::vector<std::pair<std::string_view, Action>> methods = Match(segments, route);
    if (methods.empty()) {
      return ErrorReply(404, "NOT_FOUND", "no route for " + std::string(path));
    }
    std::string allow;
    bool found = false;
    for (const auto& [allowed, action] : methods) {
      allow += (allow.empty() ? "" : ", ") + std::string(allowed);
      if (allowed == "GET") allow += ", HEAD";
      if (method == allowed || (method == "HEAD" && allowed == "GET")) {
        route.action = action;
        found = true;
      }
    }
    allow += ", OPTIONS";
    if (method == "OPTIONS") {
      HttpReply reply;
      reply.status = 204;
      reply.content_type.clear();
      reply.headers.emplace_back("Allow", allow);
      return reply;
    }
    if (!found) {
      HttpReply reply = ErrorReply(
          405, "METHOD_NOT_ALLOWED",
          std::string(method) + " is not allowed on " + std::string(path) + "; allowed: " + allow);
      reply.headers.emplace_back("Allow", allow);
      return reply;
    }

    switch (route.action) {
      case Action::kHealth:
        return Health();
      case Action::kMetrics: {
        HttpReply reply;
        reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
        reply.body = metrics_.Render();
        return reply;
      }
      default:
        break;
    }

    if (!IsIdentifier(route.tenant, kMaxTenantBytes)) {
      return ErrorReply(400, "INVALID_TENANT",
                        "a tenant is 1 to " + std::to_string(kMaxTenantBytes) +
                            " characters of A-Z, a-z, 0-9, '.', '_', '~' and '-'");
    }
    if (route.action != Action::kCreate && route.action != Action::kLookup &&
        !IsIdentifier(route.id, kMaxIdBytes)) {
      return ErrorReply(400, "INVALID_ID",
                        "an id is 1 to " + std::to_string(kMaxIdBytes) +
                            " characters of A-Z, a-z, 0-9, '.', '_', '~' and '-'");
    }
    const NamedKind& kind = *route.kind;
    const wow::AggregateRef ref{std::string(kContext), kind.aggregate, route.tenant,
                                route.action == Action::kCreate ? wow::NewId() : route.id};

    if (route.action == Action::kGet) return Get(kind, ref);
    if (route.action == Action::kLookup) return Lookup(kind, route.tenant, route.name);

    // The commands.
    if (idempotency_key && !IsValidIdempotencyKey(*idempotency_key)) {
      return ErrorReply(400, "INVALID_IDEMPOTENCY_KEY",
                        "an Idempotency-Key is 1 to " + std::to_string(kMaxIdempotencyKeyBytes) +
                            " visible ASCII characters");
    }
    std::optional<std::string> name;
    if (route.action == Action::kCreate || route.action == Action::kRename) {
      HttpReply refused;
      name = NameFromBody(body, refused);
      if (!name) return refused;
    }
    wow::CommandMessage command;
    switch (route.action) {
      case Action::kCreate:
        command = kind.create(*name);
        break;
      case Action::kRename:
        command = kind.rename(*name);
        break;
      case Action::kDelete:
        command = wow::CommandMessage::Of(wow::DeleteAggregate{});
        break;
      default:
        command = wow::CommandMessage::Of(wow::RestoreAggregate{});
        break;
    }
    std::optional<std::string> key;
    if (idempotency_key) key = std::string(*idempotency_key);
    return Run(kind, route.action, ref, command, key, name);
  }

  // The methods the path of `segments` takes, each with its action (none: no such route); fills
  // the route's kind and path parameters.
  std::vector<std::pair<std::string_view, Action>> Match(const std::vector<std::string>& segments,
                                                         Route& route) const {
    std::vector<std::pair<std::string_view, Action>> methods;
    if (segments.size() == 1 && segments[0] == "healthz") {
      methods = {{"GET", Action::kHealth}};
    } else if (segments.size() == 1 && segments[0] == "metrics") {
      methods = {{"GET", Action::kMetrics}};
    } else if (segments.size() >= 3 && segments[0] == "tenants") {
      route.tenant = segments[1];
      for (const NamedKind& kind : kinds_) {
        if (segments[2] == kind.collection) {
          route.kind = &kind;
          if (segments.size() == 3) {
            methods = {{"POST", Action::kCreate}};
          } else if (!segments[3].empty()) {  // a trailing slash names nothing
            route.id = segments[3];
            if (segments.size() == 4) {
              methods = {{"GET", Action::kGet}, {"DELETE", Action::kDelete}};
            } else if (segments.size() == 5 && segments[4] == "name") {
              methods = {{"PUT", Action::kRename}};
            } else if (segments.size() == 5 && segments[4] == "restore") {
              methods = {{"POST", Action::kRestore}};
            }
          }
        } else if (segments[2] == kind.names && segments.size() == 4) {
          route.kind = &kind;
          route.name = segments[3];
          methods = {{"GET", Action::kLookup}};
        }
      }
    }
    return methods;
  }

  // The "name" of a command's JSON body; nullopt, with `refused` set, when the body is not a JSON
  // object with a string "name" free of control characters.
  static std::optional<std::string> NameFromBody(std::string_view body, HttpReply& refused) {
    const json parsed = json::parse(body.begin(), body.end(), nullptr, false);
    if (parsed.is_discarded()) {
      refused = ErrorReply(400, "MALFORMED_JSON", "the body is not well-formed JSON (UTF-8)");
      return std::nullopt;
    }
    if (!parsed.is_object()) {
      refused =
          ErrorReply(400, "INVALID_BODY", "the body must be a JSON object: {\"name\": \"...\"}");
      return std::nullopt;
    }
    auto it = parsed.find("name");
    if (it == parsed.end()) {
      refused = ErrorReply(400, "INVALID_BODY", "the body has no \"name\"");
      return std::nullopt;
    }
    if (!it->is_string()) {
      refused = ErrorReply(400, "INVALID_BODY", "\"name\" must be a string");
      return std::nullopt;
    }
    std::string name = it->get<std::string>();
    if (HasControlCharacter(TrimName(name))) {
      refused = ErrorReply(400, "INVALID_NAME", "a name must not contain control characters");
      return std::nullopt;
    }
    return name;
  }

  // 200 while the store answers reads and no key incident happened; 503 naming the last incident
  // otherwise (two aggregates may hold one key: an operator must look).
  HttpReply Health() {
    processor_.log().Head(0);  // the store answers reads
    if (const std::uint64_t incidents = wow::KeyIncidentCount(); incidents > 0) {
      const std::optional<wow::KeyIncident> last = wow::LastKeyIncident();
      return JsonReply(503, json{{"status", "key_incident"},
                                 {"key_incidents", incidents},
                                 {"last", last ? wow::Describe(*last) : std::string()}});
    }
    return JsonReply(200, json{{"status", "ok"}});
  }

  HttpReply Get(const NamedKind& kind, const wow::AggregateRef& ref) {
    const wow::LoadedAggregate loaded = processor_.Load(ref);
    if (loaded.version == 0) return NotFound(kind, ref);
    return JsonReply(200, json{{"id", ref.id},
                               {"name", loaded.As<Named>().name},
                               {"version", loaded.version},
                               {"deleted", loaded.deleted}});
  }

  HttpReply Lookup(const NamedKind& kind, const std::string& tenant, const std::string& name) {
    if (!IsValidUtf8(name) || HasControlCharacter(name)) {
      return ErrorReply(400, "INVALID_NAME",
                        "a name is UTF-8 text without control characters (percent-encoded in "
                        "the path)");
    }
    const std::string trimmed = TrimName(name);
    if (trimmed.empty())
      return ErrorReply(400, std::string(rejections::kBlankName), "a name is not blank");
    const std::string key = NameKey(name);
    if (trimmed.size() > kMaxNameBytes || key.size() > 512) {
      return ErrorReply(400, std::string(rejections::kNameTooLong),
                        "a name has at most " + std::to_string(kMaxNameBytes) + " bytes");
    }
    const wow::ReservationScope scope{std::string(kContext), kind.aggregate, tenant, kind.ns};
    const std::optional<wow::Reservation> reservation = processor_.reservations().Find(scope, key);
    const bool live =
        reservation && (reservation->state == wow::ReservationState::kConfirmed ||
                        reservation->expires_at > wow::SystemClock::Instance()->NowMillis());
    if (!live) {
      return ErrorReply(404, "NOT_FOUND",
                        "no " + kind.noun + " holds the name \"" + trimmed + "\"");
    }
    json body{{"key", reservation->key},
              {"owner", reservation->owner.id},
              {"state",
               reservation->state == wow::ReservationState::kConfirmed ? "confirmed" : "pending"},
              {"version", reservation->version}};
    if (reservation->state == wow::ReservationState::kPending) {
      body["expires_at"] = reservation->expires_at;
    }
    return JsonReply(200, body);
  }

  // Runs a command, sending it again with the same request id while its outcome is unknown.
  HttpReply Run(const NamedKind& kind, Action action, const wow::AggregateRef& ref,
                const wow::CommandMessage& command, const std::optional<std::string>& key,
                const std::optional<std::string>& name) {
    // Without a key the processor makes a fresh request id (and skips looking it up); a resend
    // after an unknown outcome uses the id the outcome names.
    std::string request_id = key ? *key : std::string();
    // Repeats of one key in this process run one at a time, so a repeat sent while the original
    // is in flight finds it in the log instead of racing it for the name.
    std::unique_lock<std::mutex> key_lock;
    if (key) key_lock = std::unique_lock(KeyStripe(kind.aggregate, ref.tenant_id, *key));

    wow::CommandResult result;
    std::chrono::milliseconds backoff = options_.resend_backoff;
    for (int attempt = 0;; ++attempt) {
      const auto start = SteadyClock::now();
      try {
        result = processor_.Process(ref, command, request_id);
        metrics_.ObserveCommand(SteadyClock::now() - start);
      } catch (const wow::Error& e) {
        metrics_.ObserveCommand(SteadyClock::now() - start);
        // A resend needs the request id of the first send: only a key gives it to an exception.
        if (e.code() == wow::ErrorCode::kUnavailable && !request_id.empty() &&
            attempt < options_.resend_attempts) {
          spdlog::warn("{} of {} met a busy store; sending it again: {}", command.type,
                       wow::ToString(ref), e.what());
          std::this_thread::sleep_for(backoff);
          backoff *= 2;
          continue;
        }
        metrics_.CountCommand(kind.aggregate, CommandName(action), "error");
        throw;
      }
      request_id = result.request_id;
      if (result.kind == wow::CommandResult::Kind::kUnknown && attempt < options_.resend_attempts) {
        spdlog::warn("the outcome of {} of {} is unknown; sending it again: {}", command.type,
                     wow::ToString(ref), result.message);
        std::this_thread::sleep_for(backoff);
        backoff *= 2;
        continue;
      }
      break;
    }
    metrics_.CountCommand(kind.aggregate, CommandName(action), wow::KindName(result.kind));

    switch (result.kind) {
      case wow::CommandResult::Kind::kAccepted:
        return Success(kind, action, ref.tenant_id, ref.id, result.version,
                       result.events.empty() ? "" : NameOf(result.events.front()), false);
      case wow::CommandResult::Kind::kNoOp:
        // Only a rename to the name the aggregate has is a no-op.
        return Success(kind, action, ref.tenant_id, ref.id, result.version,
                       name ? TrimName(*name) : "", false);
      case wow::CommandResult::Kind::kDuplicate:
        return Replay(kind, action, ref, request_id, name);
      case wow::CommandResult::Kind::kUnknown: {
        HttpReply reply = ErrorReply(
            503, "OUTCOME_UNKNOWN",
            "the store could not say whether the command was committed (" + result.message +
                "); send it again with the header Idempotency-Key: " + request_id);
        reply.headers.emplace_back("Retry-After", "1");
        return reply;
      }
      case wow::CommandResult::Kind::kRejected:
        break;
    }
    metrics_.CountRejection(kind.aggregate, result.code);
    if (key && result.code == rejections::kNameTaken) {
      // The original of this key may have committed in another process meanwhile.
      if (processor_.log().FindByRequestId(kind.aggregate, ref.tenant_id, request_id)) {
        return Replay(kind, action, ref, request_id, name);
      }
    }
    return Rejection(kind, ref, result);
  }

  // The response to a command that committed `version` of aggregate `id`.
  static HttpReply Success(const NamedKind& kind, Action action, const std::string& tenant,
                           const std::string& id, wow::Version version, const std::string& name,
                           bool replayed) {
    HttpReply reply;
    switch (action) {
      case Action::kCreate:
        reply = JsonReply(201, json{{"id", id}, {"name", name}, {"version", version}});
        reply.headers.emplace_back("Location",
                                   "/tenants/" + tenant + "/" + kind.collection + "/" + id);
        break;
      case Action::kRename:
        reply = JsonReply(200, json{{"id", id}, {"name", name}, {"version", version}});
        break;
      default:
        reply = JsonReply(
            200, json{{"id", id}, {"version", version}, {"deleted", action == Action::kDelete}});
        break;
    }
    if (replayed) reply.headers.emplace_back("Idempotent-Replayed", "true");
    return reply;
  }

  // The first response to request `request_id`, rebuilt from the stream it committed; 422 when
  // that stream is not what this request would have committed.
  HttpReply Replay(const NamedKind& kind, Action action, const wow::AggregateRef& ref,
                   const std::string& request_id, const std::optional<std::string>& name) {
    const std::optional<wow::Entry> original =
        processor_.log().FindByRequestId(kind.aggregate, ref.tenant_id, request_id);
    if (!original || original->stream.events.empty()) {
      HttpReply reply =
          ErrorReply(503, "UNAVAILABLE", "the original of this request is not readable yet; retry");
      reply.headers.emplace_back("Retry-After", "1");
      return reply;
    }
    const wow::Stream& stream = original->stream;
    const wow::EventRecord& event = stream.events.front();
    std::string expected;
    switch (action) {
      case Action::kCreate:
        expected = kind.created;
        break;
      case Action::kRename:
        expected = kind.renamed;
        break;
      case Action::kDelete:
        expected = std::string(wow::AggregateDeleted::kType);
        break;
      default:
        expected = std::string(wow::AggregateRestored::kType);
        break;
    }
    bool same = event.type == expected && (action == Action::kCreate || stream.ref.id == ref.id);
    const std::string original_name = NameOf(event);
    if (same && name) same = original_name == TrimName(*name);
    if (!same) {
      return ErrorReply(422, "IDEMPOTENCY_KEY_REUSED",
                        "the Idempotency-Key " + request_id + " was used for another request (" +
                            event.type + " of " + kind.noun + " " + stream.ref.id + " at version " +
                            std::to_string(stream.version) + "); use a fresh key");
    }
    return Success(kind, action, ref.tenant_id, stream.ref.id, stream.version, original_name, true);
  }

  HttpReply Rejection(const NamedKind& kind, const wow::AggregateRef& ref,
                      const wow::CommandResult& result) {
    const std::string& code = result.code;
    if (code == rejections::kBlankName || code == rejections::kNameTooLong) {
      return ErrorReply(400, code, result.message);
    }
    if (code == rejections::kNotFound || code == wow::rejections::kAggregateNotFound)
      return NotFound(kind, ref);
    if (code == rejections::kNameTaken || code == rejections::kAlreadyCreated ||
        code == wow::rejections::kAggregateDeleted ||
        code == wow::rejections::kAggregateNotDeleted) {
      std::string message = result.message;
      if (code == wow::rejections::kAggregateDeleted) {
        message = "the " + kind.noun + " " + ref.id + " is deleted; restore it first";
      } else if (code == wow::rejections::kAggregateNotDeleted) {
        message = "the " + kind.noun + " " + ref.id + " is not deleted";
      }
      return ErrorReply(409, code, message);
    }
    return ErrorReply(422, code, result.message);
  }

  static HttpReply NotFound(const NamedKind& kind, const wow::AggregateRef& ref) {
    return ErrorReply(404, "NOT_FOUND",
                      "no " + kind.noun + " " + ref.id + " in tenant " + ref.tenant_id);
  }

  static HttpReply FromError(const wow::Error& e) {
    const std::string code(wow::ErrorCodeName(e.code()));
    HttpReply reply;
    switch (e.code()) {
      case wow::ErrorCode::kInvalidArgument:
        return ErrorReply(400, code, e.what());
      case wow::ErrorCode::kUnavailable:
        reply = ErrorReply(503, code, e.what());
        reply.headers.emplace_back("Retry-After", "1");
        break;
      case wow::ErrorCode::kAborted:
        reply = ErrorReply(409, code, e.what());
        reply.headers.emplace_back("Retry-After", "1");
        break;
      case wow::ErrorCode::kResourceExhausted:
        reply = ErrorReply(507, code, e.what());
        break;
      case wow::ErrorCode::kPermissionDenied:
        reply = ErrorReply(503, code, e.what());
        break;
      default:
        reply = ErrorReply(500, code, e.what());
        break;
    }
    spdlog::error("request failed: {} {}", code, e.what());
    return reply;
  }

  std::mutex& KeyStripe(const std::string& aggregate, const std::string& tenant,
                        const std::string& key) {
    const size_t hash = std::hash<std::string>{}(aggregate + '\0' + tenant + '\0' + key);
    return key_stripes_[hash % key_stripes_.size()];
  }

  wow::CommandProcessor& processor_;
  ServiceMetrics& metrics_;
  const CatalogHttpOptions options_;
  std::vector<NamedKind> kinds_;
  std::array<std::mutex, 256> key_stripes_;
};

CatalogHttp::CatalogHttp(wow::CommandProcessor& processor, std::shared_ptr<ServiceMetrics> metrics,
                         CatalogHttpOptions options)
    : metrics_(std::move(metrics)), max_body_bytes_(options.max_body_bytes) {
  wow::Require(metrics_ != nullptr, "CatalogHttp needs metrics");
  // ICU builds its normaliser on first use; build it here, before the server's threads exist, so
  // they all find it built (and ThreadSanitizer sees why).
  NameKey("Warm-up");
  impl_ = std::make_unique<Impl>(processor, *metrics_, options);
}

CatalogHttp::~CatalogHttp() = default;

HttpReply CatalogHttp::Handle(std::string_view method, std::string_view target,
                              std::string_view body,
                              std::optional<std::string_view> idempotency_key) {
  return impl_->Handle(method, target, body, idempotency_key);
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
        res.set_content(Dump(ErrorBody(code, message)), "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        std::string what = "unknown exception";
        try {
          if (error) std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("{} {} failed: {}", req.method, req.target, what);
        res.status = 500;
        res.set_content(Dump(ErrorBody("INTERNAL", "internal error: " + what)), "application/json");
      });
  server.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics_->CountHttp(req.method, res.status);
    spdlog::debug("{} {} -> {}", req.method, req.target, res.status);
  });
}

}  // namespace eshop
