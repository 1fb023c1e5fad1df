// The scheduler's writes to the API server, one call each: annotate and bind a pod, evict one
// through the Eviction API, record an Event. They report outcomes rather than fail: a 409 on
// a binding (bound meanwhile) or a 429 on an eviction (a PodDisruptionBudget) is an answer.
#pragma once

#include <string>

#include "adapter/cycle_decisions.h"
#include "kube/api_client.h"

namespace tessera::adapter {

enum class CallOutcome : uint8_t {
  kDone,
  kConflict,  // 409: the pod is bound already (binding) or changed
  kRefused,   // 429: an eviction a PodDisruptionBudget does not allow now
  kGone,      // 404: the pod no longer exists
  kFailed,    // any other status, or the request did not complete
};

struct CallResult {
  CallOutcome outcome = CallOutcome::kDone;
  std::string message;  // for anything but kDone
};

// The annotations a GPU pod gets before it binds (device indices, portion, environment).
nlohmann::json gpu_annotations(const PodBindingDecision& binding);

// Patches the GPU annotations (GPU pods only), then POSTs the pods/binding subresource.
CallResult bind_pod(kube::ApiClient& client, const PodBindingDecision& binding);

// POSTs a policy/v1 Eviction for the pod.
CallResult evict_pod(kube::ApiClient& client, const VictimDecision& victim);

struct EventRecord {
  std::string namespace_name;
  std::string object_kind;  // "Pod" or "PodGroup"
  std::string object_api_version;
  std::string object_name;
  std::string object_uid;
  std::string type;  // "Normal" or "Warning"
  std::string reason;
  std::string message;
};

// Creates a core/v1 Event, as the scheduler's component ("tessera-scheduler").
CallResult post_event(kube::ApiClient& client, const EventRecord& event, double now);

}  // namespace tessera::adapter
