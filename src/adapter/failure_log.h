// Failed writes of one kind (queue status, pod condition, event...) logged once per distinct
// cause until a write of that kind succeeds again: a missing RBAC rule or a rejecting webhook says
// what fails and why at once, without a line per object every cycle.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/result.h"
#include "kube/api_client.h"

namespace tessera::adapter {

// "HTTP 403 Forbidden" for an error status (with the Status reason when it has one), or the
// transport error's message: what makes two failures the same cause.
std::string failure_cause(const Result<kube::ApiResponse>& response);
// The cause with the server's message: "HTTP 403 Forbidden: pods \"x\" is forbidden: ...".
std::string failure_description(const Result<kube::ApiResponse>& response);

class FailureLog {
 public:
  explicit FailureLog(std::function<void(const std::string&)> log_line) : log_line_(std::move(log_line)) {}

  // Records the outcome of a write of `kind` ("writing the status of queue team-a"): a failure
  // is logged as "<what> failed: <description>" unless the last failure of `kind` had the same
  // cause; a success forgets the kind's last cause. Thread-safe.
  void record(const std::string& kind, const std::string& what, const Result<kube::ApiResponse>& response);
  // The same for a call whose outcome was read already: `cause` as failure_cause() gives it.
  void record(const std::string& kind, const std::string& what, bool ok, const std::string& cause,
              const std::string& description);

 private:
  std::function<void(const std::string&)> log_line_;
  std::mutex mutex_;
  std::map<std::string, std::string> last_cause_;  // kind -> cause of its last failure
};

}  // namespace tessera::adapter
