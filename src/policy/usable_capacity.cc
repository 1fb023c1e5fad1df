#include "policy/usable_capacity.h"

#include <algorithm>

namespace tessera {

double stranded_capacity(const NodeSpec& node, const NodeState& state, const PodType& type) {
  const int64_t free_total = state.gpu_free_total();
  if (free_total == 0) return 0;
  if (!type.gpu.wants_gpu()) return type.request.fits_in(state.free) ? 0 : static_cast<double>(free_total);
  int64_t pods = pods_that_fit(state.free, type.request);
  int64_t usable = 0;
  if (type.gpu.kind == GpuRequest::Kind::kWhole) {
    int64_t idle = 0;
    for (int device = 0; device < node.gpu_count(); ++device) {
      if (state.device_is_idle(device) && type.allowed_models.allows(node.gpus[device].model)) ++idle;
    }
    usable = std::min(pods, idle / type.gpu.whole_gpus) * type.gpu.whole_gpus * kMilliPerGpu;
  } else {
    // Each pod of the type takes `need` of one device, so device order does not matter while
    // the CPU/memory budget lasts.
    for (int device = 0; device < node.gpu_count() && pods > 0; ++device) {
      if (!type.allowed_models.allows(node.gpus[device].model)) continue;
      const int need = type.gpu.milli_on_device(node.gpus[device].memory_bytes);
      if (need <= 0) continue;
      const int64_t fit = std::min<int64_t>(pods, state.gpu_free_milli(device) / need);
      usable += fit * need;
      pods -= fit;
    }
  }
  return static_cast<double>(free_total - std::min(usable, free_total));
}

double expected_stranded_capacity(const NodeSpec& node, const NodeState& state, const WorkloadMix& mix) {
  if (node.gpus.empty()) return 0;
  double expected = 0;
  for (const PodType& type : mix.types()) expected += type.popularity * stranded_capacity(node, state, type);
  return expected;
}

}  // namespace tessera
