// Errors as the Kubernetes API server reports them: an HTTP code and a metav1.Status body with a
// machine-readable reason. The messages follow the real server's wording, since clients (kubectl,
// client-go, the Python client) show them to users and some match on the reason.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/result.h"

namespace tessera::apiserver {

struct StatusCause {
  std::string reason;  // "FieldValueRequired", "DisruptionBudget"...
  std::string message;
  std::string field;
};

struct ApiError {
  int code = 500;
  std::string reason;  // "NotFound", "AlreadyExists", "Conflict"... empty for an unknown cause
  std::string message;
  // details: the object the error is about, and why.
  std::string name;
  std::string group;
  std::string kind;
  std::vector<StatusCause> causes;
  int retry_after_seconds = 0;

  // The metav1.Status body.
  nlohmann::json to_status() const;
};

// The resource an error names: plural and API group ("pods", ""; "podgroups", "scheduling.tessera.dev").
struct ResourceName {
  std::string plural;
  std::string group;
  // "pods" or "podgroups.scheduling.tessera.dev", as the real server words it.
  std::string qualified() const { return group.empty() ? plural : plural + "." + group; }
};

ApiError not_found(const ResourceName& resource, const std::string& name);
ApiError already_exists(const ResourceName& resource, const std::string& name);
// "Operation cannot be fulfilled on pods "x": DETAIL".
ApiError conflict(const ResourceName& resource, const std::string& name, const std::string& detail);
// The 409 of an update whose resourceVersion is stale.
ApiError stale_version_conflict(const ResourceName& resource, const std::string& name);
// 422: `KIND "name" is invalid: field: message`.
ApiError invalid(const std::string& kind, const std::string& group, const std::string& name,
                 std::vector<StatusCause> causes);
ApiError bad_request(const std::string& message);
ApiError expired(const std::string& message);  // 410 Gone, reason Expired
ApiError gone(const std::string& message);     // 410 Gone, reason Gone
ApiError too_many_requests(const std::string& message, std::vector<StatusCause> causes);
ApiError unauthorized();
ApiError forbidden(const ResourceName& resource, const std::string& name, const std::string& detail);
ApiError method_not_allowed();
ApiError unsupported_media_type(const std::string& accepted);
ApiError not_acceptable(const std::string& accepted);
ApiError path_not_found();  // a path no API serves
ApiError internal_error(const std::string& message);
ApiError server_timeout(const std::string& message);  // 504, reason Timeout

// A `Success` Status with a code: what binding and eviction answer.
nlohmann::json success_status(int code);

// Like tessera::Result, but its error is a Kubernetes Status: it ends up on the wire.
template <typename T>
using ApiResult = Result<T, ApiError>;

}  // namespace tessera::apiserver
