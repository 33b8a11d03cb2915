#include "catalog_handlers.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "catalog.h"
#include "http_text.h"
#include "wow/incidents.h"
#include "wow/name_key.h"
#include "wow/subscription.h"

namespace eshop {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// Logs failed requests at most once a second: a full disk or a locked file fails every request
// alike, and a line each would flood the log. A line logged after a quiet spell says how many
// failures it left out.
void LogFailure(std::string_view message) {
  static std::mutex mutex;
  static SteadyClock::time_point last_logged;  // guarded by mutex
  static std::uint64_t left_out = 0;           // guarded by mutex
  std::uint64_t skipped = 0;
  {
    std::lock_guard lock(mutex);
    const SteadyClock::time_point now = SteadyClock::now();
    if (last_logged != SteadyClock::time_point{} && now - last_logged < std::chrono::seconds(1)) {
      ++left_out;
      return;
    }
    last_logged = now;
    skipped = left_out;
    left_out = 0;
  }
  if (skipped == 0) {
    spdlog::error("request failed: {}", message);
  } else {
    spdlog::error("request failed: {} ({} more failed requests were not logged: at most one "
                  "line a second)",
                  message, skipped);
  }
}

// The name of the event `record` (a BrandCreated, CategoryRenamed, ... body); "" without one.
std::string NameOf(const wow::EventRecord& record) {
  const json body = json::parse(record.body, nullptr, false);
  if (body.is_object() && body.contains("name") && body["name"].is_string()) {
    return body["name"].get<std::string>();
  }
  return "";
}

// Whether `record` (a BrandCreated, ...) made a draft.
bool DraftOf(const wow::EventRecord& record) {
  const json body = json::parse(record.body, nullptr, false);
  return body.is_object() && body.value("draft", false);
}

// The "name" of a command's JSON body, and its "draft" (false when absent) in `draft` when given;
// nullopt, with `refused` set, when the body is not a JSON object with a string "name" (and a
// boolean "draft", if any). (The aggregate checks the name.)
std::optional<std::string> NameFromBody(std::string_view body, HttpReply& refused,
                                        bool* draft = nullptr) {
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
  if (auto d = parsed.find("draft"); draft != nullptr && d != parsed.end()) {
    if (!d->is_boolean()) {
      refused = ErrorReply(400, "INVALID_BODY", "\"draft\" must be true or false");
      return std::nullopt;
    }
    *draft = d->get<bool>();
  }
  return it->get<std::string>();
}

// The response to a command that committed `version` of aggregate `id`.
HttpReply Success(const NamedKind& kind, Action action, const std::string& tenant,
                  const std::string& id, wow::Version version, const std::string& name,
                  bool replayed, bool draft = false) {
  HttpReply reply;
  switch (action) {
    case Action::kCreate:
      reply = JsonReply(201, json{{"id", id},
                                  {"name", name},
                                  {"version", version},
                                  {"status", draft ? kDraft : kPublished}});
      reply.headers.emplace_back("Location",
                                 "/tenants/" + tenant + "/" + kind.collection + "/" + id);
      break;
    case Action::kRename:
      reply = JsonReply(200, json{{"id", id}, {"name", name}, {"version", version}});
      break;
    case Action::kPublish:
      reply = JsonReply(200, json{{"id", id}, {"version", version}, {"status", kPublished}});
      break;
    default:
      reply = JsonReply(
          200, json{{"id", id}, {"version", version}, {"deleted", action == Action::kDelete}});
      break;
  }
  if (replayed) reply.headers.emplace_back("Idempotent-Replayed", "true");
  return reply;
}

HttpReply NotFound(const NamedKind& kind, const wow::AggregateRef& ref) {
  return ErrorReply(404, "NOT_FOUND",
                    "no " + kind.noun + " " + ref.id + " in tenant " + ref.tenant_id);
}

// The event type the first event of a stream committed by `action` has.
std::string ExpectedEvent(const NamedKind& kind, Action action) {
  switch (action) {
    case Action::kCreate:
      return kind.created;
    case Action::kRename:
      return kind.renamed;
    case Action::kDelete:
      return std::string(wow::AggregateDeleted::kType);
    case Action::kPublish:
      return kind.published;
    default:
      return std::string(wow::AggregateRestored::kType);
  }
}

// The parameters of a command's query: wait=projected or nothing. False, with `refused` set, for
// anything else.
bool CommandQuery(const std::string& query, bool& wait, HttpReply& refused) {
  const auto parameters = ParseQuery(query);
  if (!parameters) {
    refused = ErrorReply(400, "INVALID_QUERY", "the query has a malformed percent-encoding");
    return false;
  }
  for (const auto& [name, value] : *parameters) {
    if (name != "wait" || value != "projected" || wait) {
      refused = ErrorReply(
          400, "INVALID_PARAMETER",
          "a command takes one query parameter, wait=projected; not " + name + "=" + value);
      return false;
    }
    wait = true;
  }
  return true;
}

// A list's parameters, or why they are refused.
struct ListQuery {
  std::string after;
  std::string prefix;  // the key of the prefix asked for; "" lists all
  int limit = kDefaultListLimit;
  std::optional<HttpReply> refused;
};

ListQuery ParseListQuery(const std::string& query, const NamedKind& kind) {
  ListQuery list;
  auto refuse = [&](std::string code, std::string message) {
    list.refused = ErrorReply(400, std::move(code), std::move(message));
    return list;
  };
  const auto parameters = ParseQuery(query);
  if (!parameters) return refuse("INVALID_QUERY", "the query has a malformed percent-encoding");
  std::vector<std::string> seen;
  for (const auto& [name, value] : *parameters) {
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return refuse("INVALID_PARAMETER", "the parameter " + name + " is given twice");
    }
    seen.push_back(name);
    if (name == "after") {
      if (!wow::IsUnreservedId(value, kMaxIdBytes)) {
        return refuse("INVALID_AFTER", "after is an id: 1 to " + std::to_string(kMaxIdBytes) +
                                           " characters of A-Z, a-z, 0-9, '.', '_', '~' and '-'");
      }
      list.after = value;
    } else if (name == "limit") {
      int limit = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), limit);
      if (error != std::errc() || end != value.data() + value.size() || limit < 1 ||
          limit > kMaxListLimit) {
        return refuse("INVALID_LIMIT",
                      "limit is a whole number from 1 to " + std::to_string(kMaxListLimit));
      }
      list.limit = limit;
    } else if (name == "prefix") {
      const wow::NameKeyResult key = wow::MakeNameKey(value);
      if (key.kind != wow::NameKeyResult::Kind::kKey) {
        const CheckedName checked = CheckName(value, kind.noun);
        return refuse("INVALID_PREFIX", "prefix is the start of a name: " + checked.message);
      }
      list.prefix = key.key;
    } else {
      return refuse("INVALID_PARAMETER", "a list takes after, limit and prefix; not " + name);
    }
  }
  return list;
}

}  // namespace

