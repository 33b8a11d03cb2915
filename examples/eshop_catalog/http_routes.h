// The catalog's routes: which request target and method name which action, with the path's
// parameters percent-decoded. Matching knows paths and methods only; it validates no parameter
// (the handlers do) and reads no store.
//
// Thread-safety: a Router is immutable once built; Match is safe for concurrent use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "wow/aggregate.h"

namespace eshop {

// One of the catalog's named aggregate types (brand, category) as its routes and handlers see it.
struct NamedKind {
  std::string aggregate;   // "brand"
  std::string noun;        // "brand", for messages
  std::string collection;  // "brands", the path segment
  std::string names;       // "brand-names", the path segment of name lookups
  std::string ns;          // the namespace its names are reserved in
  std::string created;     // the event type of a create
  std::string renamed;     // the event type of a rename
  std::string published;   // the event type of a publish
  // The create of `name`; with a positive `draft_ms`, of a draft expiring that much later.
  std::function<wow::CommandMessage(const std::string& name, std::int64_t draft_ms)> create;
  std::function<wow::CommandMessage(const std::string&)> rename;
  std::function<wow::CommandMessage()> publish;
};

// The brand and the category, in that order.
std::vector<NamedKind> CatalogKinds();

enum class Action {
  kHealth,
  kMetrics,
  kCreate,
  kList,
  kGet,
  kRename,
  kDelete,
  kRestore,
  kPublish,
  kLookup
};

// "create", "rename", "delete", "restore", "publish" for the commands; "none" otherwise.
std::string_view CommandName(Action action);

// A request matched to a route: what to do and the decoded path parameters.
struct Route {
  Action action = Action::kHealth;
  const NamedKind* kind = nullptr;  // the routes under /tenants; points into the Router
  std::string tenant;
  std::string id;    // kGet, kRename, kDelete, kRestore, kPublish
  std::string name;  // kLookup
  std::string query;  // the target after '?', still percent-encoded; "" without one
};

struct RouteMatch {
  enum class Outcome {
    kMatched,           // `route` says what to do
    kOptions,           // OPTIONS on a known path: answer 204 with `allow`
    kMethodNotAllowed,  // a known path, another method: 405 with `allow`
    kNoRoute,           // no such path: 404
    kBadPath,           // not a path, or a malformed %-escape: 400 with `message`
  };
  Outcome outcome = Outcome::kNoRoute;
  Route route;
  std::string allow;    // kOptions, kMethodNotAllowed: "GET, HEAD, DELETE, OPTIONS"
  std::string path;     // the target without its query, still percent-encoded
  std::string message;  // kBadPath: why
};

class Router {
 public:
  explicit Router(std::vector<NamedKind> kinds);

  // The route of `method` on `target` (a path and an optional query, percent-encoded). HEAD
  // matches where GET does. Never throws but std::bad_alloc.
  RouteMatch Match(std::string_view method, std::string_view target) const;

 private:
  std::vector<NamedKind> kinds_;
};

}  // namespace eshop
