#include "policy/fgd_policy.h"

#include "policy/device_choice.h"
#include "policy/fragmentation.h"

namespace tessera {

PlacementChoice FgdPolicy::score(const NodeView& node, const PodSpec& pod) {
  const double before = expected_fragmentation(node.spec, node.state, mix_);
  if (!pod.gpu.is_fractional()) {
    return {before - expected_fragmentation(node.spec, state_after(node.spec, node.state, pod, -1), mix_), -1};
  }
  PlacementChoice best{0, -1};
  for (int device : fraction_candidates(node.spec, node.state, pod)) {
    double growth = expected_fragmentation(node.spec, state_after(node.spec, node.state, pod, device), mix_) - before;
    if (best.device < 0 || -growth > best.score) best = {-growth, device};
  }
  return best;
}

}  // namespace tessera
