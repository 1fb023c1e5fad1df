// A node as declared: allocatable CPU and memory, its GPU devices, labels and taints.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/gpu_model.h"
#include "core/resources.h"
#include "core/taint.h"

namespace tessera {

using NodeIndex = int32_t;
using Labels = std::map<std::string, std::string>;

struct GpuDevice {
  GpuModelId model = 0;
  int64_t memory_bytes = 0;
  friend bool operator==(const GpuDevice&, const GpuDevice&) = default;
};

struct NodeSpec {
  std::string name;
  Resources allocatable;
  std::vector<GpuDevice> gpus;
  Labels labels;
  std::vector<Taint> taints;
  bool schedulable = true;
  // How far the GPU-memory limits of the pods on one device may add up, in milli of its memory:
  // 1000 (a ratio of 1.0) lets no limit overcommit it, 1500 lets limits reach 1.5 times it.
  // Requests never pass the memory itself. Set from the node's pool (core/node_pool.h).
  int gpu_memory_overcommit_milli = 1000;

  int gpu_count() const { return static_cast<int>(gpus.size()); }
  // Whether every device is of one model and memory size (true without devices).
  bool devices_alike() const {
    return std::all_of(gpus.begin(), gpus.end(), [&](const GpuDevice& device) { return device == gpus.front(); });
  }
};

}  // namespace tessera
