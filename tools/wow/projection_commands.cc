// wow projection rebuild: drops a projection's rows and checkpoints and replays the log into it.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "catalog.h"
#include "progress.h"
#include "tool.h"
#include "wow/projection.h"
#include "wow/store_set.h"

namespace wow::tool {
namespace {

// The projections this tool can run: the sample catalog's (a service's own projections are
// rebuilt by its program calling wow::RebuildProjection).
std::map<std::string, std::shared_ptr<const Projection>> KnownProjections() {
  const std::shared_ptr<const Projection> catalog = eshop::CatalogProjection();
  return {{catalog->name(), catalog}};
}

int Rebuild(const Globals& globals, const std::string& name) {
  const auto known = KnownProjections();
  const auto it = known.find(name);
  if (it == known.end()) {
    std::string names;
    for (const auto& [known_name, projection] : known) names += " " + known_name;
    throw Failure("no projection \"" + name + "\" in this tool; it knows:" + names, kExitUsage);
  }
  Session session(globals);
  std::uintmax_t entries = 0;
  for (int p = 0; p < session.Partitions(); ++p) {
    entries += static_cast<std::uintmax_t>(session.Log().Head(p));
  }
  StoreSetOptions options;
  options.partitions = session.Partitions();  // the log exists: it is checked, not created
  const StoreSet stores = OpenStores(session.StoreUri(), session.Context(), options);
  ProgressBar progress(!globals.json, entries);
  const std::int64_t applied =
      RebuildProjection(stores, it->second, [&](std::int64_t done, std::int64_t total) {
        progress.Update(static_cast<std::uintmax_t>(done),
                        fmt::format("{} of {} entries", done, total), done >= total);
      });
  progress.Clear();
  if (globals.json) {
    std::cout << nlohmann::json{{"projection", name}, {"applied", applied}}.dump() << '\n';
  } else {
    std::cout << fmt::format("rebuilt projection {} of context {}: {} entries applied\n", name,
                             session.Context(), applied);
  }
  return kExitOk;
}

}  // namespace

void AddProjectionCommands(CLI::App& app, Globals& globals, Action& action) {
  auto* projection = app.add_subcommand("projection", "Manage the projections' read models");
  projection->require_subcommand(1);
  auto* rebuild = projection->add_subcommand(
      "rebuild",
      "Drop a projection's rows and checkpoints and apply the whole log again (stop the "
      "services that run it first)");
  auto name = std::make_shared<std::string>();
  rebuild->add_option("name", *name, "The projection, such as catalog")->required();
  rebuild->callback(
      [&globals, &action, name] { action = [&globals, name] { return Rebuild(globals, *name); }; });
}

}  // namespace wow::tool
