// tessera: the project's default placement policy. Like FGD it descends a fragmentation
// gradient, but against a measure that also counts what FGD's misses:
//   T_n(M) = sum_m p_m ( F_n(m) + S_n(m) )
// F is FGD's fragmentation (fragmentation.h, with kResourceAwareRules: memory counts, and a
// CPU-only type fragments only the GPUs of nodes it no longer fits on) — free GPU that type m
// cannot use at all, or on devices too small for it. S is the
// stranded capacity (usable_capacity.h): free GPU that pods of type m could not fill even if
// only they arrived, because CPU or memory runs out first or a device's free portion is not a
// multiple of m's portion. The pod goes where T grows least:
//   score(n) = -( T_n'(M) - T_n(M) )
// and a fraction tries every device it fits on and keeps the smallest growth.
#pragma once

#include "policy/placement_policy.h"
#include "policy/workload_mix.h"

namespace tessera {

class TesseraPolicy final : public PlacementPolicy {
 public:
  explicit TesseraPolicy(WorkloadMix mix) : mix_(std::move(mix)) {}
  std::string_view name() const override { return "tessera"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;

  // T_n(M) for a node in a given state.
  double unusable_capacity(const NodeSpec& node, const NodeState& state) const;

 private:
  WorkloadMix mix_;
};

}  // namespace tessera
