#include "kube/api_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <thread>

#include "kube/bearer_token.h"
#include "kube/connection_pool.h"
#include "kube/server_address.h"
#include "kube/stop_watcher.h"
#include "kube/tls_credentials.h"
#include "kube/watch_stream.h"

namespace tessera::kube {
namespace {

constexpr size_t kMaxIdleConnections = 64;  // about the largest worker pool that binds pods
// Below the idle timeouts of kube-apiserver (90 s) and of the usual load balancers (60 s).
constexpr double kMaxIdleConnectionSeconds = 45;
// An overloaded or briefly failing server (429, 5xx) that says when to come back with
// Retry-After is asked again this many times, waiting at most kMaxRetryAfterSeconds each:
// longer waits are left to the caller's own next attempt (the next cycle, the informer's backoff).
constexpr int kMaxStatusRetries = 2;
constexpr double kMaxRetryAfterSeconds = 1;
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
  // A plain body ("404 page not found\n" from a server's default handler) ends a log line.
  std::string_view text = body;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return std::string(text);
}

std::string ApiResponse::failure_text() const { return fmt::format("HTTP {}: {}", status, error_message()); }

std::string ApiResponse::reason() const {
  const nlohmann::json parsed = json();
  if (parsed.is_object()) {
    if (auto reason = parsed.find("reason"); reason != parsed.end() && reason->is_string()) {
      return reason->get<std::string>();
    }
  }
  return "";
}

bool ApiResponse::has_cause(std::string_view cause_reason) const {
  const nlohmann::json parsed = json();
  const nlohmann::json causes =
      parsed.is_object() ? parsed.value("/details/causes"_json_pointer, nlohmann::json()) : nlohmann::json();
  if (!causes.is_array()) return false;
  for (const nlohmann::json& cause : causes) {
    if (cause.is_object() && cause.value("reason", "") == cause_reason) return true;
  }
  return false;
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
    pool = std::make_unique<ConnectionPool>([this] { return make_client(); }, kMaxIdleConnections,
                                            kMaxIdleConnectionSeconds);
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
    bool fresh_connection = false;
    int status_retries = 0;
    while (true) {
      auto lease = fresh_connection ? pool->acquire_fresh() : pool->acquire();
      if (!lease) return lease.error();
      httplib::ClientImpl& client = **lease;
      set_timeouts(client, request_seconds(), connect_seconds());
      request.headers = headers();
      if (body != nullptr) request.headers.emplace("Content-Type", content_type);
      httplib::Result result = [&] {
        if (stop == nullptr) return client.send(request);
        StopWatcher watcher(*stop, [&client] { client.stop(); });
        return client.send(request);
      }();
      if (result) {
        ApiResponse response{result->status, std::move(result->body)};
        const std::optional<double> wait = retry_after_seconds(response, *result);
        if (!wait || status_retries == kMaxStatusRetries) return response;
        ++status_retries;
        if (!pause(*wait, stop)) return Error{fmt::format("{} {}: stopped", method, path)};
        continue;
      }
      if (stop != nullptr && stop->load()) return Error{fmt::format("{} {}: stopped", method, path)};
      const httplib::Error error = result.error();
      const std::string failure = describe(error, client);  // before the client goes
      const bool reused = lease->reused();
      lease->discard();
      // A connection the server closed while it sat in the pool fails the next request sent on
      // it, before any answer. Sending once more on a new connection is safe for every request
      // this client makes: reads, merge patches and status writes are idempotent, and a repeated
      // create, binding or eviction is answered 409 or 404, which callers read as "done already".
      const bool broken = error == httplib::Error::Read || error == httplib::Error::Write ||
                          error == httplib::Error::SSLConnection;
      if (broken && reused && !fresh_connection) {
        pool->drop_idle();  // idle as long as this one, so likely closed too
        fresh_connection = true;
        connection_retries.fetch_add(1);
        continue;
      }
      return Error{fmt::format("{} {}: {}", method, path, failure)};
    }
  }

  // How long to wait before asking again, for an answer that is worth asking again: 429 or
  // 5xx with a Retry-After header, except a 429 from the Eviction API for a PodDisruptionBudget
  // (a refusal, not overload).
  static std::optional<double> retry_after_seconds(const ApiResponse& response, const httplib::Response& raw) {
    if (response.status != 429 && response.status < 500) return std::nullopt;
    if (!raw.has_header("Retry-After")) return std::nullopt;
    double seconds = 0;
    const std::string text = raw.get_header_value("Retry-After");
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || seconds < 0) return std::nullopt;
    if (response.status == 429 && response.has_cause("DisruptionBudget")) return std::nullopt;
    return std::min(seconds, kMaxRetryAfterSeconds);
  }

  // Sleeps; false when `stop` was set meanwhile.
  static bool pause(double seconds, const std::atomic<bool>* stop) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (stop != nullptr && stop->load()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return stop == nullptr || !stop->load();
  }

  Result<WatchEnd> watch(const std::string& path, const std::function<bool(WatchEvent&)>& on_event,
                         const std::atomic<bool>& stop) {
    if (setup_error) return *setup_error;
    if (stop.load()) return WatchEnd::kStopped;
    bool stale_connection = false;
    auto ended = watch_once(path, on_event, stop, /*fresh_connection=*/false, stale_connection);
    if (ended || !stale_connection) return ended;
    // The pooled connection was closed by the server before the watch began (see request()).
    pool->drop_idle();
    connection_retries.fetch_add(1);
    return watch_once(path, on_event, stop, /*fresh_connection=*/true, stale_connection);
  }

  Result<WatchEnd> watch_once(const std::string& path, const std::function<bool(WatchEvent&)>& on_event,
                              const std::atomic<bool>& stop, bool fresh_connection, bool& stale_connection) {
    auto lease = fresh_connection ? pool->acquire_fresh() : pool->acquire();
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
      return Error{ApiResponse{status, std::move(error_body)}.failure_text()};
    }
    if (!result) {
      const std::string failure = describe(result.error(), client);  // before the client goes
      stale_connection = status == 0 && lease->reused();              // failed before any answer
      lease->discard();
      return Error{fmt::format("watch {}: {}", path, failure)};
    }
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
  std::atomic<int64_t> connection_retries{0};
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

int64_t ApiClient::connection_retries() const { return impl_->connection_retries.load(); }

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
