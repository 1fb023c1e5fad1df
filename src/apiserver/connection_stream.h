// One client connection as httplib reads requests from and writes responses to it: plain TCP or
// TLS, on a non-blocking socket, with deadlines httplib's own streams lack (their timeouts
// restart with every byte, so a client sending a byte now and then holds its connection
// forever): the TLS handshake and a request's line and headers must arrive by a deadline.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <functional>
#include <string_view>
#include <vector>

namespace tessera::apiserver {

// A response carrying this header is not sent: the connection is closed instead, with nothing
// written (what fault injection uses to drop requests).
inline constexpr std::string_view kCloseWithoutResponseHeader = "X-Tessera-Close-Without-Response";

using SteadyTime = std::chrono::steady_clock::time_point;

struct StreamTimeouts {
  std::chrono::milliseconds read{5000};   // with no byte arriving
  std::chrono::milliseconds write{5000};  // with no byte leaving
};

enum class WaitOutcome { kReady, kTimedOut, kGaveUp };

class ConnectionStream : public httplib::Stream {
 public:
  // Takes `socket` over (closed by close() or the destructor). `serving` turns false when the
  // server stops: every wait then ends.
  ConnectionStream(int socket, StreamTimeouts timeouts, std::function<bool()> serving);
  ~ConnectionStream() override;
  ConnectionStream(const ConnectionStream&) = delete;
  ConnectionStream& operator=(const ConnectionStream&) = delete;

  // The server side of a TLS handshake, done by `deadline`.
  bool accept_tls(SSL_CTX* context, SteadyTime deadline);
  // Until `until`, or until `give_up` says so (checked a few times a second), waits for the
  // first bytes of the next request; kReady also when the client closed (reading will tell).
  WaitOutcome wait_for_request(SteadyTime until, const std::function<bool()>& give_up);
  // The next request's line and headers must be read by `header_deadline`.
  void begin_request(SteadyTime header_deadline);
  // Whether the connection must close with nothing more sent: a response carried
  // kCloseWithoutResponseHeader, or the request's headers missed their deadline (httplib would
  // answer 400 and read on).
  bool abandoned() const { return abandoned_; }
  // Sends TLS's close_notify when `graceful`, then closes the TCP connection.
  void close(bool graceful);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* data, size_t size) override;
  ssize_t write(const char* data, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return socket_; }

 private:
  // Polls for `events` until `until` (false then, or when the server stops).
  bool wait(short events, SteadyTime until) const;
  ssize_t receive(char* data, size_t size, SteadyTime until);
  ssize_t send_bytes(const char* data, size_t size);
  SteadyTime read_deadline() const;
  void note_header_bytes(const char* data, size_t size);
  bool drops_response(std::string_view data) const;

  int socket_;
  SSL* ssl_ = nullptr;
  const StreamTimeouts timeouts_;
  const std::function<bool()> serving_;
  std::vector<char> buffer_;
  size_t buffer_begin_ = 0;
  size_t buffer_end_ = 0;
  bool reading_headers_ = false;
  int header_end_matched_ = 0;  // how much of "\r\n\r\n" the last bytes read match
  SteadyTime header_deadline_;
  bool response_started_ = false;
  bool abandoned_ = false;
};

}  // namespace tessera::apiserver
