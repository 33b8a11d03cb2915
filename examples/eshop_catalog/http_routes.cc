#include "http_routes.h"

#include <optional>
#include <utility>

#include "catalog.h"
#include "http_text.h"

namespace eshop {
namespace {

template <typename Create, typename Rename, typename Publish, typename Created, typename Renamed,
          typename Published>
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
  kind.published = std::string(Published::kType);
  kind.create = [](const std::string& name, std::int64_t draft_ms) {
    return wow::CommandMessage::Of(Create{name, draft_ms > 0, draft_ms});
  };
  kind.rename = [](const std::string& name) { return wow::CommandMessage::Of(Rename{name}); };
  kind.publish = [] { return wow::CommandMessage::Of(Publish{}); };
  return kind;
}

using Methods = std::vector<std::pair<std::string_view, Action>>;

}  // namespace

std::vector<NamedKind> CatalogKinds() {
  std::vector<NamedKind> kinds;
  kinds.push_back(
      MakeKind<CreateBrand, RenameBrand, PublishBrand, BrandCreated, BrandRenamed, BrandPublished>(
          "brand", "brands", "brand-names", kBrandNames));
  kinds.push_back(
      MakeKind<CreateCategory, RenameCategory, PublishCategory, CategoryCreated, CategoryRenamed,
               CategoryPublished>("category", "categories", "category-names", kCategoryNames));
  return kinds;
}

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
    case Action::kPublish:
      return "publish";
    default:
      return "none";
  }
}

Router::Router(std::vector<NamedKind> kinds) : kinds_(std::move(kinds)) {}

RouteMatch Router::Match(std::string_view method, std::string_view target) const {
  RouteMatch match;
  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  match.path = std::string(path);
  if (question != std::string_view::npos) match.route.query = target.substr(question + 1);
  if (path.empty() || path.front() != '/') {
    match.outcome = RouteMatch::Outcome::kBadPath;
    match.message = "the request target must be a path starting with /";
    return match;
  }
  std::vector<std::string> segments;
  for (std::size_t begin = 1;;) {
    const std::size_t end = path.find('/', begin);
    std::optional<std::string> segment =
        PercentDecode(path.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (!segment) {
      match.outcome = RouteMatch::Outcome::kBadPath;
      match.message = "the path has a malformed percent-encoding";
      return match;
    }
    segments.push_back(std::move(*segment));
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }

  // The methods the path takes, each with its action.
  Route& route = match.route;
  Methods methods;
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
          methods = {{"GET", Action::kList}, {"POST", Action::kCreate}};
        } else if (!segments[3].empty()) {  // a trailing slash names nothing
          route.id = segments[3];
          if (segments.size() == 4) {
            methods = {{"GET", Action::kGet}, {"DELETE", Action::kDelete}};
          } else if (segments.size() == 5 && segments[4] == "name") {
            methods = {{"PUT", Action::kRename}};
          } else if (segments.size() == 5 && segments[4] == "restore") {
            methods = {{"POST", Action::kRestore}};
          } else if (segments.size() == 5 && segments[4] == "publish") {
            methods = {{"POST", Action::kPublish}};
          }
        }
      } else if (segments[2] == kind.names && segments.size() == 4) {
        route.kind = &kind;
        route.name = segments[3];
        methods = {{"GET", Action::kLookup}};
      }
    }
  }
  if (methods.empty()) {
    match.outcome = RouteMatch::Outcome::kNoRoute;
    return match;
  }

  bool found = false;
  for (const auto& [allowed, action] : methods) {
    match.allow += (match.allow.empty() ? "" : ", ") + std::string(allowed);
    if (allowed == "GET") match.allow += ", HEAD";
    if (method == allowed || (method == "HEAD" && allowed == "GET")) {
      route.action = action;
      found = true;
    }
  }
  match.allow += ", OPTIONS";
  if (method == "OPTIONS") {
    match.outcome = RouteMatch::Outcome::kOptions;
  } else {
    match.outcome = found ? RouteMatch::Outcome::kMatched : RouteMatch::Outcome::kMethodNotAllowed;
  }
  return match;
}

}  // namespace eshop
