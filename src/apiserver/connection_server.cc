#include "apiserver/connection_server.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <sys/socket.h>

#include "apiserver/connection_stream.h"
#include "apiserver/elastic_thread_pool.h"

namespace tessera::apiserver {

namespace {

using std::chrono::steady_clock;

constexpr size_t kKeptIdleThreads = 8;
constexpr std::chrono::milliseconds kThreadRetirement{30000};

std::chrono::milliseconds milliseconds(time_t seconds, time_t microseconds) {
  return std::chrono::milliseconds(seconds * 1000 + microseconds / 1000);
}

struct Counted {
  explicit Counted(std::atomic<size_t>& count) : count_(count) { ++count_; }
  ~Counted() { --count_; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  std::atomic<size_t>& count_;
};

}  // namespace

Result<TlsContext> tls_server_context(const ServerCertificates& certificates) {
  TlsContext context(SSL_CTX_new(TLS_server_method()));
  if (!context) return Error{"cannot make a TLS context"};
  SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
  SSL_CTX_set_options(context.get(), SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  BIO* certificate_bio = BIO_new_mem_buf(certificates.server_certificate_pem.data(),
                                         static_cast<int>(certificates.server_certificate_pem.size()));
  BIO* key_bio = BIO_new_mem_buf(certificates.server_private_key_pem.data(),
                                 static_cast<int>(certificates.server_private_key_pem.size()));
  X509* certificate = PEM_read_bio_X509(certificate_bio, nullptr, nullptr, nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  const bool usable = certificate != nullptr && key != nullptr &&
                      SSL_CTX_use_certificate(context.get(), certificate) == 1 &&
                      SSL_CTX_use_PrivateKey(context.get(), key) == 1 && SSL_CTX_check_private_key(context.get()) == 1;
  // The context holds its own references.
  X509_free(certificate);
  EVP_PKEY_free(key);
  BIO_free(certificate_bio);
  BIO_free(key_bio);
  if (!usable) return Error{"cannot set up TLS with the generated certificate"};
  return context;
}

ConnectionServer::ConnectionServer(ConnectionLimits limits, TlsContext tls, FaultInjector* faults)
    : limits_(limits), tls_(std::move(tls)), faults_(faults) {
  new_task_queue = [this] {
    return new ElasticThreadPool(limits_.max_connections, kKeptIdleThreads, kThreadRetirement);
  };
  // What the Keep-Alive response header announces.
  keep_alive_timeout_sec_ =
      std::max<time_t>(1, std::chrono::duration_cast<std::chrono::seconds>(limits_.idle_timeout).count());
}

void ConnectionServer::widen_listen_backlog() {
  // listen() again on a listening socket sets its backlog anew.
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, SOMAXCONN);
}

bool ConnectionServer::process_and_close_socket(socket_t socket) {
  Counted counted(open_connections_);
  const StreamTimeouts timeouts{milliseconds(read_timeout_sec_, read_timeout_usec_),
                                milliseconds(write_timeout_sec_, write_timeout_usec_)};
  ConnectionStream stream(socket, timeouts, [this] { return serving(); });
  if (!tls_ || stream.accept_tls(tls_.get(), steady_clock::now() + limits_.header_timeout)) serve(stream);
  stream.close(!stream.abandoned());
  return true;
}

void ConnectionServer::serve(ConnectionStream& stream) {
  for (size_t served = 0; serving(); ++served) {
    if (served > 0) {
      // Between requests: the idle timeout, or the shorter random one of the idle-close fault.
      std::chrono::milliseconds idle = limits_.idle_timeout;
      const std::optional<std::chrono::milliseconds> fault = faults_ ? faults_->draw_idle_limit() : std::nullopt;
      const bool faulty = fault && *fault < idle;
      if (faulty) idle = *fault;
      const WaitOutcome outcome = stream.wait_for_request(steady_clock::now() + idle, [this] { return crowded(); });
      if (outcome != WaitOutcome::kReady) {
        if (outcome == WaitOutcome::kTimedOut && faulty) faults_->count(Fault::kIdleClose);
        return;
      }
    }
    // The first request's deadline runs from the end of the handshake, the others' from their
    // first bytes.
    stream.begin_request(steady_clock::now() + limits_.header_timeout);
    const bool last = !serving() || served + 1 >= keep_alive_max_count_;
    bool closed_by_client = false;
    const bool ok = process_request(stream, last, closed_by_client, nullptr);
    if (!ok || closed_by_client || last || stream.abandoned()) return;
  }
}

}  // namespace tessera::apiserver
