#include "policy/fragmentation.h"

namespace tessera {

namespace {

int device_need_milli(const GpuRequest& gpu, const GpuDevice& device) {
  return gpu.kind == GpuRequest::Kind::kWhole ? kMilliPerGpu : gpu.milli_on_device(device.memory_bytes);
}

bool type_fits(const NodeSpec& node, const NodeState& state, const PodType& type) {
  if (!type.request.fits_in(state.free)) return false;
  switch (type.gpu.kind) {
    case GpuRequest::Kind::kNone: return true;
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

double type_fragmentation(const NodeSpec& node, const NodeState& state, const PodType& type) {
  if (!type_fits(node, state, type)) return static_cast<double>(state.gpu_free_total());
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

double expected_fragmentation(const NodeSpec& node, const NodeState& state, const WorkloadMix& mix) {
  if (node.gpus.empty()) return 0;
  double expected = 0;
  for (const PodType& type : mix.types()) expected += type.popularity * type_fragmentation(node, state, type);
  return expected;
}

}  // namespace tessera
