// The HTTP(S) server under the API: httplib's routing and request parsing, with the connections
// handled here so that slow, idle or hostile clients cannot starve the others.
//
// - Each open connection has a thread of its own (ElasticThreadPool), started on demand up to
//   max_connections: a client that is slow to send harms nobody else.
// - A connection must finish its TLS handshake, and each request its line and headers, within
//   header_timeout of starting (httplib's timeouts restart with every byte it receives).
// - A kept-alive connection idle for idle_timeout is closed, and idle ones close at once while
//   three quarters of max_connections are open: idle clients cannot hold threads others need.
// - Watches, which hold their connection for their whole length, are capped apart
//   (WatchLimits::max_open, below max_connections), so requests always find threads.
// - Faults, when asked for (FaultInjector): idle connections closed after a random time, and
//   responses not sent (kCloseWithoutResponseHeader) with the connection closed.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "apiserver/fault_injector.h"
#include "apiserver/tls_certificates.h"
#include "core/result.h"

namespace tessera::apiserver {

class ConnectionStream;

struct ConnectionLimits {
  size_t max_connections = 4096;  // open at once, each with its thread; more wait to be served
  std::chrono::milliseconds header_timeout{10000};  // TLS handshake; each request's line and headers
  std::chrono::milliseconds idle_timeout{90000};    // between requests, as the real server's
};

struct SslContextFree {
  void operator()(SSL_CTX* context) const { SSL_CTX_free(context); }
};
using TlsContext = std::unique_ptr<SSL_CTX, SslContextFree>;

// A TLS server context serving `certificates`' server certificate and key.
Result<TlsContext> tls_server_context(const ServerCertificates& certificates);

class ConnectionServer : public httplib::Server {
 public:
  // `tls` null: plain HTTP. `faults` null: none; it must outlive the server.
  ConnectionServer(ConnectionLimits limits, TlsContext tls, FaultInjector* faults);

  bool is_valid() const override { return true; }
  // httplib listens with a backlog of 5: connections arriving together would wait for the
  // client's SYN retries. Call after binding.
  void widen_listen_backlog();
  size_t open_connections() const { return open_connections_; }

 private:
  bool process_and_close_socket(socket_t socket) override;
  void serve(ConnectionStream& stream);
  bool serving() const { return svr_sock_ != INVALID_SOCKET; }
  bool crowded() const { return open_connections_ * 4 >= limits_.max_connections * 3; }

  const ConnectionLimits limits_;
  const TlsContext tls_;
  FaultInjector* const faults_;
  std::atomic<size_t> open_connections_{0};
};

}  // namespace tessera::apiserver
