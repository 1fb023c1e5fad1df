// best-fit: the FGD paper's BestFit baseline, as its simulator computes it. The node left with
// the least free CPU and GPU after placement, each measured against the largest node of the
// Alibaba cluster and weighted equally, as an integer score:
//   score(n) = floor( 100 * (1 - 0.5 (free_cpu - cpu)/128 CPUs - 0.5 (free_gpu - gpu)/8 GPUs) )
// Memory is not counted. A fraction goes to the device with the least free portion that holds
// it (the lowest index among equals).
#pragma once

#include "policy/placement_policy.h"

namespace tessera {

class BestFitPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "best-fit"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;
};

}  // namespace tessera
