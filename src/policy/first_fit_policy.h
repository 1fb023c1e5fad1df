// first-fit: the lowest-index node the pod fits on, and its lowest-index device that fits.
#pragma once

#include "policy/placement_policy.h"

namespace tessera {

class FirstFitPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "first-fit"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;
  bool ranks_by_node_order() const override { return true; }
};

}  // namespace tessera
