#include "policy/model_scarcity.h"

#include <algorithm>

#include "policy/feasibility.h"

namespace tessera {

ModelScarcity::ModelScarcity(const WorkloadMix& mix) {
  for (const PodType& type : mix.types()) {
    if (!type.gpu.wants_gpu()) continue;
    gpu_types_.push_back(type);
    any_constrained_ = any_constrained_ || !type.allowed_models.is_any();
  }
}

namespace {

// What a pod takes of devices of `memory_bytes` each, in milli-GPU.
double gpu_taken(const GpuRequest& gpu, int64_t memory_bytes) {
  return gpu.kind == GpuRequest::Kind::kWhole ? static_cast<double>(gpu.nominal_milli())
                                              : gpu.milli_on_device(memory_bytes);
}

}  // namespace

void ModelScarcity::work_out_shares(const GpuSupply& supply) {
  std::array<double, GpuModelSet::kMaxModels> shares{};
  double total = 0;
  for (const PodType& type : gpu_types_) {
    // A type's demand is spread over the models it may use in proportion to their GPUs.
    int64_t allowed_capacity = 0;
    for (size_t model = 0; model < shares.size(); ++model) {
      if (type.allowed_models.allows(static_cast<GpuModelId>(model))) allowed_capacity += supply.capacity_milli[model];
    }
    if (allowed_capacity == 0) continue;  // no model of the cluster serves it
    for (size_t model = 0; model < shares.size(); ++model) {
      if (supply.capacity_milli[model] == 0 || !type.allowed_models.allows(static_cast<GpuModelId>(model))) continue;
      const double demand = type.popularity * gpu_taken(type.gpu, supply.device_memory_bytes[model]) *
                            static_cast<double>(supply.capacity_milli[model]) / static_cast<double>(allowed_capacity);
      total += demand;
      if (!type.allowed_models.is_any()) shares[model] += demand;
    }
  }
  if (total > 0) {
    for (double& share : shares) share /= total;
  }
  shares_ = shares;
}

double ModelScarcity::constrained_share(GpuModelId model, const GpuSupply& supply) {
  if (!shares_) work_out_shares(supply);
  return (*shares_)[model];
}

double ModelScarcity::pressure(GpuModelId model, const GpuSupply& supply) {
  const int64_t free = supply.free_milli[model];
  if (free <= 0) return 0;
  return constrained_share(model, supply) * static_cast<double>(supply.free_total_milli) / static_cast<double>(free);
}

double ModelScarcity::cost(const NodeSpec& node, const NodeState& state, const PodSpec& pod, const GpuSupply& supply) {
  if (!any_constrained_ || !pod.gpu.wants_gpu() || node.gpus.empty()) return 0;
  if (pod.gpu.is_fractional()) {
    for (int device = 0; device < node.gpu_count(); ++device) {
      if (!state.device_is_idle(device) && device_fits_fraction(node, state, pod, device)) return 0;
    }
  }
  const GpuDevice& device = node.gpus.front();
  return kWeight * gpu_taken(pod.gpu, device.memory_bytes) * std::min(pressure(device.model, supply), 1.0);
}

}  // namespace tessera
