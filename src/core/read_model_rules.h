// The rules every ReadModelStore applies (wow/read_model.h), written once.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>

#include "wow/read_model.h"

namespace wow::core {

// Whether ReadModelWriter::Put stores `row` over `stored` (the row of its key, if any): only a
// later version replaces a row.
bool ReadModelPutApplies(const std::optional<ReadModelRow>& stored, const ReadModelRow& row);

// Whether List returns `row` for `query` (apart from its limit).
bool ReadModelQueryMatches(const ReadModelQuery& query, const ReadModelRow& row);

}  // namespace wow::core
