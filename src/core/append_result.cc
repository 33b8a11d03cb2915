#include <ostream>

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

}  // namespace wow
