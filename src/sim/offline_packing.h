// The ceiling of the arrival experiment: how much of the GPU capacity a packing could allocate
// if it knew every arrived pod in advance. CPU-only pods come first (a scheduler serves them as
// they come, so a packing may not leave them out to make room for GPU pods). The GPU pods are
// sorted largest first (GPU request, those held to GPU models before the others, then CPU, then
// memory) and placed in that order: on the
// lowest-index node and device each fits (first-fit decreasing); by the tessera policy measured
// against exactly these pods (where some are constrained to GPU models, also by its per-node
// measure without its cluster-wide term); and with the fractional pods first grouped into
// one-device patterns (sim/slack_patterns.h) that the tessera policy places as units — there
// also with the CPU-only pods after the GPU pods, which counts only where they are then served
// as fully as when they come first; and both again by the tessera policy measured against the
// pods still to place, re-made at each smaller whole-GPU request and at the fractions (a packing
// that knows what is to come keeps no idle devices for types whose pods are all placed). CPU, memory and GPU models are
// respected; the best packing counts. All are packings that exist, so the figure is a floor under the true offline
// optimum. Where CPU runs out before the GPUs, serving every CPU-only pod first costs GPU pods their CPU, and online
// policies, which turn late CPU-only pods away, can beat the figure. `tessera sim` reports it beside the policies and
// the share of FGD's gap to it that each policy closes.
#pragma once

#include <memory>
#include <span>

#include "core/cluster.h"
#include "core/pod.h"

namespace tessera {

// GPU milli allocated by the best of the offline packings of `pods` on an empty cluster.
int64_t offline_packed_gpu_milli(const std::shared_ptr<const ClusterSpec>& cluster, std::span<const PodSpec> pods);

}  // namespace tessera
