#include "policy/device_choice.h"

#include <algorithm>
#include <tuple>

#include "policy/feasibility.h"

namespace tessera {

std::vector<int16_t> pick_whole_devices(const NodeSpec& node, const NodeState& state, const PodSpec& pod) {
  const auto wanted = static_cast<size_t>(std::max(pod.gpu.whole_gpus, 0));
  const bool one_kind = node.devices_alike();
  std::vector<int16_t> devices;
  for (int device = 0; device < node.gpu_count() && (!one_kind || devices.size() < wanted); ++device) {
    if (state.device_is_idle(device) && pod.allowed_models.allows(node.gpus[device].model)) {
      devices.push_back(static_cast<int16_t>(device));
    }
  }
  if (devices.size() <= wanted) return devices;
  // Of several kinds, by kind first: which kinds the pod takes then depends on how many of each
  // are idle, not on which of them a fraction holds, so that nodes holding the same in different
  // orders take alike.
  std::stable_sort(devices.begin(), devices.end(), [&](int16_t a, int16_t b) {
    const GpuDevice& first = node.gpus[static_cast<size_t>(a)];
    const GpuDevice& second = node.gpus[static_cast<size_t>(b)];
    return std::tie(first.memory_bytes, first.model) < std::tie(second.memory_bytes, second.model);
  });
  devices.resize(wanted);
  std::sort(devices.begin(), devices.end());
  return devices;
}

std::vector<int> fraction_candidates(const NodeSpec& node, const NodeState& state, const PodSpec& pod) {
  std::vector<int> candidates;
  fraction_candidates(node, state, pod, candidates);
  return candidates;
}

void fraction_candidates(const NodeSpec& node, const NodeState& state, const PodSpec& pod,
                         std::vector<int>& candidates) {
  candidates.clear();
  for (int device = 0; device < node.gpu_count(); ++device) {
    if (!device_fits_fraction(node, state, pod, device)) continue;
    bool duplicate = false;
    for (int earlier : candidates) {
      if (node.gpus[earlier] == node.gpus[device] && state.gpu_used_milli[earlier] == state.gpu_used_milli[device] &&
          state.device_burst_milli(earlier) == state.device_burst_milli(device)) {
        duplicate = true;
        break;
      }
    }
    if (!duplicate) candidates.push_back(device);
  }
}

bool fills_first(const NodeSpec& node, const NodeState& state, int a, int b) {
  auto order = [&](int device) {
    const GpuDevice& spec = node.gpus[static_cast<size_t>(device)];
    return std::tuple(-state.gpu_used_milli[static_cast<size_t>(device)], -state.device_burst_milli(device), spec.model,
                      spec.memory_bytes);
  };
  return order(a) < order(b);
}

NodeState state_after(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device) {
  NodeState after = state;
  Binding binding;
  if (pod.gpu.kind == GpuRequest::Kind::kWhole) {
    binding.devices = pick_whole_devices(node, state, pod);
    binding.milli_per_device = kMilliPerGpu;
  } else if (pod.gpu.is_fractional() && device >= 0) {
    binding = Binding::on_device(binding.node, device, pod.gpu, node.gpus[device].memory_bytes);
  }
  after.apply(pod, binding);
  return after;
}

namespace {

template <typename Better>
int extreme_device(const NodeSpec& node, const NodeState& state, const PodSpec& pod, Better better) {
  int chosen = -1;
  int chosen_free = 0;
  for (int device = 0; device < node.gpu_count(); ++device) {
    if (!device_fits_fraction(node, state, pod, device)) continue;
    int free_after = state.gpu_free_milli(device) - pod.gpu.milli_on_device(node.gpus[device].memory_bytes);
    if (chosen < 0 || better(free_after, chosen_free)) {
      chosen = device;
      chosen_free = free_after;
    }
  }
  return chosen;
}

}  // namespace

int tightest_device(const NodeSpec& node, const NodeState& state, const PodSpec& pod) {
  return extreme_device(node, state, pod, [](int a, int b) { return a < b; });
}

int loosest_device(const NodeSpec& node, const NodeState& state, const PodSpec& pod) {
  return extreme_device(node, state, pod, [](int a, int b) { return a > b; });
}

}  // namespace tessera
