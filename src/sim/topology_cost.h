// The cost of a gang's spread over a topology in simulated run time (docs/topology.md): a
// distributed job runs as fast as its slowest link, so its run time is multiplied by a factor
// that depends on the narrowest level one domain of which holds all its nodes.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/topology_domains.h"

namespace tessera {

struct TopologyCost {
  std::string topology;  // the topology measured; empty: none (every factor 1)
  // factors[0]: the gang spans domains of the widest level; factors[i]: it lies within one
  // domain of level i-1 (so the last entry is for the narrowest level). levels + 1 entries.
  std::vector<double> factors;
};

// The narrowest level of the topology one domain of which holds every node (-1: none does, or a
// node lacks the labels).
int narrowest_common_level(const TopologyDomains& domains, int topology, std::span<const NodeIndex> nodes);

// The run-time factor for a gang whose narrowest common level is `level`.
double run_time_factor(const TopologyCost& cost, int level);

}  // namespace tessera