CatalogHandlers::CatalogHandlers(wow::CommandProcessor& processor,
                                 std::shared_ptr<wow::ReadModelStore> read_models,
                                 ServiceMetrics& metrics, ResendPolicy resend)
    : processor_(processor),
      read_models_(std::move(read_models)),
      metrics_(metrics),
      resend_(resend) {
  wow::Require(read_models_ != nullptr, "the catalog's routes need read models");
}

HttpReply CatalogHandlers::Serve(const Route& route, std::string_view body,
                                 std::optional<std::string_view> idempotency_key) {
  switch (route.action) {
    case Action::kHealth:
      return Health();
    case Action::kMetrics:
      return Metrics();
    default:
      break;
  }
  if (!wow::IsUnreservedId(route.tenant, kMaxTenantBytes)) {
    return ErrorReply(400, "INVALID_TENANT",
                      "a tenant is 1 to " + std::to_string(kMaxTenantBytes) +
                          " characters of A-Z, a-z, 0-9, '.', '_', '~' and '-'");
  }
  if (route.action != Action::kCreate && route.action != Action::kLookup &&
      route.action != Action::kList && !wow::IsUnreservedId(route.id, kMaxIdBytes)) {
    return ErrorReply(400, "INVALID_ID",
                      "an id is 1 to " + std::to_string(kMaxIdBytes) +
                          " characters of A-Z, a-z, 0-9, '.', '_', '~' and '-'");
  }
  const NamedKind& kind = *route.kind;
  const wow::AggregateRef ref{std::string(kContext), kind.aggregate, route.tenant,
                              route.action == Action::kCreate ? wow::NewId() : route.id};
  if (route.action == Action::kGet) return Get(kind, ref);
  if (route.action == Action::kLookup) return Lookup(kind, route.tenant, route.name);
  if (route.action == Action::kList) return List(kind, route.tenant, route.query);

  // The commands.
  if (idempotency_key && !IsValidIdempotencyKey(*idempotency_key)) {
    return ErrorReply(400, "INVALID_IDEMPOTENCY_KEY",
                      "an Idempotency-Key is 1 to " + std::to_string(kMaxIdempotencyKeyBytes) +
                          " visible ASCII characters");
  }
  bool wait = false;
  HttpReply refused;
  if (!CommandQuery(route.query, wait, refused)) return refused;
  std::optional<std::string> name;
  bool draft = false;
  if (route.action == Action::kCreate || route.action == Action::kRename) {
    name = NameFromBody(body, refused, route.action == Action::kCreate ? &draft : nullptr);
    if (!name) return refused;
  }
  wow::CommandMessage command;
  switch (route.action) {
    case Action::kCreate:
      command = kind.create(*name, draft ? resend_.draft_time.count() : 0);
      break;
    case Action::kRename:
      command = kind.rename(*name);
      break;
    case Action::kDelete:
      command = wow::CommandMessage::Of(wow::DeleteAggregate{});
      break;
    case Action::kPublish:
      command = kind.publish();
      break;
    default:
      command = wow::CommandMessage::Of(wow::RestoreAggregate{});
      break;
  }
  std::optional<std::string> key;
  if (idempotency_key) key = std::string(*idempotency_key);
  return Run(kind, route.action, ref, command, key, name, wait);
}

