#include "apiserver/api_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/rand.h>

#include "apiserver/tls_certificates.h"
#include "apiserver/wire_json.h"

namespace tessera::apiserver {

namespace {

Result<std::string> random_token() {
  unsigned char bytes[24];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return Error{"cannot draw a random token"};
  std::string token;
  for (unsigned char byte : bytes) token += fmt::format("{:02x}", byte);
  return token;
}

bool is_ip_address(const std::string& host) {
  return !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos;
}

// Paths the real server lets anonymous clients read.
bool public_path(const std::string& path) {
  return path == "/healthz" || path == "/livez" || path == "/readyz" || path == "/version";
}

}  // namespace

ApiServer::ApiServer(ApiServerOptions options)
    : options_(std::move(options)),
      store_(options_.watch_history),
      api_(store_, registry_, options_.behaviour),
      faults_(options_.faults) {}

ApiServer::~ApiServer() { stop(); }

std::string ApiServer::url() const {
  const std::string host = options_.host == "0.0.0.0" ? "127.0.0.1" : options_.host;
  return fmt::format("{}://{}:{}", options_.tls ? "https" : "http", host, port_);
}

KubeconfigContents ApiServer::kubeconfig() const {
  KubeconfigContents contents;
  contents.server_url = url();
  contents.ca_certificate_pem = ca_certificate_pem_;
  contents.token = options_.authenticate ? token_ : "";
  return contents;
}

Status ApiServer::start() {
  if (http_) return Error{"the server is already started"};
  token_ = options_.token;
  if (token_.empty()) {
    Result<std::string> token = random_token();
    if (!token) return token.error();
    token_ = *token;
  }
  TlsContext tls;
  if (options_.tls) {
    std::vector<std::string> ips = {"127.0.0.1"};
    std::vector<std::string> names = {"localhost"};
    if (options_.host != "127.0.0.1" && options_.host != "0.0.0.0") {
      (is_ip_address(options_.host) ? ips : names).push_back(options_.host);
    }
    Result<ServerCertificates> certificates = make_server_certificates(ips, names);
    if (!certificates) return certificates.error();
    ca_certificate_pem_ = certificates->ca_certificate_pem;
    Result<TlsContext> context = tls_server_context(*certificates);
    if (!context) return context.error();
    tls = std::move(*context);
  }
  http_ = std::make_unique<ConnectionServer>(options_.connections, std::move(tls), &faults_);
  api_.install_defaults(kDefaultNamespaces);

  http_->set_keep_alive_max_count(1000);
  // Headers and body go out in separate writes; without TCP_NODELAY each response waits for the
  // client's delayed ACK (about 40 ms).
  http_->set_tcp_nodelay(true);
  http_->set_payload_max_length(16 * 1024 * 1024);
  if (options_.authenticate) {
    http_->set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
      const std::string header = request.get_header_value("Authorization");
      if (header == "Bearer " + token_ || (header.empty() && public_path(request.path))) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      response.status = 401;
      response.set_content(wire_json(unauthorized().to_status()), "application/json");
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  if (options_.request_log) {
    http_->set_logger([log = options_.request_log](const httplib::Request& request, const httplib::Response& response) {
      std::string query;
      for (const auto& [key, value] : request.params)
        query += fmt::format("{}{}={}", query.empty() ? "?" : "&", key, value);
      log(fmt::format("{} {}{} {} (Accept: {}; Content-Type: {})", request.method, request.path, query, response.status,
                      request.get_header_value("Accept"), request.get_header_value("Content-Type")));
    });
  }
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
    if (port_ <= 0) return Error{fmt::format("cannot listen on {}", options_.host)};
  } else {
    if (!http_->bind_to_port(options_.host, options_.port)) {
      return Error{fmt::format("cannot listen on {}:{}", options_.host, options_.port)};
    }
    port_ = options_.port;
  }
  http_->widen_listen_backlog();
  routes_ = std::make_unique<HttpRoutes>(api_, options_.watch_limits, fmt::format("{}:{}", options_.host, port_),
                                         &faults_);
  routes_->install(*http_);
  serving_ = std::thread([this] { http_->listen_after_bind(); });
  // stop() only reaches a server that runs: wait for it to.
  for (int waited = 0; !http_->is_running() && waited < 5000; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Ok{};
}

void ApiServer::stop() {
  if (!http_) return;
  if (routes_) routes_->stop_watches();
  store_.wake_waiters();
  http_->stop();
  if (serving_.joinable()) serving_.join();
  http_.reset();
}

}  // namespace tessera::apiserver
