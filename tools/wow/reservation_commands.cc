// wow reservations find | list.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "format.h"
#include "tool.h"
#include "wow/model.h"
#include "wow/reservation_store.h"
#include "wow/sqlite.h"

namespace wow::tool {

namespace {

using nlohmann::json;

struct ScopeArgs {
  std::string aggregate;
  std::string tenant;
  std::string ns;
  std::string key;    // find
  std::string after;  // list
  int limit = 100;    // list
};

ReservationScope ScopeOf(Session& session, const ScopeArgs& args) {
  return ReservationScope{session.Context(), args.aggregate, args.tenant, args.ns};
}

std::string ScopeText(const ReservationScope& scope) {
  return fmt::format("namespace {} of {}/{}, tenant {}", scope.ns, scope.context, scope.aggregate,
                     TenantLabel(scope.tenant_id));
}

int Find(const Globals& globals, const ScopeArgs& args) {
  Session session(globals);
  session.Log();  // the context must exist
  const ReservationScope scope = ScopeOf(session, args);
  ValidateReservationKey(scope, args.key);
  const auto store = NewSqliteReservationStore(session.db(), SystemClock::Instance());
  const std::optional<Reservation> found = store->Find(scope, args.key);
  if (!found) {
    if (globals.json) {
      std::cout << "null\n";
    } else {
      std::cerr << fmt::format("wow: no reservation of key \"{}\" in {}\n", args.key,
                               ScopeText(scope));
    }
    return kExitNotFound;
  }
  if (globals.json) {
    std::cout << ReservationJson(*found).dump() << '\n';
  } else {
    std::cout << ReservationText(*found, SystemClock::Instance()->NowMillis());
  }
  return kExitOk;
}

int List(const Globals& globals, const ScopeArgs& args) {
  Session session(globals);
  session.Log();  // the context must exist
  const ReservationScope scope = ScopeOf(session, args);
  ValidateReservationKey(scope, "-");  // the scope; any key will do
  const auto store = NewSqliteReservationStore(session.db(), SystemClock::Instance());
  const std::vector<Reservation> page = store->List(scope, args.after, args.limit);
  if (globals.json) {
    json list = json::array();
    for (const Reservation& reservation : page) list.push_back(ReservationJson(reservation));
    std::cout << json{{"reservations", list},
                      {"next_after", page.size() == static_cast<std::size_t>(args.limit)
                                         ? json(page.back().key)
                                         : json(nullptr)}}
                     .dump()
              << '\n';
    return kExitOk;
  }
  const EpochMillis now = SystemClock::Instance()->NowMillis();
  std::cout << fmt::format("{}: {} reservation{}{}\n", ScopeText(scope), page.size(),
                           page.size() == 1 ? "" : "s",
                           args.after.empty() ? "" : " after \"" + args.after + "\"");
  if (page.empty()) return kExitOk;
  std::vector<std::vector<std::string>> rows{
      {"KEY", "STATE", "OWNER", "VERSION", "EXPIRES", "HOLDS"}};
  for (const Reservation& r : page) {
    const bool confirmed = r.state == ReservationState::kConfirmed;
    std::string holds;
    for (const std::string& hold : r.holds) holds += (holds.empty() ? "" : ",") + hold;
    // The owner's id; its tenant too when it is not the scope's (a key of the system tenant).
    std::string owner = r.owner.tenant_id == scope.tenant_id
                            ? r.owner.id
                            : TenantLabel(r.owner.tenant_id) + "/" + r.owner.id;
    rows.push_back(
        {Printable(r.key), std::string(StateName(r.state)), Printable(owner), confirmed ? std::to_string(r.version) : "-",
         confirmed ? "-" : FormatTime(r.expires_at) + (r.expires_at <= now ? " (expired)" : ""),
         confirmed ? "-" : Printable(holds)});
  }
  std::cout << Table(rows, {3});
  if (page.size() == static_cast<std::size_t>(args.limit)) {
    std::cout << fmt::format("more may follow: add --after \"{}\"\n", Printable(page.back().key));
  }
  return kExitOk;
}

void AddScopeOptions(CLI::App& command, ScopeArgs& args) {
  command.add_option("--aggregate", args.aggregate, "The owners' aggregate type, such as brand")
      ->required();
  command
      .add_option("--tenant", args.tenant,
                  "The tenant; \"\" for the system tenant (keys unique across tenants)")
      ->required();
  command.add_option("--namespace", args.ns, "The namespace, such as eshop-catalog.brand-name")
      ->required();
}

}  // namespace

void AddReservationCommands(CLI::App& app, Globals& globals, Action& action) {
  auto* reservations = app.add_subcommand("reservations", "Look into the reserved keys");
  reservations->require_subcommand(1);

  auto* find = reservations->add_subcommand("find", "Print who holds a key, and how");
  auto find_args = std::make_shared<ScopeArgs>();
  AddScopeOptions(*find, *find_args);
  find->add_option("--key", find_args->key, "The key, as stored (normalised)")->required();
  find->callback([&globals, &action, find_args] {
    action = [&globals, find_args] { return Find(globals, *find_args); };
  });

  auto* list = reservations->add_subcommand("list", "Print the keys of a namespace in key order");
  auto list_args = std::make_shared<ScopeArgs>();
  AddScopeOptions(*list, *list_args);
  list->add_option("--after", list_args->after, "Start after this key (paging)");
  list->add_option("--limit", list_args->limit, "At most this many keys (default 100)")
      ->check(CLI::Range(1, 1'000'000));
  list->callback([&globals, &action, list_args] {
    action = [&globals, list_args] { return List(globals, *list_args); };
  });
}

}  // namespace wow::tool
