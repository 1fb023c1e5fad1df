#include "policy/first_fit_policy.h"

#include "policy/device_choice.h"

namespace tessera {

PlacementChoice FirstFitPolicy::score(const NodeView& node, const PodSpec& pod) {
  // Every feasible node scores the same; the engine's tie-break (lowest index) makes it first fit.
  PlacementChoice choice;
  if (pod.gpu.is_fractional()) choice.device = fraction_candidates(node.spec, node.state, pod).front();
  return choice;
}

}  // namespace tessera
