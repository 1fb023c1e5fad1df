// The scheduler's writes to the API server about pods, one call each: bind a pod (with its GPU
// annotations), evict one through the Eviction API, mark one unschedulable. They report outcomes
// rather than fail: a 409 on a binding (bound meanwhile) or a 429 on an eviction (a
// PodDisruptionBudget) is an answer. Events are written by the EventRecorder.
#pragma once

#include <string>

#include "adapter/cycle_decisions.h"
#include "kube/api_client.h"

namespace tessera::adapter {

enum class CallOutcome : uint8_t {
  kDone,
  kConflict,  // 409: the pod is bound already (binding) or changed
  kRefused,   // 429 naming a DisruptionBudget cause: an eviction a PodDisruptionBudget forbids now
  kGone,      // 404: the pod no longer exists
  kFailed,    // any other status, or the request did not complete
};

struct CallResult {
  CallOutcome outcome = CallOutcome::kDone;
  std::string message;  // for anything but kDone
  std::string cause;    // for anything but kDone: "HTTP 403 Forbidden", or the transport error
};

// The annotations a GPU pod gets before it binds (device indices, portion, environment).
nlohmann::json gpu_annotations(const PodBindingDecision& binding);

// POSTs the pods/binding subresource; the GPU annotations (GPU pods only) travel in the
// Binding's metadata, which the API server copies onto the pod with the node name, in one write.
CallResult bind_pod(kube::ApiClient& client, const PodBindingDecision& binding);

// POSTs a policy/v1 Eviction for the pod. Only a 429 whose Status names the DisruptionBudget
// cause is a refusal; any other 429 (an overloaded server) is a failure.
CallResult evict_pod(kube::ApiClient& client, const VictimDecision& victim);

// DELETEs the pod: it ends within its termination grace period, as kubectl delete would end it.
CallResult delete_pod(kube::ApiClient& client, const std::string& namespace_name, const std::string& name);

// Sets the pod's PodScheduled condition to False with reason Unschedulable and `message`, as
// kube-scheduler does for a pod it cannot place: what `kubectl get/describe pod` and dashboards
// read. A strategic merge patch of pods/status, so the pod's other conditions stay.
// `transition_time` (RFC 3339): when the condition became False.
CallResult mark_unschedulable(kube::ApiClient& client, const std::string& namespace_name, const std::string& name,
                              const std::string& message, const std::string& transition_time);

}  // namespace tessera::adapter
