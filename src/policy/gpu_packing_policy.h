// gpu-packing: keep idle GPUs and idle nodes intact for the pods that need them. Tiers, best
// first: (3) a fraction onto a device that is already shared; (2) a node with GPUs already in
// use; (1) an idle node. Inside a tier, best fit (the least leftover) decides, and a fraction
// takes the tightest device.
#pragma once

#include "policy/placement_policy.h"

namespace tessera {

class GpuPackingPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "gpu-packing"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;
};

}  // namespace tessera
