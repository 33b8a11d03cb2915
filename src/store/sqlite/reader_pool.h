// ReaderPool (private): the database's reader connections (query-only; under WAL, readers never
// wait for the writer). A Lease takes an idle connection, or opens a new one when none is idle,
// and gives it back when it ends; the pool keeps every connection it opened until destroyed.
//
// Thread-safety: safe for concurrent use; a leased connection is its lease holder's alone.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "store/sqlite/connection.h"

namespace wow::sqlite {

class ReaderPool {
 public:
  // Opens its connections with `connection`; none yet.
  explicit ReaderPool(ConnectionOptions connection);
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  // One connection, the holder's alone until the lease ends. REQUIRES: the pool outlives it.
  class Lease {
   public:
    // Takes an idle connection of `pool`, or opens one; throws what opening it throws.
    explicit Lease(ReaderPool& pool);
    // Gives the connection back to the pool, idle.
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    // The leased connection: the holder's alone until the lease ends.
    Connection& connection() { return *connection_; }

   private:
    ReaderPool& pool_;
    std::unique_ptr<Connection> connection_;
  };

 private:
  const ConnectionOptions connection_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mutex_
};

}  // namespace wow::sqlite
