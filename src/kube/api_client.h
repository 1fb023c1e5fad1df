// A Kubernetes API client: REST calls and watch streams over HTTPS (TLS verified against the
// configured CA) or plain HTTP, with bearer-token or client-certificate authentication.
// Thread-safe: every call may come from any thread. Connections (and their TLS sessions) are
// kept alive and reused: each call borrows an idle one, or opens one when all are busy.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/kubeconfig.h"

namespace tessera::kube {

struct ApiResponse {
  int status = 0;  // HTTP status
  std::string body;

  bool ok() const { return status >= 200 && status < 300; }
  // The body parsed as JSON; a null json when it is not JSON.
  nlohmann::json json() const;
  // For an error: the message of the metav1.Status body, else the body itself without trailing
  // whitespace.
  std::string error_message() const;
  // "HTTP 409: <error_message()>": how a failed call is told in logs, events and statuses.
  std::string failure_text() const;
  // The Status reason ("AlreadyExists", "Conflict", "Expired", "TooManyRequests"...), or "".
  std::string reason() const;
  // Whether the Status lists a cause with this reason (how StatusCause serialises its type), as
  // "DisruptionBudget" on an Eviction refused by a PodDisruptionBudget.
  bool has_cause(std::string_view cause_reason) const;
};

enum class PatchType { kMerge, kStrategicMerge, kJson };

// One event of a watch stream: "ADDED", "MODIFIED", "DELETED", "BOOKMARK" or "ERROR", with
// its object (a metav1.Status for ERROR).
struct WatchEvent {
  std::string type;
  nlohmann::json object;
};

// Why a watch stream ended.
enum class WatchEnd {
  kClosed,   // the server ended the stream (timeoutSeconds elapsed, or it closed the connection)
  kStopped,  // the callback returned false or `stop` was set
};

class ApiClient {
 public:
  explicit ApiClient(ClientConfig config);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  const ClientConfig& config() const;

  // `path` includes any query ("/api/v1/namespaces/a/pods?labelSelector=x%3Dy"). A Result
  // error means the request did not complete (connection refused, TLS failure, timeout); an
  // HTTP error status is a completed request and comes back in ApiResponse.
  Result<ApiResponse> get(const std::string& path);
  // As get(), but gives up soon (within about 100 ms) after `stop` is set, with an Error.
  // For long reads (a paged list) by a component that must stop promptly.
  Result<ApiResponse> get(const std::string& path, const std::atomic<bool>& stop);
  Result<ApiResponse> post(const std::string& path, const nlohmann::json& body);
  Result<ApiResponse> put(const std::string& path, const nlohmann::json& body);
  Result<ApiResponse> patch(const std::string& path, const nlohmann::json& body, PatchType type = PatchType::kMerge);
  Result<ApiResponse> del(const std::string& path);

  // Opens `path` (which must carry watch=1) and calls `on_event` for each event as it
  // arrives; polls `stop` at least every 200 ms. A non-2xx answer to the request itself is an
  // Error whose message starts "HTTP <status>:" (see watch_http_status); a broken connection
  // is an Error without it.
  Result<WatchEnd> watch(const std::string& path, const std::function<bool(WatchEvent&)>& on_event,
                         const std::atomic<bool>& stop);

  // Seconds a single request may take before it fails (watches are not bound by it).
  void set_request_timeout(double seconds);

  // Requests sent again on a new connection because a kept-alive one had been closed by the
  // server (for metrics and tests).
  int64_t connection_retries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The HTTP status in a watch error ("HTTP 410: ..."), or 0 for a transport failure.
int watch_http_status(const Error& error);

// Percent-encodes a query parameter value.
std::string url_encode(std::string_view value);

}  // namespace tessera::kube
