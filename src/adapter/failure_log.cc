#include "adapter/failure_log.h"

#include <fmt/format.h>

namespace tessera::adapter {

std::string failure_cause(const Result<kube::ApiResponse>& response) {
  if (!response) return response.error().message;
  const std::string reason = response->reason();
  return reason.empty() ? fmt::format("HTTP {}", response->status) : fmt::format("HTTP {} {}", response->status, reason);
}

std::string failure_description(const Result<kube::ApiResponse>& response) {
  if (!response) return response.error().message;
  return fmt::format("{}: {}", failure_cause(response), response->error_message());
}

void FailureLog::record(const std::string& kind, const std::string& what, const Result<kube::ApiResponse>& response) {
  const bool ok = response && response->ok();
  record(kind, what, ok, ok ? "" : failure_cause(response), ok ? "" : failure_description(response));
}

void FailureLog::record(const std::string& kind, const std::string& what, bool ok, const std::string& cause,
                        const std::string& description) {
  {
    std::lock_guard lock(mutex_);
    if (ok) {
      last_cause_.erase(kind);
      return;
    }
    auto [it, inserted] = last_cause_.try_emplace(kind, cause);
    if (!inserted && it->second == cause) return;
    it->second = cause;
  }
  log_line_(fmt::format("{} failed: {}", what, description));
}

}  // namespace tessera::adapter
