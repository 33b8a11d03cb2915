// The MongoDB read model store's commands, as pure functions (inputs in, BSON out), and the
// parser of what it stores.
//
// Layout (format 1):
//   wow_read_model__<context>, one per context; one document per row:
//     {table, tenant_id, id, version, index_key, body: the row's JSON text}
//   indexes: "row" unique {table, tenant_id, id} (the shard key: a tenant's rows of one table are
//   one range, so a List reaches the shards of that range alone); "prefix"
//   {table, tenant_id, index_key, id}, for a List with a prefix.
//   Strings compare as MongoDB compares them without a collation: by their UTF-8 bytes, the order
//   of the other stores.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/mongo/bson_doc.h"
#include "store/mongo/executor.h"
#include "wow/read_model.h"

namespace wow::mongo {

inline constexpr int kReadModelFormat = 1;

// The most bytes a row's document may take: MongoDB's limit on a document (16 MiB).
inline constexpr std::size_t kMaxRowDocumentBytes = 16 * 1024 * 1024;

std::string ReadModelCollectionName(const std::string& context);
// {table: 1, tenant_id: 1, id: 1}.
Bson ReadModelShardKey();
// createIndexes of the collection's two indexes.
Bson ReadModelIndexesCommand(const std::string& collection);

// Put's conditional upsert, as one operation of a bulk write: it matches the stored row of the
// table, tenant and id only when its version is earlier, and sets every field; with no stored row
// it inserts. A stored row at the same or a later version makes the upsert meet the "row" index
// (a duplicate key): the store then reads it. Throws Error(kInvalidArgument) for text MongoDB
// cannot store or a row over kMaxRowDocumentBytes.
BulkOperation PutRowOperation(const ReadModelRow& row);
// The row of `table`, `tenant_id` and `id`.
FindCommand FindRowCommand(const std::string& context, const std::string& table,
                           const std::string& tenant_id, const std::string& id);
// List's find: the rows of the query's table and tenant whose id is after `after` and whose
// index key is in [prefix, PrefixUpperBound(prefix)), by id, at most `limit`.
FindCommand ListRowsCommand(const std::string& context, const ReadModelQuery& query);
// Deletes every row of `tables` (a deleteMany).
DeleteCommand DropRowsCommand(const std::string& context, const std::vector<std::string>& tables);

// The least string above every string that starts with `prefix`, in code point order (UTF-8's
// byte order): `prefix` with its last code point that is not U+10FFFF raised by one (past the
// surrogates) and what follows it dropped; nullopt when there is none (`prefix` is empty or all
// U+10FFFF). `prefix` must be UTF-8.
std::optional<std::string> PrefixUpperBound(std::string_view prefix);

// The row `doc` of `collection` stores. Throws Error(kDataLoss) naming the collection for a
// document not of the layout.
ReadModelRow ParseRow(const bson_t& doc, const std::string& collection);

}  // namespace wow::mongo
