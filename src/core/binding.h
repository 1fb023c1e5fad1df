// Where a pod runs: its node and, for GPU pods, the devices it holds and the portion of each.
#pragma once

#include <cstdint>
#include <vector>

#include "core/gpu_request.h"
#include "core/node.h"

namespace tessera {

struct Binding {
  NodeIndex node = -1;
  std::vector<int16_t> devices;  // device indices on the node
  int milli_per_device = 0;      // 1000 for whole GPUs, the portion for a fractional pod
  // A GPU-memory pod's limit beyond its request, in milli of its device: what it may burst to,
  // held against the node's overcommit cap (NodeSpec::gpu_memory_overcommit_milli).
  int burst_milli = 0;

  // A fractional pod's binding to one device of `device_memory_bytes`.
  static Binding on_device(NodeIndex node, int device, const GpuRequest& gpu, int64_t device_memory_bytes) {
    return {.node = node,
            .devices = {static_cast<int16_t>(device)},
            .milli_per_device = gpu.milli_on_device(device_memory_bytes),
            .burst_milli = gpu.burst_milli_on_device(device_memory_bytes)};
  }

  int64_t gpu_milli() const { return int64_t{milli_per_device} * static_cast<int64_t>(devices.size()); }
  friend bool operator==(const Binding&, const Binding&) = default;
};

}  // namespace tessera
