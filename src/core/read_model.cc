#include "wow/read_model.h"

#include <nlohmann/json.hpp>

#include "core/read_model_rules.h"
#include "wow/error.h"

namespace wow {

void ValidateReadModelRow(const ReadModelRow& row) {
  ValidateTypeName(row.table, "read model table");
  Require(!row.id.empty(), "a read model row needs an id");
  Require(nlohmann::json::accept(row.body),
          [&] { return "the body of read model row " + row.id + " is not JSON"; });
}

void ValidateReadModelQuery(const ReadModelQuery& query) {
  ValidateTypeName(query.table, "read model table");
  Require(query.limit >= 1 && query.limit <= kMaxReadModelPage, [&] {
    return "a read model page holds 1 to " + std::to_string(kMaxReadModelPage) + " rows, not " +
           std::to_string(query.limit);
  });
}

namespace core {

bool ReadModelPutApplies(const std::optional<ReadModelRow>& stored, const ReadModelRow& row) {
  return !stored || stored->version < row.version;
}

bool ReadModelQueryMatches(const ReadModelQuery& query, const ReadModelRow& row) {
  return row.table == query.table && row.tenant_id == query.tenant_id && row.id > query.after &&
         row.index_key.starts_with(query.prefix);
}

}  // namespace core
}  // namespace wow
