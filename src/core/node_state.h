// What is in use on a node: free CPU and memory, and the portion of each GPU device taken.
#pragma once

#include <algorithm>
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
  // Per device, the GPU-memory limits of its pods beyond their requests (Binding::burst_milli);
  // empty while no pod on the node may burst, so that nodes without such pods pay nothing for it.
  std::vector<int16_t> gpu_burst_milli;
  int32_t pod_count = 0;

  static NodeState empty(const NodeSpec& spec) {
    NodeState state;
    state.free = spec.allocatable;
    state.gpu_used_milli.assign(spec.gpus.size(), 0);
    return state;
  }

  int gpu_free_milli(int device) const { return kMilliPerGpu - gpu_used_milli[device]; }
  int device_burst_milli(int device) const {
    return gpu_burst_milli.empty() ? 0 : gpu_burst_milli[static_cast<size_t>(device)];
  }
  // What the limits of the device's pods add up to, in milli of its memory.
  int device_limit_milli(int device) const { return gpu_used_milli[device] + device_burst_milli(device); }
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
    add_devices(binding.devices, binding.milli_per_device, binding.burst_milli);
    ++pod_count;
  }
  void release(const PodSpec& pod, const Binding& binding) {
    free += pod.request;
    add_devices(binding.devices, -binding.milli_per_device, -binding.burst_milli);
    --pod_count;
  }

  // Adds (or, negative, takes back) a portion and a burst on each of the devices.
  template <typename Devices>
  void add_devices(const Devices& devices, int milli, int burst) {
    for (int16_t device : devices) {
      gpu_used_milli[device] = static_cast<int16_t>(gpu_used_milli[device] + milli);
    }
    if (burst == 0) return;
    if (gpu_burst_milli.empty()) gpu_burst_milli.assign(gpu_used_milli.size(), 0);
    for (int16_t device : devices) {
      gpu_burst_milli[device] = static_cast<int16_t>(gpu_burst_milli[device] + burst);
    }
    // Back to empty once no pod may burst: equal states compare equal.
    if (std::all_of(gpu_burst_milli.begin(), gpu_burst_milli.end(), [](int16_t b) { return b == 0; })) {
      gpu_burst_milli.clear();
    }
  }

  friend bool operator==(const NodeState&, const NodeState&) = default;
};

}  // namespace tessera
