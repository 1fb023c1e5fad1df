// Tessera's fragmentation measure: the free GPU capacity a pod type cannot actually use on a
// node once every resource is counted.
//
// FGD counts a free device as usable by type m as soon as one pod of m fits on the node. That
// misses two ways capacity is stranded: (1) CPU or memory runs out before the GPUs do — a node
// with 6 idle GPUs and CPU for one more pod can give type m one GPU, not six; (2) a device's
// free portion that is not a multiple of m's portion — 0.9 free serves one 0.47 pod and
// strands 0.43. So we count how many more pods of m the node can really take,
//   k_m = min( floor(free_cpu / cpu_m), floor(free_mem / mem_m), gpu_slots_m )
//   gpu_slots_m = floor(idle_devices / n_m)             for n_m whole GPUs
//               = sum_g floor(free_g / d_m)              for a portion d_m
// and the GPU capacity they would use, U_m = min(k_m * gpu_m, sum_g free_g). The stranded
// capacity is S_n(m) = sum_g free_g - U_m. A CPU-only type strands every free GPU of a node it
// no longer fits on (its CPU is what GPU pods need there too), and nothing otherwise.
// S_n(M) = sum_m p_m S_n(m).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/node.h"
#include "core/node_state.h"
#include "policy/workload_mix.h"

namespace tessera {

// How many more pods asking `request` the free CPU and memory hold (no limit where it asks for none).
// Inline: the tessera measure's inner loop asks it of type after type.
inline int64_t pods_that_fit(const Resources& free, const Resources& request) {
  int64_t pods = std::numeric_limits<int64_t>::max();
  if (request.cpu_milli > 0) pods = std::min(pods, free.cpu_milli / request.cpu_milli);
  if (request.memory_bytes > 0) pods = std::min(pods, free.memory_bytes / request.memory_bytes);
  return std::max<int64_t>(pods, 0);
}

double stranded_capacity(const NodeSpec& node, const NodeState& state, const PodType& type);
double expected_stranded_capacity(const NodeSpec& node, const NodeState& state, const WorkloadMix& mix);

}  // namespace tessera
