#include "prepare_key_collection.h"

#include <bson/bson.h>

#include <memory>
#include <utility>

#include "store/mongo/bson_doc.h"
#include "store/mongo/client_pool.h"
#include "store/mongo/executor.h"
#include "wow/mongo_options.h"

namespace wow::tool {

namespace {

struct JsonDeleter {
  void operator()(char* text) const { bson_free(text); }
};

}  // namespace

std::optional<CollectionUri> SplitCollectionUri(std::string_view from) {
  const std::size_t scheme = from.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  const std::string_view name = from.substr(0, scheme);
  if (name != "mongodb" && name != "mongodb+srv") return std::nullopt;
  // The hosts end at the first '/' after the user information (USER:PASSWORD@).
  const std::size_t hosts = scheme + 3;
  const std::size_t query = from.find('?', hosts);
  const std::string_view authority_and_path = from.substr(hosts, query - hosts);
  const std::size_t at = authority_and_path.rfind('@');
  const std::size_t slash =
      authority_and_path.find('/', at == std::string_view::npos ? 0 : at + 1);
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view path = authority_and_path.substr(slash + 1);
  const std::size_t separator = path.find('/');
  if (separator == std::string_view::npos) return std::nullopt;
  CollectionUri split;
  split.database = std::string(path.substr(0, separator));
  split.collection = std::string(path.substr(separator + 1));
  if (split.database.empty() || split.collection.empty() ||
      split.collection.find('/') != std::string::npos) {
    return std::nullopt;
  }
  split.uri = std::string(from.substr(0, hosts + slash + 1)) + split.database +
              (query == std::string_view::npos ? "" : std::string(from.substr(query)));
  return split;
}

PrepareKeyCollection::PrepareKeyCollection(const CollectionUri& from)
    : collection_(from.collection) {
  const MongoOptions options;
  executor_ = std::make_unique<mongo::Executor>(
      std::make_shared<mongo::ClientPool>(from.uri, options), from.database, options);
}

PrepareKeyCollection::~PrepareKeyCollection() = default;

std::uint64_t PrepareKeyCollection::Count() const {
  mongo::Bson command = mongo::NewBson();
  mongo::AppendText(command.get(), "count", collection_);
  const mongo::Bson reply =
      executor_->RunCommand(*command, false, "counting the documents of " + collection_);
  const std::optional<std::int64_t> count = mongo::FindInteger(*reply, "n");
  return count && *count > 0 ? static_cast<std::uint64_t>(*count) : 0;
}

void PrepareKeyCollection::Scan(const std::function<bool(std::string_view)>& each) const {
  mongo::FindCommand find;
  find.collection = collection_;
  find.filter = mongo::NewBson();
  find.sort = mongo::BsonFromJson(R"({"_id": 1})");
  executor_->Scan(
      find,
      [&](mongo::BorrowedBson document) {
        std::size_t length = 0;
        const std::unique_ptr<char, JsonDeleter> json(
            bson_as_canonical_extended_json(&document.doc, &length));
        return each(std::string_view(json.get(), length));
      },
      "reading the PrepareKey collection " + collection_);
}

}  // namespace wow::tool
