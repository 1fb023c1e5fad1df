// leftover-fit: the node left with the least free capacity after placement, summing the free
// shares of CPU, memory and GPU of that node (exact, unrounded); a fraction goes to the device it
// fills most tightly. Unlike the FGD paper's BestFit (best_fit_policy.h) it counts memory and
// measures each node against its own capacity, which suits clusters of unlike nodes.
#pragma once

#include "policy/placement_policy.h"

namespace tessera {

class LeftoverFitPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "leftover-fit"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;
};

}  // namespace tessera
