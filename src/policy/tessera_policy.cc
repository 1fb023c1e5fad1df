#include "policy/tessera_policy.h"

#include "policy/device_choice.h"
#include "policy/fragmentation.h"
#include "policy/usable_capacity.h"

namespace tessera {

double TesseraPolicy::unusable_capacity(const NodeSpec& node, const NodeState& state) const {
  return expected_fragmentation(node, state, mix_, kResourceAwareRules) + expected_stranded_capacity(node, state, mix_);
}

PlacementChoice TesseraPolicy::score(const NodeView& node, const PodSpec& pod) {
  const double before = unusable_capacity(node.spec, node.state);
  if (!pod.gpu.is_fractional()) {
    return {before - unusable_capacity(node.spec, state_after(node.spec, node.state, pod, -1)), -1};
  }
  PlacementChoice best{0, -1};
  for (int device : fraction_candidates(node.spec, node.state, pod)) {
    const double growth = unusable_capacity(node.spec, state_after(node.spec, node.state, pod, device)) - before;
    if (best.device < 0 || -growth > best.score) best = {-growth, device};
  }
  return best;
}

}  // namespace tessera
