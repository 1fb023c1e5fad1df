// Placing a gang under topology constraints (docs/topology.md). A gang with a required level is
// placed entirely within one domain of that level or not at all; a preferred level is tried
// narrowest first, widening level by level (to the required level, or to the whole cluster);
// each subgroup with a constraint of its own is placed within a domain of its level inside the
// gang's domain. Domains are tried best first by a DomainRule (at most kMaxDomainTries per
// level), and the nodes inside one by the placer's policy. All or nothing: a failed attempt
// rolls the statement back to where it was.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/workload.h"
#include "engine/placer.h"
#include "engine/statement.h"
#include "engine/topology_domains.h"
#include "policy/domain_choice.h"

namespace tessera {

// Levels as indices into a topology's levels (0: widest); -1: none.
struct LevelConstraint {
  int required = -1;
  int preferred = -1;
  bool empty() const { return required < 0 && preferred < 0; }
};

// A gang's constraints resolved against the cluster's topologies.
struct GangTopology {
  int topology = -1;
  LevelConstraint whole;
  struct Part {
    std::string name;
    LevelConstraint levels;
    std::vector<PodId> pods;
  };
  std::vector<Part> parts;  // subgroups with a constraint of their own
  std::vector<PodId> rest;  // the gang's other pods
  bool constrained() const { return topology >= 0; }
};

// Resolves the workload's constraints for its gang's pods (their PodSpec::subgroup). Fails,
// naming the field, on a topology or level the cluster does not declare.
Result<GangTopology> resolve_gang_topology(const ClusterState& cluster, const WorkloadSpec& spec,
                                           std::span<const PodId> gang);

struct TopologyPlacementOptions {
  DomainRule rule = DomainRule::kFragmentation;
  const GangSizeMix* mix = nullptr;  // the gang sizes seen (kFragmentation); nullptr: none
};

// At most this many domains of one level are tried for a gang (best first by the rule): those
// with the GPUs free rarely fail for another reason, and a long list of them is all alike.
inline constexpr int kMaxDomainTries = 16;

// Places the gang within its constraints, or nothing. On failure `why` says why: the nodes of
// the last failed attempt, and for a required level the room the best domain had.
bool place_in_topology(Placer& placer, Statement& statement, const GangTopology& gang,
                       const TopologyPlacementOptions& options, FailureSummary* why = nullptr,
                       const PlacementPass& pass = {});

// The domains of `level` that are candidates for a gang needing `need_milli`, best first; only
// domains inside `within` (a domain of level `within_level`; -1: the whole cluster).
std::vector<int32_t> candidate_domains(const ClusterState& cluster, int topology, int level, int64_t need_milli,
                                       const TopologyPlacementOptions& options, int within_level = -1,
                                       int32_t within = -1);

// The GPUs (milli) the pods ask for, memory requests counted as 0: a lower bound.
int64_t nominal_gpu_milli(const ClusterState& cluster, std::span<const PodId> pods);

}  // namespace tessera
