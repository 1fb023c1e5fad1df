#include "adapter/gpu_memory_metrics.h"

#include "core/node_pool.h"

namespace tessera::adapter {

std::map<std::string, PoolGpuMemory> gpu_memory_by_pool(const ClusterState& cluster) {
  std::map<std::string, PoolGpuMemory> pools;
  std::vector<PoolGpuMemory*> pool_of(static_cast<size_t>(cluster.node_count()));
  for (NodeIndex node = 0; node < cluster.node_count(); ++node) {
    const NodeSpec& spec = cluster.node_spec(node);
    if (spec.gpus.empty()) continue;
    PoolGpuMemory& pool = pools[std::string(node_pool(spec.labels))];
    pool_of[static_cast<size_t>(node)] = &pool;
    for (const GpuDevice& device : spec.gpus) {
      const auto memory = static_cast<double>(device.memory_bytes);
      pool.capacity_bytes += memory;
      pool.limit_cap_bytes += memory * spec.gpu_memory_overcommit_milli / 1000.0;
    }
  }
  for (PodId pod = 0; pod < cluster.pod_count(); ++pod) {
    const std::optional<Binding>& binding = cluster.binding(pod);
    if (!binding || binding->devices.empty()) continue;
    PoolGpuMemory* pool = pool_of[static_cast<size_t>(binding->node)];
    const NodeSpec& spec = cluster.node_spec(binding->node);
    const GpuRequest& gpu = cluster.pod(pod).gpu;
    for (int16_t device : binding->devices) {
      const auto memory = static_cast<double>(spec.gpus[static_cast<size_t>(device)].memory_bytes);
      const double request = gpu.kind == GpuRequest::Kind::kMemory ? static_cast<double>(gpu.memory_bytes)
                                                                   : memory * binding->milli_per_device / 1000.0;
      pool->requested_bytes += request;
      pool->limit_bytes += gpu.kind == GpuRequest::Kind::kMemory
                               ? static_cast<double>(std::max(gpu.memory_limit_bytes, gpu.memory_bytes))
                               : request;
    }
  }
  return pools;
}

GaugeSamples gpu_memory_samples(const std::map<std::string, PoolGpuMemory>& pools) {
  GaugeSamples samples;
  for (const auto& [pool, memory] : pools) {
    samples.push_back({{{"pool", pool}, {"measure", "capacity"}}, memory.capacity_bytes});
    samples.push_back({{{"pool", pool}, {"measure", "requested"}}, memory.requested_bytes});
    samples.push_back({{{"pool", pool}, {"measure", "limits"}}, memory.limit_bytes});
    samples.push_back({{{"pool", pool}, {"measure", "limit_cap"}}, memory.limit_cap_bytes});
  }
  return samples;
}

double gpu_memory_limit_pending(const CycleResult& result) {
  double workloads = 0;
  for (const PendingWorkload& pending : result.pending) {
    workloads += pending.reason.nodes.nodes_by_predicate[static_cast<size_t>(Predicate::kGpuMemoryLimit)] > 0 ? 1 : 0;
  }
  return workloads;
}

}  // namespace tessera::adapter
