// Topologies and the constraints workloads put on them (docs/design.md §5, docs/topology.md): a
// topology is an ordered list of node-label levels, widest first (block → rack → host); a domain
// of a level is the set of nodes that agree on that label and on every wider one. A workload may
// require its gang within one domain of a level, prefer one as narrow as possible, and split its
// gang into subgroups with constraints of their own.
#pragma once

#include <string>
#include <vector>

namespace tessera {

struct Topology {
  std::string name;
  std::vector<std::string> levels;  // node label keys, widest first
};

// Level names refer to Topology::levels of the topology named; empty: no such constraint.
struct TopologyConstraint {
  std::string topology;
  std::string required_level;   // all of the pods within one domain of this level, or none runs
  std::string preferred_level;  // as narrow as this if possible, widening level by level
  bool empty() const { return required_level.empty() && preferred_level.empty(); }
};

// A named part of a gang (a tensor-parallel group): the pods whose `subgroup` is its name; at
// least min_member of them are in the gang, and they keep its constraint among themselves.
struct SubGroupSpec {
  std::string name;
  int min_member = 1;
  TopologyConstraint constraint;
};

// All of a workload's topology terms.
struct WorkloadTopology {
  TopologyConstraint constraint;
  std::vector<SubGroupSpec> subgroups;
};

}  // namespace tessera
