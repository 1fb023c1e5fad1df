#include "kube/connection_pool.h"

#include <httplib.h>

namespace tessera::kube {

ConnectionPool::Lease::Lease(ConnectionPool* pool, std::unique_ptr<httplib::ClientImpl> client)
    : pool_(pool), client_(std::move(client)) {}

ConnectionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), client_(std::move(other.client_)) {}

ConnectionPool::Lease::~Lease() {
  if (pool_ && client_) pool_->give_back(std::move(client_));
}

ConnectionPool::ConnectionPool(Factory factory, size_t max_idle) : factory_(std::move(factory)), max_idle_(max_idle) {}

ConnectionPool::~ConnectionPool() = default;

Result<ConnectionPool::Lease> ConnectionPool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      // The most recently used client: the likeliest to have a live connection.
      std::unique_ptr<httplib::ClientImpl> client = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(client));
    }
  }
  auto client = factory_();
  if (!client) return client.error();
  return Lease(this, std::move(*client));
}

void ConnectionPool::give_back(std::unique_ptr<httplib::ClientImpl> client) {
  std::lock_guard lock(mutex_);
  if (idle_.size() < max_idle_) idle_.push_back(std::move(client));
  // Else the surplus client closes its connection as `client` is destroyed, after the lock.
}

}  // namespace tessera::kube
