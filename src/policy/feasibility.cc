#include "policy/feasibility.h"

namespace tessera {

std::string_view predicate_name(Predicate predicate) {
  switch (predicate) {
    case Predicate::kFits:
      return "Fits";
    case Predicate::kUnschedulable:
      return "Unschedulable";
    case Predicate::kNodeSelector:
      return "NodeSelector";
    case Predicate::kTaint:
      return "Taint";
    case Predicate::kGpuModel:
      return "GpuModel";
    case Predicate::kCpu:
      return "InsufficientCpu";
    case Predicate::kMemory:
      return "InsufficientMemory";
    case Predicate::kWholeGpus:
      return "InsufficientWholeGpus";
    case Predicate::kGpuFraction:
      return "InsufficientGpuFraction";
    case Predicate::kGpuMemoryLimit:
      return "GpuMemoryLimitOvercommit";
    case Predicate::kReserved:
      return "Reserved";
  }
  return "Unknown";
}

std::string_view predicate_phrase(Predicate predicate) {
  switch (predicate) {
    case Predicate::kFits:
      return "fits";
    case Predicate::kUnschedulable:
      return "node is cordoned";
    case Predicate::kNodeSelector:
      return "node selector does not match";
    case Predicate::kTaint:
      return "untolerated taint";
    case Predicate::kGpuModel:
      return "no GPU of an allowed model";
    case Predicate::kCpu:
      return "not enough free CPU";
    case Predicate::kMemory:
      return "not enough free memory";
    case Predicate::kWholeGpus:
      return "not enough idle GPUs";
    case Predicate::kGpuFraction:
      return "no GPU with enough free portion or memory";
    case Predicate::kGpuMemoryLimit:
      return "room for the GPU memory request but not for its limit at the node's overcommit";
    case Predicate::kReserved:
      return "reserved for a waiting workload";
  }
  return "unknown";
}

namespace {

bool tolerates_all(const NodeSpec& node, const PodSpec& pod) {
  for (const Taint& taint : node.taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    bool tolerated = false;
    for (const Toleration& toleration : pod.tolerations) {
      if (toleration.tolerates(taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return false;
  }
  return true;
}

bool selector_matches(const NodeSpec& node, const PodSpec& pod) {
  for (const auto& [key, value] : pod.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  return true;
}

bool has_allowed_model(const NodeSpec& node, const PodSpec& pod) {
  if (pod.allowed_models.is_any()) return true;
  for (const GpuDevice& device : node.gpus) {
    if (pod.allowed_models.allows(device.model)) return true;
  }
  return false;
}

}  // namespace

Predicate check_static(const NodeSpec& node, const PodSpec& pod) {
  if (!node.schedulable) return Predicate::kUnschedulable;
  if (!selector_matches(node, pod)) return Predicate::kNodeSelector;
  if (!tolerates_all(node, pod)) return Predicate::kTaint;
  if (pod.gpu.wants_gpu() && !has_allowed_model(node, pod)) return Predicate::kGpuModel;
  return Predicate::kFits;
}

namespace {

// Room for the request: the device's model is allowed and its memory has the request's portion.
bool request_fits(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device) {
  const GpuDevice& gpu = node.gpus[device];
  return pod.allowed_models.allows(gpu.model) &&
         pod.gpu.milli_on_device(gpu.memory_bytes) <= state.gpu_free_milli(device);
}

// Whether limits can say more than requests: the pod's limit passes its request, or a pod on the
// node already bursts. Otherwise the limits on a device are its requests, within its memory and
// so within any overcommit (>= 1): the common case, decided without computing a limit.
bool limits_matter(const NodeState& state, const PodSpec& pod) {
  return !state.gpu_burst_milli.empty() ||
         (pod.gpu.kind == GpuRequest::Kind::kMemory && pod.gpu.memory_limit_bytes > pod.gpu.memory_bytes);
}

// Room for the limit: the device's limits stay within the node's overcommit cap, and the limit
// within the device (a limit beyond its memory fits nowhere).
bool limit_fits(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device) {
  const int limit = pod.gpu.limit_milli_on_device(node.gpus[device].memory_bytes);
  return limit <= kMilliPerGpu && state.device_limit_milli(device) + limit <= node.gpu_memory_overcommit_milli;
}

}  // namespace

bool device_fits_fraction(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device) {
  return request_fits(node, state, pod, device) && (!limits_matter(state, pod) || limit_fits(node, state, pod, device));
}

Predicate check_capacity(const NodeSpec& node, const NodeState& state, const PodSpec& pod) {
  if (pod.request.cpu_milli > state.free.cpu_milli) return Predicate::kCpu;
  if (pod.request.memory_bytes > state.free.memory_bytes) return Predicate::kMemory;
  switch (pod.gpu.kind) {
    case GpuRequest::Kind::kNone:
      return Predicate::kFits;
    case GpuRequest::Kind::kWhole: {
      int idle = 0;
      for (int device = 0; device < node.gpu_count(); ++device) {
        if (state.device_is_idle(device) && pod.allowed_models.allows(node.gpus[device].model)) ++idle;
      }
      return idle >= pod.gpu.whole_gpus ? Predicate::kFits : Predicate::kWholeGpus;
    }
    case GpuRequest::Kind::kPortion:
    case GpuRequest::Kind::kMemory: {
      const bool limits = limits_matter(state, pod);
      bool request_room = false;
      for (int device = 0; device < node.gpu_count(); ++device) {
        if (!request_fits(node, state, pod, device)) continue;
        if (!limits || limit_fits(node, state, pod, device)) return Predicate::kFits;
        request_room = true;
      }
      return request_room ? Predicate::kGpuMemoryLimit : Predicate::kGpuFraction;
    }
  }
  return Predicate::kFits;
}

}  // namespace tessera
