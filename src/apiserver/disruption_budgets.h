// PodDisruptionBudget arithmetic, as the real disruption controller computes it for the eviction
// API: how many of the selected pods are healthy, how many must stay healthy, and so how many may
// be disrupted now. Approximation: the expected pod count is the number of selected pods that
// have not finished (the real controller asks the pods' controllers for their scale when the
// budget is a percentage or maxUnavailable; this server runs no controllers).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/object_store.h"

namespace tessera::apiserver {

struct DisruptionStatus {
  int64_t expected_pods = 0;
  int64_t current_healthy = 0;
  int64_t desired_healthy = 0;
  int64_t disruptions_allowed = 0;
};

// Whether the budget's selector selects `pod` (an empty selector selects every pod in the
// namespace, as in policy/v1).
bool budget_selects(const nlohmann::json& budget, const nlohmann::json& pod);

// Running, Ready, and not being deleted.
bool pod_is_healthy(const nlohmann::json& pod);

ApiResult<DisruptionStatus> disruption_status(const nlohmann::json& budget, const std::vector<ObjectPtr>& pods);

// The budget's status block for `status`.
nlohmann::json budget_status_json(const DisruptionStatus& status, int64_t observed_generation);

}  // namespace tessera::apiserver
