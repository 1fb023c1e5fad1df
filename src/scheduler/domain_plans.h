// Where room-making by topology may make room for a gang (docs/topology.md#making-room-by-topology):
// the plans make_room searches as trials, each a domain of the gang's required level with its
// subgroups seated in domains of their own. Reads the cluster and the victims as they stand.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "engine/topology_placement.h"
#include "scheduler/victim_index.h"

namespace tessera {

// Where the pending gang's pods go, victims included (docs/topology.md): all within `gang` (the
// nodes of one domain; empty: anywhere), and each subgroup's pods within the nodes of its own
// domain inside it.
struct RoomScope {
  std::span<const NodeIndex> gang;
  struct Part {
    std::span<const PodId> pods;
    std::span<const NodeIndex> nodes;
  };
  std::vector<Part> parts;

  bool anywhere() const { return gang.empty() && parts.empty(); }
  std::span<const NodeIndex> of(PodId pod) const {
    for (const Part& part : parts) {
      if (std::find(part.pods.begin(), part.pods.end(), pod) != part.pods.end()) return part.nodes;
    }
    return gang;
  }
};

// docs/topology.md#making-room-by-topology: for a gang with a required level, the domains of that
// level that could hold it once their victims are gone (free GPUs plus what the index holds there
// reach its need), the most free first; each subgroup with a required level of its own is seated
// in a domain of that level inside the gang's. Of the first kMaxRoomTrials such plans, each that
// could beat the best so far (min_evictions) is searched as a trial, and the one that needs the
// fewest evictions commits. No domain where even every victim leaves too little is touched. Each trial is a victim search
// of its own; the domains with the most free GPUs, tried first, are those likeliest to need fewest
// evictions, so a few suffice.
inline constexpr int kMaxRoomTrials = 4;

// Where the gang goes: within a domain of its required level (`level` -1: anywhere), each
// subgroup with a required level within its own domain. `named_*`: the domain an explanation
// names, the gang's, or without one that of its largest subgroup with a required level.
struct DomainPlan {
  RoomScope scope;
  int level = -1;
  int32_t domain = -1;
  int named_level = -1;
  int32_t named_domain = -1;
  int64_t free_milli = 0;  // the GPUs free in the gang's domain (with a required level)
};

// The fewest units a search in the plan can evict for good to free the gang's `need` (milli):
// what the domain lacks over the largest unit. Plans come most free first, so no later plan's
// is lower. A bound only where each pod takes its nominal GPUs and nothing moves instead:
// callers pass 0 elsewhere as `max_unit_milli`, and get 0.
int min_evictions(const DomainPlan& plan, int64_t need, int64_t max_unit_milli);

// The plans to try, best first: one per domain of the gang's required level that could hold it
// (with its subgroups seated), or, without a required level, one in the whole cluster.
std::vector<DomainPlan> domain_plans(const ClusterState& cluster, VictimIndex& victims, int64_t need,
                                     const GangTopology& gang);

// Whether some domain of the gang's required level has the GPUs to hold it when empty (true
// without a required level of its own).
bool any_domain_holds(const ClusterState& cluster, const GangTopology& gang, int64_t need);

// Whether making room for the gang must keep it within domains: it has a required level, or a
// subgroup has.
bool needs_domains(const GangTopology& gang);

}  // namespace tessera
