// The GPU memory of each node pool as the scheduler accounts it — capacity, what bound pods
// request, what their limits add up to, and the cap the pool's overcommit puts on those limits —
// and how many workloads wait for limit room: what explains memory pressure on /metrics.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/cluster_state.h"
#include "scheduler/cycle.h"

namespace tessera::adapter {

struct PoolGpuMemory {
  double capacity_bytes = 0;
  double requested_bytes = 0;  // memory pods' requests, other GPU pods' portions of their devices
  double limit_bytes = 0;      // the same with memory pods' limits
  double limit_cap_bytes = 0;  // capacity times the pool's overcommit
};

// By pool (core/node_pool.h).
std::map<std::string, PoolGpuMemory> gpu_memory_by_pool(const ClusterState& cluster);

using GaugeSamples = std::vector<std::pair<std::map<std::string, std::string>, double>>;

// tessera_gpu_memory_bytes{pool, measure=capacity|requested|limits|limit_cap}.
GaugeSamples gpu_memory_samples(const std::map<std::string, PoolGpuMemory>& pools);

// Workloads still pending whose failing pod found nodes with room for its GPU memory request but
// not for its limit (Predicate::kGpuMemoryLimit).
double gpu_memory_limit_pending(const CycleResult& result);

}  // namespace tessera::adapter
