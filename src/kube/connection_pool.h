// Idle HTTP clients kept for reuse. An httplib client is not safe to use from two threads at
// once, but it keeps its connection (and TLS session) open between requests; so each request
// borrows a client of its own, and gives it back, connection still open, for the next one.
//
// Servers and load balancers close idle keep-alive connections (kube-apiserver after 90 s,
// many proxies sooner), and a request sent on such a connection fails. So a connection is only
// lent again while it is young enough and shows no sign of having been closed: an idle HTTP/1.1
// connection has nothing to read, so anything readable (a FIN, a TLS close_notify, a reset)
// means the server is done with it.
#pragma once

#include <chrono>
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
  using Clock = std::chrono::steady_clock;

  // A borrowed client; goes back to the pool when destroyed, unless discarded.
  class Lease {
   public:
    Lease(ConnectionPool* pool, std::unique_ptr<httplib::ClientImpl> client, bool reused);
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    httplib::ClientImpl& operator*() const { return *client_; }
    httplib::ClientImpl* operator->() const { return client_.get(); }
    // Whether the client came from the pool with its connection already open.
    bool reused() const { return reused_; }
    // The connection broke: close it rather than lend it again.
    void discard() { client_.reset(); }

   private:
    ConnectionPool* pool_;  // null once moved from
    std::unique_ptr<httplib::ClientImpl> client_;
    bool reused_;
  };

  // Keeps at most `max_idle` clients, none idle for longer than `max_idle_seconds`; more than
  // `max_idle` at once are made and then dropped.
  ConnectionPool(Factory factory, size_t max_idle, double max_idle_seconds);
  ~ConnectionPool();

  // A pooled client whose connection still looks usable, else a new one.
  Result<Lease> acquire();
  // Always a new client (a new connection), for a request that failed on a reused one.
  Result<Lease> acquire_fresh();
  // Closes every idle connection: when one turned out stale, those idle as long are suspect too.
  void drop_idle();

 private:
  struct Idle {
    std::unique_ptr<httplib::ClientImpl> client;
    Clock::time_point since;
  };
  void give_back(std::unique_ptr<httplib::ClientImpl> client);

  Factory factory_;
  size_t max_idle_;
  Clock::duration max_idle_time_;
  std::mutex mutex_;
  std::vector<Idle> idle_;
};

// Whether an idle client's connection is open and has nothing to read (see the header comment).
bool idle_connection_usable(const httplib::ClientImpl& client);

}  // namespace tessera::kube
