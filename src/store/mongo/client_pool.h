// ClientPool: the RAII owner of one mongoc_client_pool_t and its mongoc_uri_t. Lease pops a client
// and pushes it back in its destructor; a client is used by one thread at a time and never kept.
//
// Thread-safety: ClientPool is safe for concurrent use (libmongoc's pool is); a Lease belongs to
// the thread that popped it.
#pragma once

#include <mongoc/mongoc.h>

#include <memory>
#include <string>

#include "wow/mongo_options.h"

namespace wow::mongo {

class ClientPool {
 public:
  // Opens a pool on `uri`, with `options`' socket and wait-queue timeouts where the URI sets none,
  // error API version 2 and retryable writes. Connects lazily. Throws Error(kInvalidArgument) for
  // a malformed URI, naming libmongoc's complaint (never the URI's password).
  ClientPool(const std::string& uri, const MongoOptions& options);
  ~ClientPool();
  ClientPool(const ClientPool&) = delete;
  ClientPool& operator=(const ClientPool&) = delete;

  // A client popped from the pool, pushed back when the lease goes.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), client_(other.client_) {
      other.client_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    mongoc_client_t* get() const { return client_; }

   private:
    friend class ClientPool;
    Lease(mongoc_client_pool_t* pool, mongoc_client_t* client) : pool_(pool), client_(client) {}
    mongoc_client_pool_t* pool_;
    mongoc_client_t* client_;
  };

  // Pops a client, waiting at most the URI's waitQueueTimeoutMS for one. Throws
  // Error(kUnavailable) when none came free in time.
  Lease Pop();

  // The database the URI names (mongodb://host/DB), or "" when it names none.
  const std::string& uri_database() const { return uri_database_; }

 private:
  mongoc_uri_t* uri_ = nullptr;
  mongoc_client_pool_t* pool_ = nullptr;
  std::string uri_database_;
};

}  // namespace wow::mongo
