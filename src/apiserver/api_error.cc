#include "apiserver/api_error.h"

#include <fmt/format.h>

namespace tessera::apiserver {

nlohmann::json ApiError::to_status() const {
  nlohmann::json status = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                           {"status", "Failure"}, {"message", message}, {"code", code}};
  if (!reason.empty()) status["reason"] = reason;
  nlohmann::json details = nlohmann::json::object();
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const StatusCause& cause : causes) {
      nlohmann::json entry = nlohmann::json::object();
      if (!cause.reason.empty()) entry["reason"] = cause.reason;
      if (!cause.message.empty()) entry["message"] = cause.message;
      if (!cause.field.empty()) entry["field"] = cause.field;
      list.push_back(std::move(entry));
    }
    details["causes"] = std::move(list);
  }
  if (retry_after_seconds > 0) details["retryAfterSeconds"] = retry_after_seconds;
  // The real server leaves details out for errors about no object in particular.
  if (!details.empty() || reason == "NotFound" || reason == "MethodNotAllowed") status["details"] = details;
  return status;
}

namespace {

ApiError about(int code, std::string reason, std::string message, const ResourceName& resource,
               const std::string& name) {
  ApiError error;
  error.code = code;
  error.reason = std::move(reason);
  error.message = std::move(message);
  error.name = name;
  error.group = resource.group;
  error.kind = resource.plural;
  return error;
}

ApiError plain(int code, std::string reason, std::string message) {
  ApiError error;
  error.code = code;
  error.reason = std::move(reason);
  error.message = std::move(message);
  return error;
}

}  // namespace

ApiError not_found(const ResourceName& resource, const std::string& name) {
  return about(404, "NotFound", fmt::format("{} \"{}\" not found", resource.qualified(), name), resource, name);
}

ApiError already_exists(const ResourceName& resource, const std::string& name) {
  return about(409, "AlreadyExists", fmt::format("{} \"{}\" already exists", resource.qualified(), name), resource,
               name);
}

ApiError conflict(const ResourceName& resource, const std::string& name, const std::string& detail) {
  return about(409, "Conflict",
               fmt::format("Operation cannot be fulfilled on {} \"{}\": {}", resource.qualified(), name, detail),
               resource, name);
}

ApiError stale_version_conflict(const ResourceName& resource, const std::string& name) {
  return conflict(resource, name,
                  "the object has been modified; please apply your changes to the latest version and try again");
}

ApiError invalid(const std::string& kind, const std::string& group, const std::string& name,
                 std::vector<StatusCause> causes) {
  std::string summary;
  for (const StatusCause& cause : causes) {
    if (!summary.empty()) summary += ", ";
    summary += cause.field.empty() ? cause.message : fmt::format("{}: {}", cause.field, cause.message);
  }
  const std::string qualified_kind = group.empty() ? kind : fmt::format("{}.{}", kind, group);
  ApiError error = plain(422, "Invalid", fmt::format("{} \"{}\" is invalid: {}", qualified_kind, name, summary));
  if (causes.size() > 1) error.message = fmt::format("{} \"{}\" is invalid: [{}]", qualified_kind, name, summary);
  error.name = name;
  error.group = group;
  error.kind = kind;
  error.causes = std::move(causes);
  return error;
}

ApiError bad_request(const std::string& message) { return plain(400, "BadRequest", message); }
ApiError expired(const std::string& message) { return plain(410, "Expired", message); }
ApiError gone(const std::string& message) { return plain(410, "Gone", message); }

ApiError too_many_requests(const std::string& message, std::vector<StatusCause> causes) {
  ApiError error = plain(429, "TooManyRequests", message);
  error.causes = std::move(causes);
  return error;
}

ApiError unauthorized() { return plain(401, "Unauthorized", "Unauthorized"); }

ApiError forbidden(const ResourceName& resource, const std::string& name, const std::string& detail) {
  const std::string subject =
      name.empty() ? resource.qualified() : fmt::format("{} \"{}\"", resource.qualified(), name);
  return about(403, "Forbidden", fmt::format("{} is forbidden: {}", subject, detail), resource, name);
}

ApiError method_not_allowed() {
  return plain(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
}

ApiError unsupported_media_type(const std::string& accepted) {
  return plain(
      415, "UnsupportedMediaType",
      fmt::format("the body of the request was in an unknown format - accepted media types include: {}", accepted));
}

ApiError not_acceptable(const std::string& accepted) {
  return plain(406, "NotAcceptable", fmt::format("only the following media types are accepted: {}", accepted));
}

ApiError path_not_found() { return plain(404, "NotFound", "the server could not find the requested resource"); }

ApiError internal_error(const std::string& message) {
  ApiError error = plain(500, "InternalError", fmt::format("Internal error occurred: {}", message));
  error.causes.push_back(StatusCause{.reason = "", .message = message, .field = ""});
  return error;
}

ApiError server_timeout(const std::string& message) { return plain(504, "Timeout", message); }

nlohmann::json success_status(int code) {
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", nlohmann::json::object()},
          {"status", "Success"},
          {"code", code}};
}

}  // namespace tessera::apiserver
