// CatalogHandlers: what the catalog's routes do once matched. A handler takes the route (its
// action and decoded path parameters), the request body and the Idempotency-Key, validates them,
// reads or runs a command through the CommandProcessor, and turns the outcome, a rejection or a
// wow::Error into a reply. Bad input writes nothing.
//
// A command with an Idempotency-Key runs under the key as its request id; repeats of one key in
// this process run one at a time. A repeat of a committed command is answered from the original
// stream the processor found (CommandResult of kind kDuplicate: its aggregate, version and events),
// never from a second read of the log. While the store cannot say whether an append landed (an
// unknown outcome, or busy for a command with a key) the command is sent again with the same
// request id a few times before the client gets a 503.
//
// Name lookups judge a pending reservation's expiry by the processor's clock. Lists read the
// catalog projection's rows (CatalogProjection) only. A command with the query parameter
// wait=projected is answered once the projection has applied its stream, or with 202 and the
// stream's position when that takes longer than the policy's projection wait.
//
// Thread-safety: safe for concurrent use. Serve blocks on the store: call it off I/O threads.
#pragma once

#include <array>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "http_message.h"
#include "http_routes.h"
#include "service_metrics.h"
#include "wow/command_processor.h"
#include "wow/error.h"
#include "wow/read_model.h"

namespace eshop {

struct ResendPolicy {
  // How many times a command is sent again, with the same request id, after an unknown outcome
  // or Error(kUnavailable); then the client gets 503 with Retry-After.
  int attempts = 3;
  std::chrono::milliseconds backoff{25};  // doubled per attempt
  // How long a command with wait=projected waits for the catalog projection; then 202.
  std::chrono::milliseconds projection_wait{5'000};
  // How long a draft has to be published in before it expires.
  std::chrono::milliseconds draft_time{std::chrono::hours(24 * 7)};
};

// The most rows a list returns (its `limit`), and how many it returns without one.
inline constexpr int kMaxListLimit = 500;
inline constexpr int kDefaultListLimit = 50;

class CatalogHandlers {
 public:
  // REQUIRES: `processor` and `metrics` outlive this object; `processor` has the aggregate types
  // of the routes' kinds registered; a runner applies CatalogProjection to `read_models`, which
  // are not null (Error(kInvalidArgument) otherwise).
  CatalogHandlers(wow::CommandProcessor& processor,
                  std::shared_ptr<wow::ReadModelStore> read_models, ServiceMetrics& metrics,
                  ResendPolicy resend);

  CatalogHandlers(const CatalogHandlers&) = delete;
  CatalogHandlers& operator=(const CatalogHandlers&) = delete;

  // The reply to `route` (matched: its action is the one to run) with `body` and the
  // Idempotency-Key header's value, when the request had one. Throws wow::Error from the stores
  // (FromError turns it into a reply) and whatever the processor throws.
  HttpReply Serve(const Route& route, std::string_view body,
                  std::optional<std::string_view> idempotency_key);

  // The reply to an error a handler threw: 400, 409, 503, 507 or 500 by its code; a failure but
  // a refused input is logged, at most one line a second (each saying how many it left out).
  static HttpReply FromError(const wow::Error& e);

 private:
  HttpReply Health();
  HttpReply Metrics();
  HttpReply Get(const NamedKind& kind, const wow::AggregateRef& ref);
  HttpReply List(const NamedKind& kind, const std::string& tenant, const std::string& query);
  HttpReply Lookup(const NamedKind& kind, const std::string& tenant, const std::string& name);
  HttpReply Run(const NamedKind& kind, Action action, const wow::AggregateRef& ref,
                const wow::CommandMessage& command, const std::optional<std::string>& key,
                const std::optional<std::string>& name, bool wait);
  // `reply` once the catalog projection has applied the stream at `position`; 202 with the
  // position when it has not within the policy's projection wait.
  HttpReply AfterProjected(HttpReply reply, const wow::CommandResult& result);
  HttpReply Replay(const NamedKind& kind, Action action, const wow::AggregateRef& ref,
                   const wow::CommandResult& original, const std::optional<std::string>& name);
  HttpReply Rejection(const NamedKind& kind, const wow::AggregateRef& ref,
                      const wow::CommandResult& result);
  std::mutex& KeyStripe(const std::string& aggregate, const std::string& tenant,
                        const std::string& key);

  wow::CommandProcessor& processor_;
  std::shared_ptr<wow::ReadModelStore> read_models_;
  ServiceMetrics& metrics_;
  const ResendPolicy resend_;
  std::array<std::mutex, 256> key_stripes_;
};

}  // namespace eshop
