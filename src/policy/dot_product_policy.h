// dot-product: the node whose free capacity is best aligned with the pod's request (Tetris,
// Grandl et al., SIGCOMM'14): score(n) = sum_r (request_r / capacity_r) * (free_r / capacity_r)
// over CPU, memory and GPU, taken before placement. A fraction takes the tightest device.
#pragma once

#include "policy/placement_policy.h"

namespace tessera {

class DotProductPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "dot-product"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;
};

}  // namespace tessera
