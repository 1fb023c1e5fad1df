// The workload mix a fragmentation measure is taken against: the distinct pod types of a
// workload (CPU, memory, GPU request, allowed models) and how often each occurs (FGD's
// "target workload", its task types m with popularity p_m).
#pragma once

#include <span>
#include <vector>

#include "core/pod.h"

namespace tessera {

struct PodType {
  Resources request;
  GpuRequest gpu;
  GpuModelSet allowed_models;
  double popularity = 0;  // share of pods of this type; the types' popularities sum to 1
};

class WorkloadMix {
 public:
  WorkloadMix() = default;
  explicit WorkloadMix(std::vector<PodType> types) : types_(std::move(types)) {}
  static WorkloadMix from_pods(std::span<const PodSpec> pods);

  // FGD's "typical pods": types told apart by CPU and GPU request only (memory ignored), the
  // most popular kept until they cover `coverage` of the pods, popularities renormalised.
  WorkloadMix typical(double coverage = 0.95) const;

  // The CPU the mix asks for per milli-GPU (0 without GPU demand).
  double cpu_per_gpu_milli() const;

  const std::vector<PodType>& types() const { return types_; }
  bool empty() const { return types_.empty(); }

 private:
  std::vector<PodType> types_;
};

}  // namespace tessera
