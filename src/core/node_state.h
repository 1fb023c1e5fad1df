// What is in use on a node: free CPU and memory, and the portion of each GPU device taken.
#pragma once

#include <cstdint>
#include <vector>

#include "core/binding.h"
#include "core/gpu_request.h"
#include "core/node.h"
#include "core/pod.h"

namespace tessera {

struct NodeState {
  Resources free;
  std::vector<int16_t> gpu_used_milli;  // one entry per device, 0..1000
  int32_t pod_count = 0;

  static NodeState empty(const NodeSpec& spec) {
    NodeState state;
    state.free = spec.allocatable;
    state.gpu_used_milli.assign(spec.gpus.size(), 0);
    return state;
  }

  int gpu_free_milli(int device) const { return kMilliPerGpu - gpu_used_milli[device]; }
  bool device_is_idle(int device) const { return gpu_used_milli[device] == 0; }

  int idle_devices() const {
    int count = 0;
    for (int16_t used : gpu_used_milli) count += used == 0 ? 1 : 0;
    return count;
  }
  int64_t gpu_used_total() const {
    int64_t total = 0;
    for (int16_t used : gpu_used_milli) total += used;
    return total;
  }
  int64_t gpu_free_total() const {
    return int64_t{kMilliPerGpu} * static_cast<int64_t>(gpu_used_milli.size()) - gpu_used_total();
  }

  void apply(const PodSpec& pod, const Binding& binding) {
    free -= pod.request;
    for (int16_t device : binding.devices) {
      gpu_used_milli[device] = static_cast<int16_t>(gpu_used_milli[device] + binding.milli_per_device);
    }
    ++pod_count;
  }
  void release(const PodSpec& pod, const Binding& binding) {
    free += pod.request;
    for (int16_t device : binding.devices) {
      gpu_used_milli[device] = static_cast<int16_t>(gpu_used_milli[device] - binding.milli_per_device);
    }
    --pod_count;
  }

  friend bool operator==(const NodeState&, const NodeState&) = default;
};

}  // namespace tessera
