// fgd: Fragmentation Gradient Descent (Weng et al., USENIX ATC'23). Places the pod where the
// node's expected fragmentation against the workload mix grows least:
//   score(n) = -( F_n'(M) - F_n(M) )
// where n' is n with the pod placed; for a fraction, every device it fits on is tried and the
// one with the smallest growth is kept. See fragmentation.h for F.
#pragma once

#include "policy/placement_policy.h"
#include "policy/workload_mix.h"

namespace tessera {

class FgdPolicy final : public PlacementPolicy {
 public:
  explicit FgdPolicy(WorkloadMix mix) : mix_(std::move(mix)) {}
  std::string_view name() const override { return "fgd"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;

 private:
  WorkloadMix mix_;
};

}  // namespace tessera
