#include "policy/gpu_packing_policy.h"

#include "policy/device_choice.h"
#include "policy/feasibility.h"
#include "policy/node_shares.h"

namespace tessera {

namespace {

// The tightest device already holding a fraction that the pod also fits on, or -1.
int tightest_shared_device(const NodeView& node, const PodSpec& pod) {
  int chosen = -1;
  for (int device = 0; device < node.spec.gpu_count(); ++device) {
    if (node.state.device_is_idle(device) || !device_fits_fraction(node.spec, node.state, pod, device)) continue;
    if (chosen < 0 || node.state.gpu_free_milli(device) < node.state.gpu_free_milli(chosen)) chosen = device;
  }
  return chosen;
}

}  // namespace

PlacementChoice GpuPackingPolicy::score(const NodeView& node, const PodSpec& pod) {
  PlacementChoice choice;
  int tier = node.state.gpu_used_total() > 0 ? 2 : 1;
  if (pod.gpu.is_fractional()) {
    choice.device = tightest_shared_device(node, pod);
    if (choice.device >= 0) {
      tier = 3;
    } else {
      choice.device = tightest_device(node.spec, node.state, pod);
    }
  }
  // leftover() is at most 3, so the tier always dominates.
  choice.score = tier * 10.0 - leftover(node.spec, state_after(node.spec, node.state, pod, choice.device));
  return choice;
}

}  // namespace tessera
