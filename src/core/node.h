// A node as declared: allocatable CPU and memory, its GPU devices, labels and taints.
#pragma once

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

  int gpu_count() const { return static_cast<int>(gpus.size()); }
};

}  // namespace tessera
