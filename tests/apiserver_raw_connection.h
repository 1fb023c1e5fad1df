// For the API server tests of connection handling: a raw TCP (or TLS) connection to the server
// that sends exactly what a test says, byte by byte if need be, and sees how the server closes it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

namespace tessera::apiserver::testing {

class RawConnection {
 public:
  // Every read and write gives up after `safety` (a safety net, not an expectation).
  explicit RawConnection(int port, int safety_seconds = 30) : socket_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    timeval safety{safety_seconds, 0};
    setsockopt(socket_, SOL_SOCKET, SO_RCVTIMEO, &safety, sizeof(safety));
    setsockopt(socket_, SOL_SOCKET, SO_SNDTIMEO, &safety, sizeof(safety));
    connected_ = ::connect(socket_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (context_ != nullptr) SSL_CTX_free(context_);
    if (socket_ >= 0) ::close(socket_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }

  // A TLS handshake (the certificate unchecked: these tests are about connections).
  bool start_tls() {
    context_ = SSL_CTX_new(TLS_client_method());
    ssl_ = SSL_new(context_);
    SSL_set_fd(ssl_, socket_);
    return SSL_connect(ssl_) == 1;
  }

  bool send_text(std::string_view text) {
    if (ssl_ != nullptr) return SSL_write(ssl_, text.data(), static_cast<int>(text.size())) == static_cast<int>(text.size());
    return ::send(socket_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  }

  // Everything the server sends until it closes the connection; `closed` tells whether it did
  // (false: the safety timeout passed first).
  std::string read_until_closed(bool& closed) {
    std::string received;
    char buffer[4096];
    for (;;) {
      const ssize_t count = ssl_ != nullptr ? SSL_read(ssl_, buffer, sizeof(buffer))
                                            : ::recv(socket_, buffer, sizeof(buffer), 0);
      if (count > 0) {
        received.append(buffer, static_cast<size_t>(count));
        continue;
      }
      if (ssl_ != nullptr) {
        const int error = SSL_get_error(ssl_, static_cast<int>(count));
        if (error == SSL_ERROR_ZERO_RETURN) {
          // TLS's close_notify: the TCP connection must end too.
          const ssize_t after = ::recv(socket_, buffer, sizeof(buffer), 0);
          closed = after == 0 || (after < 0 && errno == ECONNRESET);
        } else {
          closed = error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE;  // those: the safety timeout
        }
        return received;
      }
      closed = count == 0 || errno == ECONNRESET;
      return received;
    }
  }

  // Reads until `marker` has arrived (false: the connection ended or the safety timeout passed).
  bool read_until(std::string_view marker) {
    std::string received;
    char byte = 0;
    while (received.find(marker) == std::string::npos) {
      const ssize_t count = ssl_ != nullptr ? SSL_read(ssl_, &byte, 1) : ::recv(socket_, &byte, 1, 0);
      if (count <= 0) return false;
      received.push_back(byte);
    }
    return true;
  }

  bool closed_by_server() {
    bool closed = false;
    read_until_closed(closed);
    return closed;
  }

 private:
  int socket_;
  bool connected_ = false;
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
};

}  // namespace tessera::apiserver::testing
