#include "policy/fgd_policy.h"

#include <cmath>

#include "policy/device_choice.h"
#include "policy/fragmentation.h"

namespace tessera {

double FgdPolicy::score_of_growth(double growth) { return std::floor(100.0 / (1.0 + std::exp(growth / 1000.0))); }

PlacementChoice FgdPolicy::score(const NodeView& node, const PodSpec& pod) {
  const double before = expected_fragmentation(node.spec, node.state, typical_, kFgdRules);
  auto growth_with = [&](int device) {
    return expected_fragmentation(node.spec, state_after(node.spec, node.state, pod, device), typical_, kFgdRules) -
           before;
  };
  if (!pod.gpu.is_fractional()) return {score_of_growth(growth_with(-1)), -1};
  PlacementChoice best{0, -1};
  fraction_candidates(node.spec, node.state, pod, candidates_);
  for (int device : candidates_) {
    const double score = score_of_growth(growth_with(device));
    if (best.device < 0 || score > best.score) best = {score, device};
  }
  return best;
}

}  // namespace tessera
