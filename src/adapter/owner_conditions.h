// The condition TesseraScheduled on the object the user created (a Job, JobSet, TrainJob,
// PyTorchJob): False with the pending reason while its gang waits, True once it runs, so that
// `kubectl get jobset -o yaml` and anything that reads conditions shows it beside the owner's
// own. Written through the status subresource as a JSON patch (RFC 6902) that adds or replaces
// only this one entry (a merge patch would replace the whole list of a custom resource's
// conditions), guarded by a test of the entry's place or of the cached resourceVersion. The controllers
// read-modify-write their status and keep conditions they do not know (JobSet's updateCondition, Trainer's
// meta.SetStatusCondition, the Job controller), and a write that races theirs fails on the resource version and is
// tried again.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "adapter/workload_owners.h"

namespace tessera::adapter {

inline constexpr std::string_view kOwnerConditionType = "TesseraScheduled";

struct OwnerCondition {
  bool scheduled = false;
  std::string reason;  // Scheduled, or the pending reason (Unschedulable, GangIncomplete...)
  std::string message;
};

// The JSON patch that makes `owner` (as cached) carry `wanted`, or nullopt when it carries it
// already; a changed message alone is written only when `refresh_due` (messages carry live
// numbers). Its lastTransitionTime is kept while the status stays.
std::optional<nlohmann::json> owner_condition_patch(const nlohmann::json& owner, const OwnerCondition& wanted,
                                                    bool refresh_due, double now);

// The owner's status subresource: "/apis/batch/v1/namespaces/ml/jobs/train/status"; empty for a
// kind the scheduler does not watch.
std::string owner_status_path(const ObjectRef& owner);

// The cached object of the owner, or null when the scheduler has not seen it.
kube::ObjectPtr cached_owner(const OwnerObjects& owners, const ObjectRef& owner);

}  // namespace tessera::adapter
