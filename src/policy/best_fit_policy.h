// best-fit: the node left with the least free capacity after placement, summing the free
// shares of CPU, memory and GPU; a fraction goes to the device it fills most tightly.
#pragma once

#include "policy/placement_policy.h"

namespace tessera {

class BestFitPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "best-fit"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;
};

}  // namespace tessera
