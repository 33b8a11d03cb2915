// The store set's value type and its URI parsing (include/wow/store_set.h); OpenStores, which
// links the backends, is in src/store/store_set/.
#include "wow/store_set.h"

#include <cctype>

#include "wow/error.h"

namespace wow {
namespace {

constexpr std::string_view kAcceptedForms =
    "accepted: memory:, sqlite:PATH, a bare PATH (a SQLite file), mongodb://... or "
    "mongodb+srv://...";

[[noreturn]] void BadUri(std::string_view uri, std::string_view why) {
  throw Error(ErrorCode::kInvalidArgument, "store URI \"" + std::string(uri) + "\" " +
                                               std::string(why) + "; " +
                                               std::string(kAcceptedForms));
}

// Whether `text` is a URI scheme (RFC 3986: a letter, then letters, digits, '+', '-', '.').
bool IsScheme(std::string_view text) {
  if (text.empty() || !std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (const char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

}  // namespace

StoreUri ParseStoreUri(std::string_view uri) {
  if (uri.empty()) BadUri(uri, "is empty");
  const size_t colon = uri.find(':');
  if (colon == std::string_view::npos || !IsScheme(uri.substr(0, colon))) {
    return {StoreUri::Kind::kSqlite, std::string(uri)};  // a bare path
  }
  const std::string_view scheme = uri.substr(0, colon);
  const std::string_view rest = uri.substr(colon + 1);
  if (scheme == "memory") {
    if (!rest.empty()) BadUri(uri, "names something after memory:, which takes nothing");
    return {StoreUri::Kind::kMemory, ""};
  }
  if (scheme == "sqlite") {
    if (rest.empty()) BadUri(uri, "has no path after sqlite:");
    return {StoreUri::Kind::kSqlite, std::string(rest)};
  }
  if (scheme == "mongodb" || scheme == "mongodb+srv") {
    if (rest.substr(0, 2) != "//" || rest.size() == 2) BadUri(uri, "names no MongoDB host");
    return {StoreUri::Kind::kMongo, std::string(uri)};
  }
  BadUri(uri, "has a scheme this build does not know (\"" + std::string(scheme) + ":\")");
}

StoreSet::StoreSet(Parts parts) : parts_(std::move(parts)) {
  Require(parts_.clock != nullptr, "a store set needs a clock");
  Require(parts_.log != nullptr && parts_.reservations != nullptr && parts_.timers != nullptr,
          "a store set needs its three stores");
  Require(parts_.log->context() == parts_.context, [&] {
    return "the store set's log is of context \"" + parts_.log->context() + "\", not \"" +
           parts_.context + "\"";
  });
}

std::vector<StoreMetric> StoreSet::Metrics() const {
  if (!parts_.metrics) return {};
  return parts_.metrics();
}

StoreSet StoreSet::With(std::shared_ptr<EventLog> log,
                        std::shared_ptr<ReservationStore> reservations,
                        std::shared_ptr<TimerStore> timers) const {
  Parts parts = parts_;
  if (log) parts.log = std::move(log);
  if (reservations) parts.reservations = std::move(reservations);
  if (timers) parts.timers = std::move(timers);
  return StoreSet(std::move(parts));
}

}  // namespace wow
