#include "sim/sim_results.h"

#include "sim/statistics.h"

namespace tessera {

std::optional<double> fgd_gap_closed(const ArrivalReport& report, const ArrivalPolicyResult& policy) {
  if (report.offline_alloc_pct.empty()) return std::nullopt;
  for (const ArrivalPolicyResult& fgd : report.policies) {
    if (fgd.policy != "fgd") continue;
    const double gap = mean(report.offline_alloc_pct) - fgd.alloc_at_100_pct;
    if (gap <= 0) return std::nullopt;
    return (policy.alloc_at_100_pct - fgd.alloc_at_100_pct) / gap;
  }
  return std::nullopt;
}

}  // namespace tessera
