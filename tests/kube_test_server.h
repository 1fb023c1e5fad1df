// An httplib server on 127.0.0.1 and a free port, serving canned answers on a thread of its
// own for the life of a test; and a poll-until helper for the API client tests.
#pragma once

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace tessera::testing {

class TestServer {
 public:
  explicit TestServer(std::unique_ptr<httplib::Server> server = std::make_unique<httplib::Server>())
      : server_(std::move(server)) {
    // Idle keep-alive connections hold a server thread; a short timeout keeps teardown quick.
    server_->set_keep_alive_timeout(1);
    server_->set_tcp_nodelay(true);  // as Go's servers; else every response waits on a delayed ACK
  }
  ~TestServer() {
    stopping_.store(true);
    if (thread_.joinable()) {
      server_->stop();
      thread_.join();
    }
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  httplib::Server& http() { return *server_; }
  // Set when the server is being torn down: streaming handlers end their streams on it.
  const std::atomic<bool>& stopping() const { return stopping_; }

  // Binds and serves; register handlers first.
  void start() {
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("cannot bind a test server port");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // stop() only works once the accept loop runs.
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  int port() const { return port_; }
  std::string url(const char* scheme = "http") const { return fmt::format("{}://127.0.0.1:{}", scheme, port_); }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::atomic<bool> stopping_{false};
  int port_ = 0;
  std::thread thread_;
};

// Polls `condition` every 5 ms until it holds (true) or `timeout_seconds` pass (false).
inline bool wait_until(const std::function<bool()>& condition, double timeout_seconds = 5) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_seconds));
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tessera::testing
