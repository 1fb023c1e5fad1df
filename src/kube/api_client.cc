#include "kube/api_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "kube/bearer_token.h"
#include "kube/connection_pool.h"
#include "kube/server_address.h"
#include "kube/stop_watcher.h"
#include "kube/tls_credentials.h"
#include "kube/watch_stream.h"

namespace tessera::kube {
namespace {

constexpr size_t kMaxIdleConnections = 64;  // about the largest worker pool that binds pods
constexpr double kMaxConnectSeconds = 10;
constexpr size_t kMaxErrorBodyBytes = 64 * 1024;
// A watch with no timeoutSeconds is ended by the API server after 30 to 60 minutes.
constexpr double kDefaultWatchSeconds = 3600;
// How long past its own timeoutSeconds a silent watch is given before it counts as dead.
constexpr double kWatchSilenceMarginSeconds = 60;

const char* patch_content_type(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

struct SecondsAndMicros {
  time_t seconds;
  time_t micros;
};

SecondsAndMicros split_seconds(double seconds) {
  seconds = std::max(seconds, 0.001);
  const double whole = std::floor(seconds);
  return {static_cast<time_t>(whole), static_cast<time_t>((seconds - whole) * 1e6)};
}

void set_timeouts(httplib::ClientImpl& client, double read_seconds, double connect_seconds) {
  const auto read = split_seconds(read_seconds);
  const auto connect = split_seconds(connect_seconds);
  client.set_connection_timeout(connect.seconds, connect.micros);
  client.set_read_timeout(read.seconds, read.micros);
  client.set_write_timeout(read.seconds, read.micros);
}

// The read timeout for a watch: httplib's read timeout bounds the silence between two reads,
// and silence is normal for a watch, so only a watch quiet for longer than the server was
// asked to keep it open is given up on.
double watch_silence_limit(std::string_view path) {
  double seconds = kDefaultWatchSeconds;
  const size_t at = path.find("timeoutSeconds=");
  if (at != std::string_view::npos) {
    const std::string_view digits = path.substr(at + std::string_view("timeoutSeconds=").size());
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc() && value > 0) seconds = value;
  }
  return seconds + kWatchSilenceMarginSeconds;
}

std::string host_header(const ServerAddress& address) {
  const bool ipv6 = address.host.find(':') != std::string::npos;
  return ipv6 ? fmt::format("[{}]:{}", address.host, address.port) : fmt::format("{}:{}", address.host, address.port);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ApiResponse

nlohmann::json ApiResponse::json() const {
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? nlohmann::json() : parsed;
}

std::string ApiResponse::error_message() const {
  const nlohmann::json parsed = json();
  if (parsed.is_object()) {
    if (auto message = parsed.find("message"); message != parsed.end() && message->is_string()) {
      return message->get<std::string>();
    }
  }
  return body;
}

std::string ApiResponse::reason() const {
  const nlohmann::json parsed = json();
  if (parsed.is_object()) {
    if (auto reason = parsed.find("reason"); reason != parsed.end() && reason->is_string()) {
      return reason->get<std::string>();
    }
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// ApiClient

struct ApiClient::Impl {
  explicit Impl(ClientConfig client_config)
      : config(std::move(client_config)), token(config.bearer_token, config.bearer_token_file) {
    auto parsed = parse_server_address(config.server);
    if (!parsed) {
      setup_error = parsed.error();
      return;
    }
    address = std::move(*parsed);
    host = host_header(address);
    if (address.tls) {
      auto credentials = TlsCredentials::create(config);
      if (!credentials) {
        setup_error = Error{fmt::format("server {}: {}", config.server, credentials.error().message)};
        return;
      }
      tls = std::move(*credentials);
    }
    pool = std::make_unique<ConnectionPool>([this] { return make_client(); }, kMaxIdleConnections);
  }

  Result<std::unique_ptr<httplib::ClientImpl>> make_client() const {
    std::unique_ptr<httplib::ClientImpl> client;
    if (tls) {
      auto tls_client = tls->make_client(address.host, address.port);
      if (!tls_client) return Error{fmt::format("server {}: {}", config.server, tls_client.error().message)};
      client = std::move(*tls_client);
    } else {
      client = std::make_unique<httplib::ClientImpl>(address.host, address.port);
    }
    client->set_keep_alive(true);
    // httplib writes headers and body separately; with Nagle's algorithm the body would wait
    // for the server's delayed ACK (~40 ms) on every write request.
    client->set_tcp_nodelay(true);
    client->set_url_encode(false);  // paths arrive percent-encoded already (url_encode)
    return client;
  }

  httplib::Headers headers() {
    httplib::Headers headers{{"Accept", "application/json"}, {"User-Agent", "tessera/0.1"}, {"Host", host}};
    if (std::string bearer = token.current(); !bearer.empty()) {
      headers.emplace("Authorization", fmt::format("Bearer {}", bearer));
    }
    return headers;
  }

  double request_seconds() const { return request_timeout_seconds.load(); }
  double connect_seconds() const { return std::min(request_seconds(), kMaxConnectSeconds); }

  std::string describe(httplib::Error error, const httplib::ClientImpl& client) const {
    switch (error) {
      case httplib::Error::Connection:
        return fmt::format("cannot connect to {}", config.server);
      case httplib::Error::ConnectionTimeout:
        return fmt::format("timed out connecting to {}", config.server);
      case httplib::Error::Read:
        return fmt::format("the connection to {} broke or timed out while reading", config.server);
      case httplib::Error::Write:
        return fmt::format("the connection to {} broke or timed out while sending", config.server);
      case httplib::Error::SSLConnection:
        return fmt::format("TLS handshake with {} failed", config.server);
      case httplib::Error::SSLLoadingCerts:
        return "cannot load the system's CA certificates";
      case httplib::Error::SSLServerVerification: {
        const auto* tls_client = dynamic_cast<const httplib::SSLClient*>(&client);
        const long code = tls_client != nullptr ? tls_client->get_openssl_verify_result() : X509_V_OK;
        if (code != X509_V_OK) {
          return fmt::format("the certificate of {} is not trusted: {}", config.server,
                             X509_verify_cert_error_string(code));
        }
        return fmt::format("the certificate of {} is not valid for host {}", config.server, address.host);
      }
      default:
        return fmt::format("request to {} failed: {}", config.server, httplib::to_string(error));
    }
  }

  Result<ApiResponse> request(const std::string& method, const std::string& path, const nlohmann::json* body,
                              const char* content_type, const std::atomic<bool>* stop) {
    if (setup_error) return *setup_error;
    httplib::Request request;
    request.method = method;
    request.path = address.path_prefix + path;
    if (body != nullptr) request.body = body->dump();
    // A kept-alive connection the server has just closed fails the first request on it; a GET
    // is safe to send again on a fresh one.
    const int attempts = method == "GET" ? 2 : 1;
    for (int attempt = 1;; ++attempt) {
      auto lease = pool->acquire();
      if (!lease) return lease.error();
      httplib::ClientImpl& client = **lease;
      const bool reused_connection = client.is_socket_open() != 0;
      set_timeouts(client, request_seconds(), connect_seconds());
      request.headers = headers();
      if (body != nullptr) request.headers.emplace("Content-Type", content_type);
      httplib::Result result = [&] {
        if (stop == nullptr) return client.send(request);
        StopWatcher watcher(*stop, [&client] { client.stop(); });
        return client.send(request);
      }();
      if (result) return ApiResponse{result->status, std::move(result->body)};
      if (stop != nullptr && stop->load()) return Error{fmt::format("{} {}: stopped", method, path)};
      const bool broken = result.error() == httplib::Error::Read || result.error() == httplib::Error::Write;
      if (!(broken && reused_connection && attempt < attempts)) {
        return Error{fmt::format("{} {}: {}", method, path, describe(result.error(), client))};
      }
    }
  }

  Result<WatchEnd> watch(const std::string& path, const std::function<bool(WatchEvent&)>& on_event,
                         const std::atomic<bool>& stop) {
    if (setup_error) return *setup_error;
    if (stop.load()) return WatchEnd::kStopped;
    auto lease = pool->acquire();
    if (!lease) return lease.error();
    httplib::ClientImpl& client = **lease;
    set_timeouts(client, watch_silence_limit(path), connect_seconds());

    int status = 0;
    std::string error_body;
    LineSplitter lines;
    bool consumer_stopped = false;
    std::optional<Error> malformed;
    const auto on_line = [&](std::string_view line) {
      auto event = parse_watch_event(line);
      if (!event) {
        malformed = event.error();
        return false;
      }
      if (!on_event(*event)) {
        consumer_stopped = true;
        return false;
      }
      return true;
    };
    httplib::Result result = [&] {
      StopWatcher watcher(stop, [&client] { client.stop(); });
      return client.Get(
          address.path_prefix + path, headers(),
          [&](const httplib::Response& response) {
            status = response.status;
            return true;
          },
          [&](const char* data, size_t length) {
            if (status < 200 || status >= 300) {  // an error Status body: keep it for the message
              const size_t room = kMaxErrorBodyBytes - std::min(error_body.size(), kMaxErrorBodyBytes);
              error_body.append(data, std::min(length, room));
              return true;
            }
            return stop.load() ? false : lines.feed(std::string_view(data, length), on_line);
          });
    }();

    if (malformed) return Error{fmt::format("watch {}: {}", path, malformed->message)};
    if (consumer_stopped || stop.load()) return WatchEnd::kStopped;
    if (status != 0 && (status < 200 || status >= 300)) {
      return Error{fmt::format("HTTP {}: {}", status, ApiResponse{status, std::move(error_body)}.error_message())};
    }
    if (!result) return Error{fmt::format("watch {}: {}", path, describe(result.error(), client))};
    if (!lines.finish(on_line)) {
      if (malformed) return Error{fmt::format("watch {}: {}", path, malformed->message)};
      return WatchEnd::kStopped;
    }
    return WatchEnd::kClosed;
  }

  const ClientConfig config;
  std::optional<Error> setup_error;  // a bad server URL or bad TLS material: every call fails with it
  ServerAddress address;
  std::string host;
  std::unique_ptr<TlsCredentials> tls;  // https only; the pooled clients refer to it
  BearerToken token;
  std::atomic<double> request_timeout_seconds{30};
  std::unique_ptr<ConnectionPool> pool;  // declared last: its clients go before what they use
};

ApiClient::ApiClient(ClientConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
ApiClient::~ApiClient() = default;

const ClientConfig& ApiClient::config() const { return impl_->config; }

Result<ApiResponse> ApiClient::get(const std::string& path) {
  return impl_->request("GET", path, nullptr, "", nullptr);
}

Result<ApiResponse> ApiClient::get(const std::string& path, const std::atomic<bool>& stop) {
  return impl_->request("GET", path, nullptr, "", &stop);
}

Result<ApiResponse> ApiClient::post(const std::string& path, const nlohmann::json& body) {
  return impl_->request("POST", path, &body, "application/json", nullptr);
}

Result<ApiResponse> ApiClient::put(const std::string& path, const nlohmann::json& body) {
  return impl_->request("PUT", path, &body, "application/json", nullptr);
}

Result<ApiResponse> ApiClient::patch(const std::string& path, const nlohmann::json& body, PatchType type) {
  return impl_->request("PATCH", path, &body, patch_content_type(type), nullptr);
}

Result<ApiResponse> ApiClient::del(const std::string& path) {
  return impl_->request("DELETE", path, nullptr, "", nullptr);
}

Result<WatchEnd> ApiClient::watch(const std::string& path, const std::function<bool(WatchEvent&)>& on_event,
                                  const std::atomic<bool>& stop) {
  return impl_->watch(path, on_event, stop);
}

void ApiClient::set_request_timeout(double seconds) { impl_->request_timeout_seconds.store(seconds); }

int watch_http_status(const Error& error) {
  const std::string_view message = error.message;
  if (!message.starts_with("HTTP ")) return 0;
  int status = 0;
  const char* begin = message.data() + 5;
  const auto [end, ec] = std::from_chars(begin, message.data() + message.size(), status);
  if (ec != std::errc() || end == message.data() + message.size() || *end != ':') return 0;
  return status;
}

std::string url_encode(std::string_view value) {
  std::string encoded;
  encoded.reserve(value.size());
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                            (byte >= '0' && byte <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      encoded.push_back(c);
    } else {
      encoded += fmt::format("%{:02X}", byte);
    }
  }
  return encoded;
}

}  // namespace tessera::kube
