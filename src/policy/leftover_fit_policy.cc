#include "policy/leftover_fit_policy.h"

#include "policy/device_choice.h"
#include "policy/node_shares.h"

namespace tessera {

PlacementChoice LeftoverFitPolicy::score(const NodeView& node, const PodSpec& pod) {
  PlacementChoice choice;
  if (pod.gpu.is_fractional()) choice.device = tightest_device(node.spec, node.state, pod);
  choice.score = -leftover(node.spec, state_after(node.spec, node.state, pod, choice.device));
  return choice;
}

}  // namespace tessera
