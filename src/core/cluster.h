// The declared cluster: its GPU model catalog and nodes. Immutable once built.
#pragma once

#include <algorithm>
#include <vector>

#include "core/gpu_model.h"
#include "core/node.h"
#include "core/topology.h"

namespace tessera {

struct ClusterSpec {
  GpuModelCatalog models;
  std::vector<NodeSpec> nodes;
  std::vector<Topology> topologies;  // by name; workloads refer to them

  int64_t gpu_capacity_milli() const {
    int64_t total = 0;
    for (const auto& node : nodes) total += int64_t{node.gpu_count()} * 1000;
    return total;
  }

  // The memory of the median GPU device (0 without GPUs): what a GPU-memory request is measured
  // against before it is placed on a device of its own.
  int64_t median_device_memory() const {
    std::vector<int64_t> memories;
    for (const NodeSpec& node : nodes) {
      for (const GpuDevice& device : node.gpus) memories.push_back(device.memory_bytes);
    }
    if (memories.empty()) return 0;
    auto middle = memories.begin() + static_cast<std::ptrdiff_t>(memories.size() / 2);
    std::nth_element(memories.begin(), middle, memories.end());
    return *middle;
  }
};

}  // namespace tessera
