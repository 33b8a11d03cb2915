#include <ostream>

#include "wow/error.h"
#include "wow/event_log.h"

namespace wow {

std::string_view KindName(AppendResult::Kind kind) {
  switch (kind) {
    case AppendResult::Kind::kAppended: return "appended";
    case AppendResult::Kind::kConflict: return "conflict";
    case AppendResult::Kind::kDuplicate: return "duplicate";
    case AppendResult::Kind::kRefused: return "refused";
    case AppendResult::Kind::kUnknown: return "unknown";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, AppendResult::Kind kind) {
  return out << KindName(kind);
}

void ValidateLeaseRequest(const std::string& node, std::chrono::milliseconds ttl) {
  Require(!node.empty(), "lease node is empty");
  Require(ttl.count() > 0, [&] {
    return "lease ttl must be positive, got " + std::to_string(ttl.count()) + " ms";
  });
}

}  // namespace wow
