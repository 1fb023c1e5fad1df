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

// Whether the device has room for the request (its memory) only, and for the limit too (the
// overcommit cap on the sum of the limits; a limit beyond the device's memory fits nowhere).
enum class DeviceRoom : uint8_t { kNone, kRequestOnly, kBoth };

DeviceRoom device_room(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device) {
  const GpuDevice& gpu = node.gpus[device];
  if (!pod.allowed_models.allows(gpu.model)) return DeviceRoom::kNone;
  const int request = pod.gpu.milli_on_device(gpu.memory_bytes);
  if (request > state.gpu_free_milli(device)) return DeviceRoom::kNone;
  // A limit equal to the request, on a node without bursts, takes no room but the request's: the
  // common case, decided without computing the limit.
  const bool bursts = pod.gpu.kind == GpuRequest::Kind::kMemory && pod.gpu.memory_limit_bytes > pod.gpu.memory_bytes;
  if (!bursts && state.gpu_burst_milli.empty()) return DeviceRoom::kBoth;
  const int limit = pod.gpu.limit_milli_on_device(gpu.memory_bytes);
  return limit <= kMilliPerGpu && state.device_limit_milli(device) + limit <= node.gpu_memory_overcommit_milli
             ? DeviceRoom::kBoth
             : DeviceRoom::kRequestOnly;
}

}  // namespace

bool device_fits_fraction(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device) {
  return device_room(node, state, pod, device) == DeviceRoom::kBoth;
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
      bool request_room = false;
      for (int device = 0; device < node.gpu_count(); ++device) {
        const DeviceRoom room = device_room(node, state, pod, device);
        if (room == DeviceRoom::kBoth) return Predicate::kFits;
        request_room = request_room || room == DeviceRoom::kRequestOnly;
      }
      return request_room ? Predicate::kGpuMemoryLimit : Predicate::kGpuFraction;
    }
  }
  return Predicate::kFits;
}

}  // namespace tessera