// 200 while the store answers reads and neither damage nor a key incident was found; 503 naming
// the last damage (what was read cannot be trusted: restore the file) or the last incident (two
// aggregates may hold one key) otherwise: an operator must look.
HttpReply CatalogHandlers::Health() {
  processor_.log().Head(0);  // the store answers reads
  if (const std::uint64_t damage = wow::DataLossCount(); damage > 0) {
    return JsonReply(503, json{{"status", "data_loss"},
                               {"data_loss", damage},
                               {"last", wow::LastDataLoss().value_or("")}});
  }
  if (const std::uint64_t incidents = wow::KeyIncidentCount(); incidents > 0) {
    const std::optional<wow::KeyIncident> last = wow::LastKeyIncident();
    return JsonReply(503, json{{"status", "key_incident"},
                               {"key_incidents", incidents},
                               {"last", last ? wow::Describe(*last) : std::string()}});
  }
  return JsonReply(200, json{{"status", "ok"}});
}

HttpReply CatalogHandlers::Metrics() {
  HttpReply reply;
  reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
  reply.body = metrics_.Render();
  return reply;
}

HttpReply CatalogHandlers::Get(const NamedKind& kind, const wow::AggregateRef& ref) {
  const wow::LoadedAggregate loaded = processor_.Load(ref);
  if (loaded.version == 0) return NotFound(kind, ref);
  const Named& named = loaded.As<Named>();
  return JsonReply(200, json{{"id", ref.id},
                             {"name", named.name},
                             {"version", loaded.version},
                             {"deleted", loaded.deleted},
                             {"status", named.status}});
}

HttpReply CatalogHandlers::List(const NamedKind& kind, const std::string& tenant,
                                const std::string& query) {
  const ListQuery list = ParseListQuery(query, kind);
  if (list.refused) return *list.refused;
  const std::vector<wow::ReadModelRow> rows =
      read_models_->List({kind.collection, tenant, list.after, list.prefix, list.limit});
  json items = json::array();
  for (const wow::ReadModelRow& row : rows) items.push_back(json::parse(row.body));
  json body{{"items", std::move(items)}};
  // A full page may have more after it; the client asks again with after=next.
  body["next"] = static_cast<int>(rows.size()) == list.limit ? json(rows.back().id) : json(nullptr);
  return JsonReply(200, body);
}

