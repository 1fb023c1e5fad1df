#include "sim/sim_results.h"

#include <algorithm>

#include "sim/statistics.h"

namespace tessera {

ArrivedAsk most_asked(const ArrivalReport& report) {
  auto most = [](const std::vector<double>& pcts) { return pcts.empty() ? 0.0 : *std::ranges::max_element(pcts); };
  return {.cpu_pct = most(report.offline_arrived_cpu_pct), .memory_pct = most(report.offline_arrived_memory_pct)};
}

bool offline_chooses_pods(const ArrivalReport& report) {
  const ArrivedAsk asked = most_asked(report);
  return asked.cpu_pct > 100.0 || asked.memory_pct > 100.0;
}

std::optional<double> fgd_gap_closed(const ArrivalReport& report, const ArrivalPolicyResult& policy) {
  if (report.offline_alloc_pct.empty() || offline_chooses_pods(report)) return std::nullopt;
  for (const ArrivalPolicyResult& fgd : report.policies) {
    if (fgd.policy != "fgd") continue;
    const double gap = mean(report.offline_alloc_pct) - fgd.alloc_at_100_pct;
    if (gap <= 0) return std::nullopt;
    return (policy.alloc_at_100_pct - fgd.alloc_at_100_pct) / gap;
  }
  return std::nullopt;
}

}  // namespace tessera
