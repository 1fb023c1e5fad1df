// GPU fragmentation as defined by FGD ("Beware of Fragmentation", Weng et al., USENIX ATC'23).
//
// For a node n and a pod type m, F_n(m) is the free GPU capacity on n that a pod of type m
// cannot use:
//   - if m cannot be placed on n at all (CPU, GPU model, or GPU capacity short), every free GPU
//     portion on n is fragmented:                F_n(m) = sum_g free_g
//   - otherwise the devices whose free portion is below what m needs of one device (its
//     portion, or a whole device) are fragmented: F_n(m) = sum_{g : free_g < min(d_m, 1)} free_g
// The node's expected fragmentation against the workload mix M is F_n(M) = sum_m p_m F_n(m),
// and the cluster's is the sum over nodes. Units here are milli-GPU.
//
// Two details differ between readings, so they are rules:
//   - kFgdRules follows the reference implementation of the paper: a CPU-only type counts every
//     free GPU as fragmented (it can use none), and fitting checks CPU but not memory.
//   - kResourceAwareRules (Tessera's): a CPU-only type fragments the GPUs only of a node it no
//     longer fits on — its CPU is what strands them — and fitting checks memory too.
#pragma once

#include "core/node.h"
#include "core/node_state.h"
#include "policy/workload_mix.h"

namespace tessera {

struct FragmentationRules {
  bool cpu_only_types_fragment_everything = true;
  bool check_memory = false;
};
inline constexpr FragmentationRules kFgdRules{true, false};
inline constexpr FragmentationRules kResourceAwareRules{false, true};

double type_fragmentation(const NodeSpec& node, const NodeState& state, const PodType& type,
                          FragmentationRules rules = kFgdRules);
double expected_fragmentation(const NodeSpec& node, const NodeState& state, const WorkloadMix& mix,
                              FragmentationRules rules = kFgdRules);

}  // namespace tessera