HttpReply CatalogHandlers::AfterProjected(HttpReply reply, const wow::CommandResult& result) {
  std::vector<wow::Sequence> heads(static_cast<size_t>(result.position.partition) + 1, 0);
  heads.back() = result.position.sequence;
  if (wow::WaitForCheckpoints(processor_.log(), {CatalogProjection()->subscription()}, heads,
                              SteadyClock::now() + resend_.projection_wait)) {
    return reply;
  }
  json body = json::parse(reply.body);
  body["position"] = {{"partition", result.position.partition},
                      {"sequence", result.position.sequence}};
  body["projected"] = false;
  reply.status = 202;
  reply.body = body.dump();
  return reply;
}

HttpReply CatalogHandlers::Lookup(const NamedKind& kind, const std::string& tenant,
                                  const std::string& name) {
  const CheckedName checked = CheckName(name, kind.noun);
  if (!checked.code.empty()) return ErrorReply(400, checked.code, checked.message);
  const wow::ReservationScope scope{std::string(kContext), kind.aggregate, tenant, kind.ns};
  // A pending key is held until it expires by the clock the processor reserved it by.
  auto held = [&](const std::string& key) {
    std::optional<wow::Reservation> found = processor_.reservations().Find(scope, key);
    if (found && found->state == wow::ReservationState::kPending &&
        found->expires_at <= processor_.clock().NowMillis()) {
      found.reset();
    }
    return found;
  };
  std::optional<wow::Reservation> reservation = held(checked.key);
  // A brand named before the catalog used MakeNameKey may still hold the name's key of then.
  if (const std::string legacy = LegacyNameKey(name); !reservation && legacy != checked.key) {
    reservation = held(legacy);
  }
  if (!reservation) {
    return ErrorReply(404, "NOT_FOUND",
                      "no " + kind.noun + " holds the name \"" + checked.name + "\"");
  }
  json body{
      {"key", reservation->key},
      {"owner", reservation->owner.id},
      {"state", reservation->state == wow::ReservationState::kConfirmed ? "confirmed" : "pending"},
      {"version", reservation->version}};
  if (reservation->state == wow::ReservationState::kPending) {
    body["expires_at"] = reservation->expires_at;
  }
  return JsonReply(200, body);
}

