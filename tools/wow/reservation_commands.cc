// wow reservations find | list | lookalikes.
#include <fmt/format.h>

#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "format.h"
#include "tool.h"
#include "wow/model.h"
#include "wow/name_key.h"
#include "wow/reservation_store.h"

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

// A namespace of the session's store (the context must exist, the scope must be valid) and the
// store's reservations.
struct Namespace {
  ReservationScope scope;
  std::unique_ptr<ReservationStore> store;
};
Namespace OpenNamespace(Session& session, const ScopeArgs& args) {
  std::unique_ptr<ReservationStore> store = session.Reservations();  // the context must exist
  const ReservationScope scope = ScopeOf(session, args);
  ValidateReservationKey(scope, "-");  // the scope; any key will do
  return {scope, std::move(store)};
}

// The owner's id; its tenant too when it is not the scope's (a key of the system tenant).
std::string OwnerLabel(const Reservation& r, const ReservationScope& scope) {
  return Printable(r.owner.tenant_id == scope.tenant_id
                       ? r.owner.id
                       : TenantLabel(r.owner.tenant_id) + "/" + r.owner.id);
}

std::string ScopeText(const ReservationScope& scope) {
  return Printable(fmt::format("namespace {} of {}/{}, tenant {}", scope.ns, scope.context,
                               scope.aggregate, TenantLabel(scope.tenant_id)));
}

