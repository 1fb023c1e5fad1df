#include "sim/topology_cost.h"

#include <algorithm>

namespace tessera {

int narrowest_common_level(const TopologyDomains& domains, int topology, std::span<const NodeIndex> nodes) {
  if (topology < 0 || nodes.empty()) return -1;
  int common = -1;
  for (int level = 0; level < domains.level_count(topology); ++level) {
    const int32_t first = domains.domain_of(topology, level, nodes.front());
    const bool shared = first >= 0 && std::all_of(nodes.begin(), nodes.end(), [&](NodeIndex node) {
                          return domains.domain_of(topology, level, node) == first;
                        });
    if (!shared) break;
    common = level;
  }
  return common;
}

double run_time_factor(const TopologyCost& cost, int level) {
  const auto index = static_cast<size_t>(level + 1);
  return index < cost.factors.size() ? cost.factors[index] : 1.0;
}

}  // namespace tessera
