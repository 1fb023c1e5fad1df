#include "apiserver/connection_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>

namespace tessera::apiserver {

namespace {

using std::chrono::steady_clock;

// How often a wait looks up from poll() to see whether the server stops.
constexpr std::chrono::milliseconds kWaitSlice{100};
constexpr size_t kReadBufferSize = 16 * 1024;
constexpr std::string_view kHeaderEnd = "\r\n\r\n";

void address_of(const sockaddr_storage& address, socklen_t length, std::string& ip, int& port) {
  char host[NI_MAXHOST] = {};
  char service[NI_MAXSERV] = {};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof(host), service, sizeof(service),
                  NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(service);
  }
}

}  // namespace

ConnectionStream::ConnectionStream(int socket, StreamTimeouts timeouts, std::function<bool()> serving)
    : socket_(socket), timeouts_(timeouts), serving_(std::move(serving)), buffer_(kReadBufferSize) {
  const int flags = fcntl(socket_, F_GETFL, 0);
  fcntl(socket_, F_SETFL, flags | O_NONBLOCK);
}

ConnectionStream::~ConnectionStream() { close(false); }

bool ConnectionStream::wait(short events, SteadyTime until) const {
  for (;;) {
    if (!serving_()) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd descriptor{socket_, events, 0};
    const int ready = poll(&descriptor, 1, static_cast<int>(std::min(left, kWaitSlice).count()) + 1);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

bool ConnectionStream::accept_tls(SSL_CTX* context, SteadyTime deadline) {
  ssl_ = SSL_new(context);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, socket_) != 1) return false;
  for (;;) {
    ERR_clear_error();
    const int result = SSL_accept(ssl_);
    if (result == 1) return true;
    const int error = SSL_get_error(ssl_, result);
    if (error == SSL_ERROR_WANT_READ) {
      if (!wait(POLLIN, deadline)) return false;
    } else if (error == SSL_ERROR_WANT_WRITE) {
      if (!wait(POLLOUT, deadline)) return false;
    } else {
      return false;
    }
  }
}

WaitOutcome ConnectionStream::wait_for_request(SteadyTime until, const std::function<bool()>& give_up) {
  if (buffer_begin_ < buffer_end_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) return WaitOutcome::kReady;
  for (;;) {
    if (!serving_() || give_up()) return WaitOutcome::kGaveUp;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady_clock::now());
    if (left.count() <= 0) return WaitOutcome::kTimedOut;
    pollfd descriptor{socket_, POLLIN, 0};
    const int ready = poll(&descriptor, 1, static_cast<int>(std::min(left, kWaitSlice).count()) + 1);
    if (ready > 0) return WaitOutcome::kReady;
    if (ready < 0 && errno != EINTR) return WaitOutcome::kGaveUp;
  }
}

void ConnectionStream::begin_request(SteadyTime header_deadline) {
  reading_headers_ = true;
  header_end_matched_ = 0;
  header_deadline_ = header_deadline;
  response_started_ = false;
}

SteadyTime ConnectionStream::read_deadline() const {
  const SteadyTime idle = steady_clock::now() + timeouts_.read;
  return reading_headers_ ? std::min(idle, header_deadline_) : idle;
}

ssize_t ConnectionStream::receive(char* data, size_t size, SteadyTime until) {
  const int length = static_cast<int>(std::min<size_t>(size, INT_MAX));
  for (;;) {
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int received = SSL_read(ssl_, data, length);
      if (received > 0) return received;
      const int error = SSL_get_error(ssl_, received);
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      if (error == SSL_ERROR_WANT_READ) {
        if (!wait(POLLIN, until)) return -1;
      } else if (error == SSL_ERROR_WANT_WRITE) {
        if (!wait(POLLOUT, until)) return -1;
      } else {
        return -1;
      }
      continue;
    }
    const ssize_t received = recv(socket_, data, static_cast<size_t>(length), 0);
    if (received >= 0) return received;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (!wait(POLLIN, until)) return -1;
  }
}

