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

bool device_fits_fraction(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device) {
  const GpuDevice& gpu = node.gpus[device];
  if (!pod.allowed_models.allows(gpu.model)) return false;
  return pod.gpu.milli_on_device(gpu.memory_bytes) <= state.gpu_free_milli(device);
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
    case GpuRequest::Kind::kMemory:
      for (int device = 0; device < node.gpu_count(); ++device) {
        if (device_fits_fraction(node, state, pod, device)) return Predicate::kFits;
      }
      return Predicate::kGpuFraction;
  }
  return Predicate::kFits;
}

}  // namespace tessera
