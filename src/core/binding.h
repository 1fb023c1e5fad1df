// Where a pod runs: its node and, for GPU pods, the devices it holds and the portion of each.
#pragma once

#include <cstdint>
#include <vector>

#include "core/node.h"

namespace tessera {

struct Binding {
  NodeIndex node = -1;
  std::vector<int16_t> devices;  // device indices on the node
  int milli_per_device = 0;      // 1000 for whole GPUs, the portion for a fractional pod

  int64_t gpu_milli() const { return int64_t{milli_per_device} * static_cast<int64_t>(devices.size()); }
  friend bool operator==(const Binding&, const Binding&) = default;
};

}  // namespace tessera
