// What the real server does to a pod before storing it: validation of the few fields every pod
// needs, the defaults its API types and admission plugins fill in (scheduler name, restart
// policy, grace period, QoS class, the not-ready/unreachable tolerations, priority from the
// PriorityClass), and the rule that a pod's spec cannot change after creation.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "apiserver/api_error.h"

namespace tessera::apiserver {

// Looks up a PriorityClass's value by name; nullopt when there is none. The empty name asks for
// the cluster's global default class, if any.
using PriorityLookup = std::function<std::optional<int64_t>(const std::string& name)>;

// Validates and defaults a pod about to be created; 422 Invalid or 403 Forbidden as the real
// server answers.
ApiResult<nlohmann::json> admit_new_pod(nlohmann::json pod, const PriorityLookup& priority_of);

// The defaults of a pod's spec (as the API's defaulting fills them on every write), quantities
// made strings included.
void default_pod_spec(nlohmann::json& spec);

// 422 when an update changes the spec beyond what the real server allows (images, activeDeadlineSeconds,
// terminationGracePeriodSeconds, added tolerations).
std::optional<ApiError> check_pod_spec_update(const nlohmann::json& current, const nlohmann::json& updated);

// "Guaranteed", "Burstable" or "BestEffort" from the containers' requests and limits.
std::string pod_qos_class(const nlohmann::json& spec);

}  // namespace tessera::apiserver
