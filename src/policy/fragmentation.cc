#include "policy/fragmentation.h"

#include <algorithm>
#include <array>

namespace tessera {

namespace {

int device_need_milli(const GpuRequest& gpu, const GpuDevice& device) {
  return gpu.kind == GpuRequest::Kind::kWhole ? kMilliPerGpu : gpu.milli_on_device(device.memory_bytes);
}

bool resources_fit(const NodeState& state, const PodType& type, FragmentationRules rules) {
  return rules.check_memory ? type.request.fits_in(state.free) : type.request.cpu_milli <= state.free.cpu_milli;
}

bool type_fits(const NodeSpec& node, const NodeState& state, const PodType& type, FragmentationRules rules) {
  if (!resources_fit(state, type, rules)) return false;
  switch (type.gpu.kind) {
    case GpuRequest::Kind::kNone:
      return true;
    case GpuRequest::Kind::kWhole: {
      int idle = 0;
      for (int device = 0; device < node.gpu_count(); ++device) {
        if (state.device_is_idle(device) && type.allowed_models.allows(node.gpus[device].model)) ++idle;
      }
      return idle >= type.gpu.whole_gpus;
    }
    case GpuRequest::Kind::kPortion:
    case GpuRequest::Kind::kMemory:
      for (int device = 0; device < node.gpu_count(); ++device) {
        if (type.allowed_models.allows(node.gpus[device].model) &&
            device_need_milli(type.gpu, node.gpus[device]) <= state.gpu_free_milli(device)) {
          return true;
        }
      }
      return false;
  }
  return false;
}

}  // namespace

double type_fragmentation(const NodeSpec& node, const NodeState& state, const PodType& type, FragmentationRules rules) {
  if (!type.gpu.wants_gpu() && rules.cpu_only_types_fragment_everything)
    return static_cast<double>(state.gpu_free_total());
  if (!type_fits(node, state, type, rules)) return static_cast<double>(state.gpu_free_total());
  if (!type.gpu.wants_gpu()) return 0;
  int64_t fragmented = 0;
  for (int device = 0; device < node.gpu_count(); ++device) {
    const int free = state.gpu_free_milli(device);
    if (!type.allowed_models.allows(node.gpus[device].model) || free < device_need_milli(type.gpu, node.gpus[device])) {
      fragmented += free;
    }
  }
  return static_cast<double>(fragmented);
}

namespace {

// The common case — every device of the node of one model and memory size — summarised once
// per node state, so each pod type costs O(1) for the fit test and a short scan for the sum.
struct UniformDevices {
  GpuDevice device;
  int idle = 0;
  int max_free = 0;
  int64_t free_total = 0;
  std::array<int, 64> free_ascending{};
  int count = 0;
};

bool summarize_uniform(const NodeSpec& node, const NodeState& state, UniformDevices& summary) {
  if (node.gpus.size() > summary.free_ascending.size() || !node.devices_alike()) return false;
  summary.device = node.gpus.front();
  summary.count = node.gpu_count();
  for (int device = 0; device < summary.count; ++device) {
    const int free = state.gpu_free_milli(device);
    summary.free_ascending[static_cast<size_t>(device)] = free;
    summary.idle += free == kMilliPerGpu ? 1 : 0;
    summary.max_free = std::max(summary.max_free, free);
    summary.free_total += free;
  }
  std::sort(summary.free_ascending.begin(), summary.free_ascending.begin() + summary.count);
  return true;
}

double uniform_type_fragmentation(const UniformDevices& devices, const NodeState& state, const PodType& type,
                                  FragmentationRules rules) {
  const auto free_total = static_cast<double>(devices.free_total);
  if (!type.gpu.wants_gpu() && rules.cpu_only_types_fragment_everything) return free_total;
  if (!resources_fit(state, type, rules)) return free_total;
  if (!type.gpu.wants_gpu()) return 0;
  if (!type.allowed_models.allows(devices.device.model)) return free_total;
  const int need = device_need_milli(type.gpu, devices.device);
  const bool fits =
      type.gpu.kind == GpuRequest::Kind::kWhole ? devices.idle >= type.gpu.whole_gpus : devices.max_free >= need;
  if (!fits) return free_total;
  int64_t fragmented = 0;
  for (int i = 0; i < devices.count && devices.free_ascending[static_cast<size_t>(i)] < need; ++i) {
    fragmented += devices.free_ascending[static_cast<size_t>(i)];
  }
  return static_cast<double>(fragmented);
}

}  // namespace

double expected_fragmentation(const NodeSpec& node, const NodeState& state, const WorkloadMix& mix,
                              FragmentationRules rules) {
  if (node.gpus.empty()) return 0;
  double expected = 0;
  UniformDevices devices;
  if (summarize_uniform(node, state, devices)) {
    for (const PodType& type : mix.types())
      expected += type.popularity * uniform_type_fragmentation(devices, state, type, rules);
  } else {
    for (const PodType& type : mix.types()) expected += type.popularity * type_fragmentation(node, state, type, rules);
  }
  return expected;
}

}  // namespace tessera
