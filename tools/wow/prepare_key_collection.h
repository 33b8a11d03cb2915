// Reading the older version's PrepareKey collection straight from MongoDB, for
// `wow migrate-data keys --from mongodb://HOST:PORT/DB/COLLECTION`: each document in `_id` order
// as libbson's canonical extended JSON (`mongoexport --jsonFormat=canonical`: exact for every
// date, the Long.MAX_VALUE of a key held forever too, which libbson's relaxed form writes as an
// ISO year 292278994), so that ParseExportLine (prepare_key_export.h) reads it as it reads a line
// of an export file.
//
// Thread-safety: a PrepareKeyCollection is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace wow::mongo {
class Executor;  // store/mongo/executor.h
}  // namespace wow::mongo

namespace wow::tool {

// A collection's URI, split: mongodb://HOST/DB/COLLECTION?OPTIONS is the deployment's URI
// mongodb://HOST/DB?OPTIONS, its database DB and the collection COLLECTION.
struct CollectionUri {
  std::string uri;
  std::string database;
  std::string collection;
};

// Splits `from`; nullopt when it is not a mongodb:// or mongodb+srv:// URI whose path is exactly
// a database and a collection, both non-empty.
std::optional<CollectionUri> SplitCollectionUri(std::string_view from);

class PrepareKeyCollection {
 public:
  // A client pool on `from`'s deployment; it connects on first use. Throws Error(kInvalidArgument)
  // for a malformed URI (SplitCollectionUri's caller has checked its shape).
  explicit PrepareKeyCollection(const CollectionUri& from);
  ~PrepareKeyCollection();
  PrepareKeyCollection(const PrepareKeyCollection&) = delete;
  PrepareKeyCollection& operator=(const PrepareKeyCollection&) = delete;

  // How many documents the collection holds (the server's count), for the progress bar. Throws
  // Error (kUnavailable: the deployment cannot be reached).
  std::uint64_t Count() const;

  // Hands each document, as canonical extended JSON, to `each` in `_id` order (a read-concern
  // majority cursor, batch by batch) until `each` returns false. Throws Error when the read
  // fails; what `each` throws passes through.
  void Scan(const std::function<bool(std::string_view document)>& each) const;

 private:
  std::string collection_;
  std::unique_ptr<mongo::Executor> executor_;
};

}  // namespace wow::tool
