#include "store/mongo/read_model_commands.h"

#include "wow/error.h"

namespace wow::mongo {
namespace {

// table, tenant_id, id: the "row" index's fields.
Bson RowFilter(const std::string& table, const std::string& tenant_id, const std::string& id) {
  RequireStorableText(tenant_id, "read model tenant id");
  RequireStorableText(id, "read model row id");
  Bson filter = NewBson();
  AppendText(filter.get(), "table", table);
  AppendText(filter.get(), "tenant_id", tenant_id);
  AppendText(filter.get(), "id", id);
  return filter;
}

Error Malformed(const std::string& collection, const bson_t& doc, const char* why) {
  return Error(ErrorCode::kDataLoss, "a document of " + collection +
                                         " is not of the read models' layout (" + why +
                                         "): " + ToJson(doc).substr(0, 300));
}

// The length of the UTF-8 sequence a byte starts (1 for a byte that starts none: the caller's
// text is UTF-8, so it never meets one).
std::size_t SequenceLength(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

char32_t Decode(std::string_view s) {
  const auto byte = [&](std::size_t i) {
    return static_cast<char32_t>(static_cast<unsigned char>(s[i]));
  };
  switch (s.size()) {
    case 1:
      return byte(0);
    case 2:
      return (byte(0) & 0x1F) << 6 | (byte(1) & 0x3F);
    case 3:
      return (byte(0) & 0x0F) << 12 | (byte(1) & 0x3F) << 6 | (byte(2) & 0x3F);
    default:
      return (byte(0) & 0x07) << 18 | (byte(1) & 0x3F) << 12 | (byte(2) & 0x3F) << 6 |
             (byte(3) & 0x3F);
  }
}

void Encode(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace

std::string ReadModelCollectionName(const std::string& context) {
  return "wow_read_model__" + context;
}

Bson ReadModelShardKey() { return BsonFromJson(R"({"table": 1, "tenant_id": 1, "id": 1})"); }

Bson ReadModelIndexesCommand(const std::string& collection) {
  Bson command = NewBson();
  AppendText(command.get(), "createIndexes", collection);
  const Bson indexes = BsonFromJson(R"([
    {"name": "row", "key": {"table": 1, "tenant_id": 1, "id": 1}, "unique": true},
    {"name": "prefix", "key": {"table": 1, "tenant_id": 1, "index_key": 1, "id": 1}}])");
  bson_append_array(command.get(), "indexes", -1, indexes.get());
  return command;
}

BulkOperation PutRowOperation(const ReadModelRow& row) {
  const std::size_t text_bytes = row.table.size() + row.tenant_id.size() + row.id.size() +
                                 row.index_key.size() + row.body.size();
  Require(text_bytes < kMaxRowDocumentBytes, [&] {
    return "read model row " + row.id.substr(0, 100) + " of " + row.table + " holds " +
           std::to_string(text_bytes) + " bytes of text; MongoDB stores a row of at most " +
           std::to_string(kMaxRowDocumentBytes) + " bytes";
  });
  RequireStorableText(row.index_key, "read model index key");
  RequireStorableText(row.body, "read model body");
  BulkOperation operation;
  operation.filter = RowFilter(row.table, row.tenant_id, row.id);
  bson_t lt;
  bson_append_document_begin(operation.filter.get(), "version", -1, &lt);
  AppendInt64(&lt, "$lt", row.version);
  bson_append_document_end(operation.filter.get(), &lt);
  operation.update = NewBson();
  bson_t set;
  bson_append_document_begin(operation.update.get(), "$set", -1, &set);
  AppendText(&set, "table", row.table);
  AppendText(&set, "tenant_id", row.tenant_id);
  AppendText(&set, "id", row.id);
  AppendInt64(&set, "version", row.version);
  AppendText(&set, "index_key", row.index_key);
  AppendText(&set, "body", row.body);
  bson_append_document_end(operation.update.get(), &set);
  // The stored document is the $set's fields and an _id (an ObjectId, 17 bytes with its name).
  Require(operation.update.get()->len + 32 <= kMaxRowDocumentBytes, [&] {
    return "read model row " + row.id.substr(0, 100) + " of " + row.table + " takes " +
           std::to_string(operation.update.get()->len) +
           " bytes as a document; MongoDB stores at most " + std::to_string(kMaxRowDocumentBytes);
  });
  operation.upsert = true;
  return operation;
}

FindCommand FindRowCommand(const std::string& context, const std::string& table,
                           const std::string& tenant_id, const std::string& id) {
  FindCommand command;
  command.collection = ReadModelCollectionName(context);
  command.filter = RowFilter(table, tenant_id, id);
  command.limit = 1;
  return command;
}

FindCommand ListRowsCommand(const std::string& context, const ReadModelQuery& query) {
  RequireStorableText(query.tenant_id, "read model tenant id");
  RequireStorableText(query.after, "read model page's after");
  RequireStorableText(query.prefix, "read model prefix");
  FindCommand command;
  command.collection = ReadModelCollectionName(context);
  command.filter = NewBson();
  AppendText(command.filter.get(), "table", query.table);
  AppendText(command.filter.get(), "tenant_id", query.tenant_id);
  bson_t gt;
  bson_append_document_begin(command.filter.get(), "id", -1, &gt);
  AppendText(&gt, "$gt", query.after);
  bson_append_document_end(command.filter.get(), &gt);
  if (!query.prefix.empty()) {
    bson_t range;
    bson_append_document_begin(command.filter.get(), "index_key", -1, &range);
    AppendText(&range, "$gte", query.prefix);
    if (const std::optional<std::string> bound = PrefixUpperBound(query.prefix)) {
      AppendText(&range, "$lt", *bound);
    }
    bson_append_document_end(command.filter.get(), &range);
  }
  command.sort = BsonFromJson(R"({"id": 1})");
  command.limit = query.limit;
  return command;
}

DeleteCommand DropRowsCommand(const std::string& context, const std::vector<std::string>& tables) {
  DeleteCommand command;
  command.collection = ReadModelCollectionName(context);
  command.filter = NewBson();
  bson_t in, list;
  bson_append_document_begin(command.filter.get(), "table", -1, &in);
  bson_append_array_begin(&in, "$in", -1, &list);
  for (std::size_t i = 0; i < tables.size(); ++i) {
    AppendText(&list, std::to_string(i), tables[i]);
  }
  bson_append_array_end(&in, &list);
  bson_append_document_end(command.filter.get(), &in);
  command.many = true;
  return command;
}

std::optional<std::string> PrefixUpperBound(std::string_view prefix) {
  // The start of each code point, so the last one below U+10FFFF can be found from the end.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < prefix.size();
       i += SequenceLength(static_cast<unsigned char>(prefix[i]))) {
    starts.push_back(i);
  }
  for (std::size_t n = starts.size(); n-- > 0;) {
    const std::size_t end = n + 1 < starts.size() ? starts[n + 1] : prefix.size();
    const char32_t c = Decode(prefix.substr(starts[n], end - starts[n]));
    if (c == 0x10FFFF) continue;
    std::string bound(prefix.substr(0, starts[n]));
    Encode(c == 0xD7FF ? 0xE000 : c + 1, bound);
    return bound;
  }
  return std::nullopt;
}

ReadModelRow ParseRow(const bson_t& doc, const std::string& collection) {
  const auto table = FindText(doc, "table");
  const auto tenant_id = FindText(doc, "tenant_id");
  const auto id = FindText(doc, "id");
  const auto version = FindInteger(doc, "version");
  const auto index_key = FindText(doc, "index_key");
  const auto body = FindText(doc, "body");
  if (!table || !tenant_id || !id) throw Malformed(collection, doc, "no table, tenant_id or id");
  if (!version) throw Malformed(collection, doc, "no integer version");
  if (!index_key || !body) throw Malformed(collection, doc, "no index_key or body text");
  return {std::string(*table),     std::string(*tenant_id), std::string(*id), *version,
          std::string(*index_key), std::string(*body)};
}

}  // namespace wow::mongo
