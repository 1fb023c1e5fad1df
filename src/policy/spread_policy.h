// spread: the node left with the most free capacity after placement (the opposite of
// best-fit), and the emptiest device for a fraction, for services that want resilience.
#pragma once

#include "policy/placement_policy.h"

namespace tessera {

class SpreadPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "spread"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;
};

}  // namespace tessera