// While the line and headers are read, watches for the empty line that ends them: from there on
// the header deadline no longer applies (bodies only have the idle read timeout).
void ConnectionStream::note_header_bytes(const char* data, size_t size) {
  for (size_t i = 0; i < size && reading_headers_; ++i) {
    if (data[i] == kHeaderEnd[header_end_matched_]) {
      ++header_end_matched_;
    } else {
      header_end_matched_ = data[i] == '\r' ? 1 : 0;
    }
    if (header_end_matched_ == static_cast<int>(kHeaderEnd.size())) reading_headers_ = false;
  }
}

ssize_t ConnectionStream::read(char* data, size_t size) {
  if (abandoned_) return -1;
  if (buffer_begin_ == buffer_end_) {
    const ssize_t received = receive(buffer_.data(), buffer_.size(), read_deadline());
    if (received < 0 && reading_headers_ && steady_clock::now() >= header_deadline_) abandoned_ = true;
    if (received <= 0) return received;
    buffer_begin_ = 0;
    buffer_end_ = static_cast<size_t>(received);
  }
  const size_t count = std::min(size, buffer_end_ - buffer_begin_);
  std::copy_n(buffer_.data() + buffer_begin_, count, data);
  buffer_begin_ += count;
  note_header_bytes(data, count);
  return static_cast<ssize_t>(count);
}

// httplib writes a response's status line and headers in one piece, before any of its body.
bool ConnectionStream::drops_response(std::string_view data) const {
  const std::string_view head = data.substr(0, data.find(kHeaderEnd));
  return head.find("\r\n" + std::string(kCloseWithoutResponseHeader) + ":") != std::string_view::npos;
}

ssize_t ConnectionStream::send_bytes(const char* data, size_t size) {
  const int length = static_cast<int>(std::min<size_t>(size, INT_MAX));
  for (;;) {
    const SteadyTime until = steady_clock::now() + timeouts_.write;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int sent = SSL_write(ssl_, data, length);
      if (sent > 0) return sent;
      const int error = SSL_get_error(ssl_, sent);
      if (error == SSL_ERROR_WANT_WRITE) {
        if (!wait(POLLOUT, until)) return -1;
      } else if (error == SSL_ERROR_WANT_READ) {
        if (!wait(POLLIN, until)) return -1;
      } else {
        return -1;
      }
      continue;
    }
    const ssize_t sent = ::send(socket_, data, static_cast<size_t>(length), MSG_NOSIGNAL);
    if (sent >= 0) return sent;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (!wait(POLLOUT, until)) return -1;
  }
}

ssize_t ConnectionStream::write(const char* data, size_t size) {
  if (abandoned_) return -1;
  const std::string_view text(data, size);
  if (!response_started_ && text.starts_with("HTTP/1.1 ") && !text.starts_with("HTTP/1.1 100 ")) {
    response_started_ = true;
    if (drops_response(text)) {
      abandoned_ = true;
      return -1;
    }
  }
  return send_bytes(data, size);
}

bool ConnectionStream::is_readable() const {
  if (buffer_begin_ < buffer_end_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) return true;
  pollfd descriptor{socket_, POLLIN, 0};
  return poll(&descriptor, 1, 0) > 0;
}

// What a streaming response (a watch) asks before it goes on: false once the client has gone.
bool ConnectionStream::is_writable() const {
  pollfd descriptor{socket_, static_cast<short>(POLLOUT | POLLRDHUP), 0};
  const int ready = poll(&descriptor, 1, static_cast<int>(timeouts_.write.count()));
  return ready > 0 && (descriptor.revents & (POLLERR | POLLHUP | POLLRDHUP)) == 0 &&
         (descriptor.revents & POLLOUT) != 0;
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getpeername(socket_, reinterpret_cast<sockaddr*>(&address), &length) == 0) address_of(address, length, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length) == 0) address_of(address, length, ip, port);
}

void ConnectionStream::close(bool graceful) {
  if (socket_ < 0) return;
  if (ssl_ != nullptr) {
    // One attempt: the socket is non-blocking, and a client that does not read gets no more.
    if (graceful) SSL_shutdown(ssl_);
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
  ::shutdown(socket_, SHUT_RDWR);
  ::close(socket_);
  socket_ = -1;
}

}  // namespace tessera::apiserver