// Runs a command, sending it again with the same request id while its outcome is unknown.
HttpReply CatalogHandlers::Run(const NamedKind& kind, Action action, const wow::AggregateRef& ref,
                               const wow::CommandMessage& command,
                               const std::optional<std::string>& key,
                               const std::optional<std::string>& name, bool wait) {
  // A success waits for the projection when asked to.
  auto answered = [&](HttpReply reply, const wow::CommandResult& committed) {
    if (!wait || reply.status >= 300) return reply;
    return AfterProjected(std::move(reply), committed);
  };
  // Without a key the processor makes a fresh request id (and skips looking it up); a resend
  // after an unknown outcome uses the id the outcome names.
  std::string request_id = key ? *key : std::string();
  // Repeats of one key in this process run one at a time, so a repeat sent while the original
  // is in flight finds it in the log instead of racing it for the name.
  std::unique_lock<std::mutex> key_lock;
  if (key) key_lock = std::unique_lock(KeyStripe(kind.aggregate, ref.tenant_id, *key));

  wow::CommandResult result;
  std::chrono::milliseconds backoff = resend_.backoff;
  for (int attempt = 0;; ++attempt) {
    const auto start = SteadyClock::now();
    try {
      result = processor_.Process(ref, command, request_id);
      metrics_.ObserveCommand(SteadyClock::now() - start);
    } catch (const wow::Error& e) {
      metrics_.ObserveCommand(SteadyClock::now() - start);
      // A resend needs the request id of the first send: only a key gives it to an exception.
      if (e.code() == wow::ErrorCode::kUnavailable && !request_id.empty() &&
          attempt < resend_.attempts) {
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
    if (result.kind == wow::CommandResult::Kind::kUnknown && attempt < resend_.attempts) {
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
      return answered(Success(kind, action, ref.tenant_id, ref.id, result.version,
                              result.events.empty() ? "" : NameOf(result.events.front()), false,
                              !result.events.empty() && DraftOf(result.events.front())),
                      result);
    case wow::CommandResult::Kind::kNoOp:
      // Only a rename to the name the aggregate has is a no-op.
      return Success(kind, action, ref.tenant_id, ref.id, result.version,
                     name ? wow::TrimName(*name) : "", false);
    case wow::CommandResult::Kind::kDuplicate:
      return answered(Replay(kind, action, ref, result, name), result);
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
    // The original of this key may have committed in another process after the processor
    // looked for it: read it once, and answer as a repeat.
    if (std::optional<wow::Entry> original =
            processor_.log().FindByRequestId(kind.aggregate, ref.tenant_id, request_id)) {
      wow::CommandResult duplicate;
      duplicate.kind = wow::CommandResult::Kind::kDuplicate;
      duplicate.target = original->stream.ref;
      duplicate.version = original->stream.version;
      duplicate.position = original->position;
      duplicate.events = std::move(original->stream.events);
      duplicate.request_id = request_id;
      return answered(Replay(kind, action, ref, duplicate, name), duplicate);
    }
  }
  return Rejection(kind, ref, result);
}

// The first response to the request whose original is `original` (kDuplicate: the original
// stream's aggregate, version and events), rebuilt from it; 422 when that stream is not what this
// request would have committed; 503 when the processor could not read the original back.
HttpReply CatalogHandlers::Replay(const NamedKind& kind, Action action,
                                  const wow::AggregateRef& ref, const wow::CommandResult& original,
                                  const std::optional<std::string>& name) {
  if (original.events.empty()) {
    HttpReply reply =
        ErrorReply(503, "UNAVAILABLE", "the original of this request is not readable yet; retry");
    reply.headers.emplace_back("Retry-After", "1");
    return reply;
  }
  const wow::EventRecord& event = original.events.front();
  bool same = event.type == ExpectedEvent(kind, action) &&
              (action == Action::kCreate || original.target.id == ref.id);
  const std::string original_name = NameOf(event);
  if (same && name) same = original_name == wow::TrimName(*name);
  if (!same) {
    return ErrorReply(422, "IDEMPOTENCY_KEY_REUSED",
                      "the Idempotency-Key " + original.request_id +
                          " was used for another request (" + event.type + " of " + kind.noun +
                          " " + original.target.id + " at version " +
                          std::to_string(original.version) + "); use a fresh key");
  }
  return Success(kind, action, ref.tenant_id, original.target.id, original.version, original_name,
                 true, DraftOf(event));
}

HttpReply CatalogHandlers::Rejection(const NamedKind& kind, const wow::AggregateRef& ref,
                                     const wow::CommandResult& result) {
  const std::string& code = result.code;
  if (code == rejections::kBlankName || code == rejections::kInvalidName ||
      code == rejections::kNameTooLong) {
    return ErrorReply(400, code, result.message);
  }
  if (code == rejections::kNotFound || code == wow::rejections::kAggregateNotFound) return NotFound(kind, ref);
  if (code == rejections::kNameTaken || code == rejections::kAlreadyCreated ||
      code == rejections::kNotDraft || code == rejections::kDraftExpired ||
      code == wow::rejections::kAggregateDeleted || code == wow::rejections::kAggregateNotDeleted) {
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

HttpReply CatalogHandlers::FromError(const wow::Error& e) {
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
  LogFailure(e.what());  // "CODE: what failed and what to do"
  return reply;
}

std::mutex& CatalogHandlers::KeyStripe(const std::string& aggregate, const std::string& tenant,
                                       const std::string& key) {
  const std::size_t hash = std::hash<std::string>{}(aggregate + '\0' + tenant + '\0' + key);
  return key_stripes_[hash % key_stripes_.size()];
}

}  // namespace eshop
