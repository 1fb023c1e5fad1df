// The declared cluster: its GPU model catalog and nodes. Immutable once built.
#pragma once

#include <vector>

#include "core/gpu_model.h"
#include "core/node.h"

namespace tessera {

struct ClusterSpec {
  GpuModelCatalog models;
  std::vector<NodeSpec> nodes;

  int64_t gpu_capacity_milli() const {
    int64_t total = 0;
    for (const auto& node : nodes) total += int64_t{node.gpu_count()} * 1000;
    return total;
  }
};

}  // namespace tessera
