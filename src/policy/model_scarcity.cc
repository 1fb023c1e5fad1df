#include "policy/model_scarcity.h"

#include <algorithm>
#include <bit>

#include "policy/feasibility.h"

namespace tessera {

ModelScarcity::ModelScarcity(const WorkloadMix& mix) : cpu_per_gpu_milli_(mix.cpu_per_gpu_milli()) {
  for (const PodType& type : mix.types()) {
    if (!type.gpu.wants_gpu()) continue;
    gpu_types_.push_back(type);
  }
  // Which types the cluster's nodes constrain is known only with the cluster (work_out_shares).
  any_constrained_ = !gpu_types_.empty();
}

namespace {

// What a pod takes of devices of `memory_bytes` each, in milli-GPU.
double gpu_taken(const GpuRequest& gpu, int64_t memory_bytes) {
  return gpu.kind == GpuRequest::Kind::kWhole ? static_cast<double>(gpu.nominal_milli())
                                              : gpu.milli_on_device(memory_bytes);
}

// The models a type may use: those it names (any, if none) with a node of its GPU count that has
// its CPU and memory. Where those hold under half the GPUs of the models with nodes of its GPU
// count, the type can run only on the larger nodes, and counts as constrained to their models;
// otherwise its own set.
GpuModelSet usable_models(const PodType& type, const GpuSupply& supply, bool by_size) {
  if (!by_size) return type.allowed_models;
  const int gpus = type.gpu.kind == GpuRequest::Kind::kWhole ? type.gpu.whole_gpus : 1;
  uint64_t with_gpus = 0;
  uint64_t with_room = 0;
  for (const GpuSupply::NodeShape& shape : supply.node_shapes) {
    if (!type.allowed_models.allows(shape.model) || shape.gpus < gpus) continue;
    with_gpus |= uint64_t{1} << shape.model;
    if (type.request.fits_in(shape.allocatable)) with_room |= uint64_t{1} << shape.model;
  }
  auto capacity = [&](uint64_t models) {
    int64_t milli = 0;
    for (uint64_t bits = models; bits != 0; bits &= bits - 1) milli += supply.capacity_milli[std::countr_zero(bits)];
    return milli;
  };
  // Only a pod the larger part of the GPUs on nodes of its GPU count cannot take is held to the
  // models that can: narrowing it to most of the cluster would spread a cost over most models.
  if (with_room == 0 || 2 * capacity(with_room) >= capacity(with_gpus)) return type.allowed_models;
  GpuModelSet narrowed;
  for (uint64_t bits = with_room; bits != 0; bits &= bits - 1)
    narrowed.add(static_cast<GpuModelId>(std::countr_zero(bits)));
  return narrowed;
}

}  // namespace

void ModelScarcity::work_out_shares(const GpuSupply& supply) {
  std::array<double, GpuModelSet::kMaxModels> shares{};
  double total = 0;
  // Where CPU runs out first, it decides which pods fail: a pod's size constrains nothing.
  const bool by_size = supply.gpus_run_out_first(cpu_per_gpu_milli_);
  for (const PodType& type : gpu_types_) {
    const GpuModelSet models = usable_models(type, supply, by_size);
    // A type's demand is spread over the models it may use in proportion to their GPUs.
    int64_t allowed_capacity = 0;
    for (size_t model = 0; model < shares.size(); ++model) {
      if (models.allows(static_cast<GpuModelId>(model))) allowed_capacity += supply.capacity_milli[model];
    }
    if (allowed_capacity == 0) continue;  // no model of the cluster serves it
    for (size_t model = 0; model < shares.size(); ++model) {
      if (supply.capacity_milli[model] == 0 || !models.allows(static_cast<GpuModelId>(model))) continue;
      const double demand = type.popularity * gpu_taken(type.gpu, supply.device_memory_bytes[model]) *
                            static_cast<double>(supply.capacity_milli[model]) / static_cast<double>(allowed_capacity);
      total += demand;
      if (!models.is_any()) shares[model] += demand;
    }
  }
  if (total > 0) {
    for (double& share : shares) share /= total;
  }
  shares_ = shares;
  any_constrained_ = std::any_of(shares.begin(), shares.end(), [](double share) { return share > 0; });
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
  if (!shares_) work_out_shares(supply);
  if (!any_constrained_) return 0;
  const GpuDevice& first = node.gpus.front();
  const double model_pressure = pressure(first.model, supply);
  if (model_pressure == 0) return 0;  // no pod is constrained to the model (or none of it is free)
  if (pod.gpu.is_fractional()) {
    for (int device = 0; device < node.gpu_count(); ++device) {
      if (!state.device_is_idle(device) && device_fits_fraction(node, state, pod, device)) return 0;
    }
  }
  return kWeight * gpu_taken(pod.gpu, first.memory_bytes) * std::min(model_pressure, 1.0);
}

}  // namespace tessera
