#include "dashboard/access_review.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <array>

namespace tessera::dashboard {

namespace {

using nlohmann::json;

constexpr std::string_view kTokenReviews = "/apis/authentication.k8s.io/v1/tokenreviews";
constexpr std::string_view kAccessReviews = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
// What the dashboard shows is every namespace's PodGroups and what they wait for.
constexpr std::string_view kGroup = "scheduling.tessera.dev";
constexpr std::string_view kResource = "podgroups";

std::string status_text(const Result<kube::ApiResponse>& response) {
  if (!response) return response.error().message;
  return response->failure_text();
}

}  // namespace

int AccessVerdict::http_status() const {
  switch (access) {
    case Access::kAllowed:
      return 200;
    case Access::kUnauthenticated:
      return 401;
    case Access::kForbidden:
      return 403;
    case Access::kUnavailable:
      break;
  }
  return 503;
}

json token_review_request(std::string_view token) {
  return {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}};
}

Result<ReviewedUser> read_token_review(const json& answer) {
  const json status = answer.value("status", json::object());
  if (!status.is_object() || !status.value("authenticated", false)) {
    const std::string error = status.is_object() ? status.value("error", std::string()) : std::string();
    return Error{error.empty() ? "the token is not authenticated"
                               : fmt::format("the token is not authenticated: {}", error)};
  }
  const json user = status.value("user", json::object());
  ReviewedUser reviewed;
  reviewed.username = user.value("username", std::string());
  reviewed.uid = user.value("uid", std::string());
  for (const json& group : user.value("groups", json::array())) {
    if (group.is_string()) reviewed.groups.push_back(group.get<std::string>());
  }
  if (user.contains("extra") && user["extra"].is_object()) reviewed.extra = user["extra"];
  if (reviewed.username.empty()) return Error{"the TokenReview authenticated the token but named no user"};
  return reviewed;
}

json podgroup_list_review_request(const ReviewedUser& user) {
  json spec = {{"user", user.username},
               {"groups", user.groups},
               {"resourceAttributes", {{"verb", "list"}, {"group", kGroup}, {"resource", kResource}}}};
  if (!user.uid.empty()) spec["uid"] = user.uid;
  if (!user.extra.empty()) spec["extra"] = user.extra;
  return {{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", std::move(spec)}};
}

AccessVerdict read_access_review(const json& answer, const ReviewedUser& user) {
  const json status = answer.value("status", json::object());
  if (status.is_object() && status.value("allowed", false)) {
    return {Access::kAllowed, fmt::format("{} may list {}.{} in all namespaces", user.username, kResource, kGroup)};
  }
  std::string why = status.is_object() ? status.value("reason", std::string()) : std::string();
  if (why.empty() && status.is_object()) why = status.value("evaluationError", std::string());
  return {Access::kForbidden,
          fmt::format("{} may not list {}.{} in all namespaces, which the dashboard shows{}", user.username, kResource,
                      kGroup, why.empty() ? "" : fmt::format(" ({})", why))};
}

std::string token_digest(std::string_view token) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(token.data(), token.size(), digest.data(), &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

AccessReviewer::AccessReviewer(kube::ApiClient& client, double cache_seconds, size_t max_cached)
    : client_(client), cache_seconds_(cache_seconds), max_cached_(max_cached) {}

AccessVerdict AccessReviewer::review(std::string_view token, double now) {
  const std::string key = token_digest(token);
  {
    std::lock_guard lock(mutex_);
    auto cached = cache_.find(key);
    if (cached != cache_.end() && cached->second.second > now) return cached->second.first;
  }
  AccessVerdict verdict = ask(token);
  if (verdict.access == Access::kUnavailable) return verdict;
  std::lock_guard lock(mutex_);
  if (cache_.size() >= max_cached_) {
    std::erase_if(cache_, [&](const auto& entry) { return entry.second.second <= now; });
    if (cache_.size() >= max_cached_) cache_.clear();  // many live tokens at once: start over
  }
  cache_[key] = {verdict, now + cache_seconds_};
  return verdict;
}

AccessVerdict AccessReviewer::ask(std::string_view token) {
  auto reviewed = client_.post(std::string(kTokenReviews), token_review_request(token));
  if (!reviewed || !reviewed->ok()) {
    return {Access::kUnavailable, fmt::format("cannot review the token: {}", status_text(reviewed))};
  }
  Result<ReviewedUser> user = read_token_review(reviewed->json());
  if (!user) return {Access::kUnauthenticated, user.error().message};
  auto allowed = client_.post(std::string(kAccessReviews), podgroup_list_review_request(*user));
  if (!allowed || !allowed->ok()) {
    return {Access::kUnavailable,
            fmt::format("cannot review what {} may do: {}", user->username, status_text(allowed))};
  }
  return read_access_review(allowed->json(), *user);
}

}  // namespace tessera::dashboard
