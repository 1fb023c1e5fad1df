// Feasibility predicates: can this pod run on this node as it is now? Each failure names the
// predicate that failed, so pending reasons can count nodes per predicate (docs/design.md §7).
#pragma once

#include <string_view>

#include "core/node.h"
#include "core/node_state.h"
#include "core/pod.h"

namespace tessera {

enum class Predicate : uint8_t {
  kFits,
  kUnschedulable,   // node cordoned
  kNodeSelector,    // a node-selector label does not match
  kTaint,           // an untolerated NoSchedule/NoExecute taint
  kGpuModel,        // no device of an allowed model
  kCpu,             // not enough free CPU
  kMemory,          // not enough free memory
  kWholeGpus,       // fewer idle devices than whole GPUs requested
  kGpuFraction,     // no single device with enough free portion or memory
  kGpuMemoryLimit,  // a device has room for the GPU-memory request, none for its limit at the overcommit
  kReserved,        // held for a waiting workload (checked by the placer, not here)
};
inline constexpr int kPredicateCount = 11;

std::string_view predicate_name(Predicate predicate);
// A phrase for "N nodes: <phrase>" explanations.
std::string_view predicate_phrase(Predicate predicate);

// Checks that do not depend on what is running: cordon, selector, taints, GPU model.
Predicate check_static(const NodeSpec& node, const PodSpec& pod);
// Checks of free capacity: CPU, memory, whole devices or one device for a fraction.
Predicate check_capacity(const NodeSpec& node, const NodeState& state, const PodSpec& pod);

inline Predicate check_node(const NodeSpec& node, const NodeState& state, const PodSpec& pod) {
  Predicate result = check_static(node, pod);
  return result != Predicate::kFits ? result : check_capacity(node, state, pod);
}

// Whether one device can take the pod's fractional request (model allowed, portion free) and
// its limit (the limits on the device stay within the node's overcommit cap).
bool device_fits_fraction(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device);

}  // namespace tessera
