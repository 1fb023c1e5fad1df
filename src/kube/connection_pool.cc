#include "kube/connection_pool.h"

#include <httplib.h>
#include <poll.h>

namespace tessera::kube {

ConnectionPool::Lease::Lease(ConnectionPool* pool, std::unique_ptr<httplib::ClientImpl> client, bool reused)
    : pool_(pool), client_(std::move(client)), reused_(reused) {}

ConnectionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), client_(std::move(other.client_)), reused_(other.reused_) {}

ConnectionPool::Lease::~Lease() {
  if (pool_ && client_) pool_->give_back(std::move(client_));
}

ConnectionPool::ConnectionPool(Factory factory, size_t max_idle, double max_idle_seconds)
    : factory_(std::move(factory)),
      max_idle_(max_idle),
      max_idle_time_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_idle_seconds))) {}

ConnectionPool::~ConnectionPool() = default;

bool idle_connection_usable(const httplib::ClientImpl& client) {
  if (client.is_socket_open() == 0) return false;
  pollfd descriptor{client.socket(), POLLIN, 0};
  const int ready = ::poll(&descriptor, 1, 0);
  return ready == 0;  // nothing to read, no hang-up, no error
}

Result<ConnectionPool::Lease> ConnectionPool::acquire() {
  std::vector<std::unique_ptr<httplib::ClientImpl>> stale;  // closed after the lock is released
  {
    std::lock_guard lock(mutex_);
    const Clock::time_point now = Clock::now();
    while (!idle_.empty()) {
      // The most recently used client: the likeliest to have a live connection.
      Idle idle = std::move(idle_.back());
      idle_.pop_back();
      if (now - idle.since <= max_idle_time_ && idle_connection_usable(*idle.client)) {
        return Lease(this, std::move(idle.client), /*reused=*/true);
      }
      stale.push_back(std::move(idle.client));
    }
  }
  return acquire_fresh();
}

Result<ConnectionPool::Lease> ConnectionPool::acquire_fresh() {
  auto client = factory_();
  if (!client) return client.error();
  return Lease(this, std::move(*client), /*reused=*/false);
}

void ConnectionPool::drop_idle() {
  std::vector<Idle> dropped;
  {
    std::lock_guard lock(mutex_);
    dropped.swap(idle_);
  }
}

void ConnectionPool::give_back(std::unique_ptr<httplib::ClientImpl> client) {
  std::lock_guard lock(mutex_);
  if (idle_.size() < max_idle_) idle_.push_back({std::move(client), Clock::now()});
  // Else the surplus client closes its connection as `client` is destroyed, after the lock.
}

}  // namespace tessera::kube
