// Idle HTTP clients kept for reuse. An httplib client is not safe to use from two threads at
// once, but it keeps its connection (and TLS session) open between requests; so each request
// borrows a client of its own, and gives it back, connection still open, for the next one.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/result.h"

namespace httplib {
class ClientImpl;
}

namespace tessera::kube {

class ConnectionPool {
 public:
  using Factory = std::function<Result<std::unique_ptr<httplib::ClientImpl>>()>;

  // A borrowed client; goes back to the pool when destroyed.
  class Lease {
   public:
    Lease(ConnectionPool* pool, std::unique_ptr<httplib::ClientImpl> client);
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    httplib::ClientImpl& operator*() const { return *client_; }
    httplib::ClientImpl* operator->() const { return client_.get(); }

   private:
    ConnectionPool* pool_;  // null once moved from
    std::unique_ptr<httplib::ClientImpl> client_;
  };

  // Keeps at most `max_idle` clients; more than that at once are made and then dropped.
  ConnectionPool(Factory factory, size_t max_idle);
  ~ConnectionPool();

  Result<Lease> acquire();

 private:
  void give_back(std::unique_ptr<httplib::ClientImpl> client);

  Factory factory_;
  size_t max_idle_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<httplib::ClientImpl>> idle_;
};

}  // namespace tessera::kube
