// The ceiling of the arrival experiment: how much of the GPU capacity a packing could allocate
// if it knew every arrived pod in advance. The pods are sorted largest first (GPU request, then
// CPU, then memory) and placed in that order — on the lowest-index node and device each fits
// (first-fit decreasing), and by the tessera policy measured against exactly these pods (where
// some are constrained to GPU models, also by its per-node measure without its cluster-wide term)
// — with CPU, memory and GPU models respected; the best packing counts. All are packings that
// exist, so the figure is a floor under the true offline optimum. `tessera sim` reports it beside
// the policies and the share of FGD's gap to it that each policy closes.
#pragma once

#include <memory>
#include <span>

#include "core/cluster.h"
#include "core/pod.h"

namespace tessera {

// GPU milli allocated by the best of the offline packings of `pods` on an empty cluster.
int64_t offline_packed_gpu_milli(const std::shared_ptr<const ClusterSpec>& cluster, std::span<const PodSpec> pods);

}  // namespace tessera