int Find(const Globals& globals, const ScopeArgs& args) {
  Session session(globals);
  const auto store = session.Reservations();  // the context must exist
  const ReservationScope scope = ScopeOf(session, args);
  ValidateReservationKey(scope, args.key);
  const std::optional<Reservation> found = store->Find(scope, args.key);
  if (!found) {
    if (globals.json) {
      std::cout << "null\n";
    } else {
      std::cerr << fmt::format("wow: no reservation of key \"{}\" in {}\n", Printable(args.key),
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
  const auto [scope, store] = OpenNamespace(session, args);
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
                           args.after.empty() ? "" : " after \"" + Printable(args.after) + "\"");
  if (page.empty()) return kExitOk;
  std::vector<std::vector<std::string>> rows{
      {"KEY", "STATE", "OWNER", "VERSION", "EXPIRES", "HOLDS"}};
  for (const Reservation& r : page) {
    const bool confirmed = r.state == ReservationState::kConfirmed;
    std::string holds;
    for (const std::string& hold : r.holds) holds += (holds.empty() ? "" : ",") + hold;
    rows.push_back(
        {Printable(r.key), std::string(StateName(r.state)), OwnerLabel(r, scope),
         confirmed ? std::to_string(r.version) : "-",
         confirmed ? "-" : FormatTime(r.expires_at) + (r.expires_at <= now ? " (expired)" : ""),
         confirmed ? "-" : Printable(holds)});
  }
  std::cout << Table(rows, {3});
  if (page.size() == static_cast<std::size_t>(args.limit)) {
    std::cout << fmt::format("more may follow: add --after \"{}\"\n", Printable(page.back().key));
  }
  return kExitOk;
}

// What wow::MakeNameKey makes of a stored key: its key, or why it has none.
std::string RuleKeyText(const NameKeyResult& rule) {
  switch (rule.kind) {
    case NameKeyResult::Kind::kKey:
      return Printable(rule.key);
    case NameKeyResult::Kind::kBlank:
      return "(blank)";
    case NameKeyResult::Kind::kNotAllowed:
      return "(not allowed: " + CodePointLabel(rule.code_point) + ")";
    case NameKeyResult::Kind::kNotUtf8:
      return "(not UTF-8)";
  }
  return "";
}

std::string_view RuleKindName(NameKeyResult::Kind kind) {
  switch (kind) {
    case NameKeyResult::Kind::kKey:
      return "key";
    case NameKeyResult::Kind::kBlank:
      return "blank";
    case NameKeyResult::Kind::kNotAllowed:
      return "not_allowed";
    case NameKeyResult::Kind::kNotUtf8:
      return "not_utf8";
  }
  return "";
}

// The stored keys of a namespace that wow::MakeNameKey merges (two or more keys of one rule key),
// changes (a key alone whose rule key is another) or refuses (a key the rule calls blank or
// does not allow). Expired pending keys are free and left out.
int Lookalikes(const Globals& globals, const ScopeArgs& args) {
  Session session(globals);
  const auto [scope, store] = OpenNamespace(session, args);
  const EpochMillis now = SystemClock::Instance()->NowMillis();
  std::map<std::string, std::vector<Reservation>> by_rule_key;
  std::vector<std::pair<Reservation, NameKeyResult>> refused;
  std::size_t keys = 0;
  constexpr int kPage = 1000;
  std::string after;
  for (;;) {
    std::vector<Reservation> page = store->List(scope, after, kPage);
    for (Reservation& reservation : page) {
      if (IsExpiredPending(reservation, now)) continue;
      ++keys;
      NameKeyResult rule = MakeNameKey(reservation.key);
      if (rule.ok()) {
        by_rule_key[rule.key].push_back(std::move(reservation));
      } else {
        refused.emplace_back(std::move(reservation), std::move(rule));
      }
    }
    if (page.size() < static_cast<std::size_t>(kPage)) break;
    after = page.back().key;
  }
  std::vector<std::pair<std::string, std::vector<Reservation>>> merged;
  std::vector<std::pair<std::string, Reservation>> changed;
  for (auto& [rule_key, held] : by_rule_key) {
    if (held.size() > 1) {
      merged.emplace_back(rule_key, std::move(held));
    } else if (held.front().key != rule_key) {
      changed.emplace_back(rule_key, std::move(held.front()));
    }
  }
  if (globals.json) {
    json merged_json = json::array();
    for (const auto& [rule_key, held] : merged) {
      json stored = json::array();
      for (const Reservation& reservation : held) stored.push_back(ReservationJson(reservation));
      merged_json.push_back({{"rule_key", rule_key}, {"stored", stored}});
    }
    json changed_json = json::array();
    for (const auto& [rule_key, reservation] : changed) {
      changed_json.push_back({{"rule_key", rule_key}, {"stored", ReservationJson(reservation)}});
    }
    json refused_json = json::array();
    for (const auto& [reservation, rule] : refused) {
      json entry{{"rule", RuleKindName(rule.kind)}, {"stored", ReservationJson(reservation)}};
      if (rule.kind == NameKeyResult::Kind::kNotAllowed) {
        entry["code_point"] = fmt::format("U+{:04X}", static_cast<std::uint32_t>(rule.code_point));
      }
      refused_json.push_back(entry);
    }
    std::cout << json{{"keys", keys},
                      {"merged", merged_json},
                      {"changed", changed_json},
                      {"refused", refused_json}}
                     .dump()
              << '\n';
    return kExitOk;
  }
  std::size_t merged_keys = 0;
  for (const auto& group : merged) merged_keys += group.second.size();
  std::cout << fmt::format(
      "{}: {} key{}; the name key rule merges {} of them into {}, changes {}, refuses {}\n",
      ScopeText(scope), keys, keys == 1 ? "" : "s", merged_keys, merged.size(), changed.size(),
      refused.size());
  if (merged.empty() && changed.empty() && refused.empty()) return kExitOk;
  std::vector<std::vector<std::string>> rows{{"RULE KEY", "STORED KEY", "STATE", "OWNER", "WHY"}};
  auto row = [&](const std::string& rule_key, const Reservation& r, std::string why) {
    rows.push_back({rule_key, Printable(r.key), std::string(StateName(r.state)),
                    OwnerLabel(r, scope), std::move(why)});
  };
  for (const auto& [rule_key, held] : merged) {
    for (const Reservation& r : held) row(Printable(rule_key), r, "merged");
  }
  for (const auto& [rule_key, r] : changed) row(Printable(rule_key), r, "changed");
  for (const auto& [r, rule] : refused) row(RuleKeyText(rule), r, "refused");
  std::cout << Table(rows);
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

  auto* lookalikes = reservations->add_subcommand(
      "lookalikes",
      "Print the keys of a namespace that the name key rule (wow::MakeNameKey) merges, changes "
      "or refuses");
  auto lookalike_args = std::make_shared<ScopeArgs>();
  AddScopeOptions(*lookalikes, *lookalike_args);
  lookalikes->callback([&globals, &action, lookalike_args] {
    action = [&globals, lookalike_args] { return Lookalikes(globals, *lookalike_args); };
  });
}

}  // namespace wow::tool
