#include "store/sqlite/reader_pool.h"

#include <utility>

namespace wow::sqlite {

ReaderPool::ReaderPool(ConnectionOptions connection) : connection_(std::move(connection)) {}

ReaderPool::Lease::Lease(ReaderPool& pool) : pool_(pool) {
  {
    std::lock_guard lock(pool_.mutex_);
    if (!pool_.idle_.empty()) {
      connection_ = std::move(pool_.idle_.back());
      pool_.idle_.pop_back();
      return;
    }
  }
  connection_ = std::make_unique<Connection>(pool_.connection_);
}

ReaderPool::Lease::~Lease() {
  std::lock_guard lock(pool_.mutex_);
  pool_.idle_.push_back(std::move(connection_));
}

}  // namespace wow::sqlite
