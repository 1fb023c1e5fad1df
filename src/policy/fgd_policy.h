// fgd: Fragmentation Gradient Descent (Weng et al., USENIX ATC'23), as its reference
// implementation runs it. Places the pod where the node's expected fragmentation against the
// workload's typical pod types grows least (fragmentation.h, kFgdRules):
//   score(n) = floor( 100 * sigmoid( -(F_n'(M) - F_n(M)) / 1000 ) )
// where n' is n with the pod placed. The integer 0..100 score is the Kubernetes scheduler's node
// score the reference produces; it makes growths within a few tens of milli-GPU tie, and ties go
// to the lowest node index (the reference picks among them at random). That coarseness matters:
// on the default Alibaba pod list, ranking by the exact growth allocates about 4 points less at
// 100% arrived. For a fraction, every device the pod fits on is tried, keeping the best score
// (lowest device index on ties).
#pragma once

#include <vector>

#include "policy/placement_policy.h"
#include "policy/workload_mix.h"

namespace tessera {

class FgdPolicy final : public PlacementPolicy {
 public:
  explicit FgdPolicy(const WorkloadMix& mix) : typical_(mix.typical()) {}
  std::string_view name() const override { return "fgd"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;

  // The reference's integer score for a fragmentation growth of `growth` milli-GPU.
  static double score_of_growth(double growth);

 private:
  WorkloadMix typical_;
  std::vector<int> candidates_;  // fraction_candidates' buffer, reused by every score
};

}  // namespace tessera
