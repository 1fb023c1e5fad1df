#include "apiserver/disruption_budgets.h"

#include <fmt/format.h>

#include <cmath>

#include "apiserver/selectors.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

// An IntOrString: an integer, or "N%" of `total` rounded up.
ApiResult<int64_t> scaled(const json& value, int64_t total) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (!text.empty() && text.back() == '%') {
      try {
        const double percent = std::stod(text.substr(0, text.size() - 1));
        return static_cast<int64_t>(std::ceil(percent * static_cast<double>(total) / 100.0));
      } catch (const std::exception&) {
      }
    } else {
      try {
        return std::stoll(text);
      } catch (const std::exception&) {
      }
    }
  }
  return bad_request(fmt::format("invalid value for IntOrString: {}", value.dump()));
}

}  // namespace

bool budget_selects(const json& budget, const json& pod) {
  const json spec = budget.value("spec", json::object());
  if (!spec.contains("selector") || spec["selector"].is_null()) return false;
  ApiResult<LabelSelector> selector = LabelSelector::from_object(spec["selector"]);
  if (!selector) return false;
  return selector->matches(pod.value("metadata", json::object()).value("labels", json::object()));
}

bool pod_is_healthy(const json& pod) {
  if (pod.contains("metadata") && pod["metadata"].contains("deletionTimestamp")) return false;
  const json status = pod.value("status", json::object());
  if (status.value("phase", "") != "Running") return false;
  for (const json& condition : status.value("conditions", json::array())) {
    if (condition.value("type", "") == "Ready") return condition.value("status", "") == "True";
  }
  return false;
}

ApiResult<DisruptionStatus> disruption_status(const json& budget, const std::vector<ObjectPtr>& pods) {
  DisruptionStatus status;
  for (const ObjectPtr& pod : pods) {
    if (!budget_selects(budget, *pod)) continue;
    const std::string phase = pod->value("status", json::object()).value("phase", "");
    if (phase == "Succeeded" || phase == "Failed") continue;
    ++status.expected_pods;
    if (pod_is_healthy(*pod)) ++status.current_healthy;
  }
  const json spec = budget.value("spec", json::object());
  if (spec.contains("minAvailable") && !spec["minAvailable"].is_null()) {
    ApiResult<int64_t> desired = scaled(spec["minAvailable"], status.expected_pods);
    if (!desired) return desired.error();
    status.desired_healthy = *desired;
  } else if (spec.contains("maxUnavailable") && !spec["maxUnavailable"].is_null()) {
    ApiResult<int64_t> unavailable = scaled(spec["maxUnavailable"], status.expected_pods);
    if (!unavailable) return unavailable.error();
    status.desired_healthy = std::max<int64_t>(0, status.expected_pods - *unavailable);
  } else {
    status.desired_healthy = 1;  // policy/v1beta1's default minAvailable
  }
  status.disruptions_allowed = std::max<int64_t>(0, status.current_healthy - status.desired_healthy);
  return status;
}

json budget_status_json(const DisruptionStatus& status, int64_t observed_generation) {
  return {{"currentHealthy", status.current_healthy},
          {"desiredHealthy", status.desired_healthy},
          {"disruptionsAllowed", status.disruptions_allowed},
          {"expectedPods", status.expected_pods},
          {"observedGeneration", observed_generation}};
}

}  // namespace tessera::apiserver
