// Who may see the dashboard when it is exposed (docs/dashboard.md, "--dashboard-auth
// kubernetes"): the bearer token a request carries is authenticated by the API server's
// TokenReview (authentication.k8s.io/v1), and its user must be allowed to list PodGroups in
// every namespace, as a SubjectAccessReview (authorization.k8s.io/v1) answers — the dashboard
// shows every namespace's work, so it asks what reading that work cluster-wide needs. Answers
// are kept for a short while, keyed by a SHA-256 of the token (never the token itself), so a page
// that polls does not cost the API server two requests a fetch.
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/api_client.h"

namespace tessera::dashboard {

enum class Access { kAllowed, kUnauthenticated, kForbidden, kUnavailable };

struct AccessVerdict {
  Access access = Access::kUnavailable;
  std::string message;      // for the response body: who, and what they lack, or what failed
  int http_status() const;  // 200, 401, 403, 503
};

// The user a TokenReview authenticated.
struct ReviewedUser {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  nlohmann::json extra = nlohmann::json::object();
};

// The request bodies and the reading of their answers, as pure functions.
nlohmann::json token_review_request(std::string_view token);
// The user, or why the token was not accepted (status.error, or "not authenticated").
Result<ReviewedUser> read_token_review(const nlohmann::json& answer);
nlohmann::json podgroup_list_review_request(const ReviewedUser& user);
AccessVerdict read_access_review(const nlohmann::json& answer, const ReviewedUser& user);

// Hex SHA-256 of the token: the cache's key.
std::string token_digest(std::string_view token);

class AccessReviewer {
 public:
  // `client` must outlive the reviewer; its own credentials need create on tokenreviews and
  // subjectaccessreviews (deploy/dashboard-rbac.yaml).
  explicit AccessReviewer(kube::ApiClient& client, double cache_seconds = 30, size_t max_cached = 10000);

  // Thread-safe. `now`: Unix seconds (a parameter, so that tests decide when entries expire).
  // Failures to reach the API server (kUnavailable) are not cached.
  AccessVerdict review(std::string_view token, double now);

 private:
  AccessVerdict ask(std::string_view token);

  kube::ApiClient& client_;
  double cache_seconds_;
  size_t max_cached_;
  std::mutex mutex_;
  std::map<std::string, std::pair<AccessVerdict, double>> cache_;  // digest -> verdict, expiry
};

}  // namespace tessera::dashboard
