// Placing pods for the cycle's actions under their workload's topology constraints
// (docs/topology.md): the gang through place_in_topology, elastic extras within the domain the
// running gang holds at its required level.
#include <algorithm>
#include <memory>

#include "scheduler/cycle_context.h"

namespace tessera {

const Result<GangTopology>* CycleContext::resolved_topology(WorkloadId workload) {
  if (!options_.topology.enabled) return nullptr;
  const Workload& owner = workloads()[workload];
  if (!owner.spec.has_topology_constraints()) return nullptr;
  auto found = gang_topologies_.find(workload);
  if (found == gang_topologies_.end()) {
    found = gang_topologies_.emplace(workload, resolve_gang_topology(cluster(), owner.spec, owner.gang())).first;
  }
  return &found->second;
}

const GangTopology* CycleContext::gang_topology(WorkloadId workload) {
  const Result<GangTopology>* resolved = resolved_topology(workload);
  return resolved && resolved->ok() && (*resolved)->constrained() ? &resolved->value() : nullptr;
}

bool CycleContext::topology_unresolvable(WorkloadId workload) {
  const Result<GangTopology>* resolved = resolved_topology(workload);
  return resolved && !resolved->ok();
}

const GangSizeMix& CycleContext::gang_mix() {
  if (!gang_mix_) {
    gang_mix_.emplace();
    for (WorkloadId id : workloads().active()) {
      gang_mix_->add(nominal_gpu_milli(cluster(), workloads()[id].gang()));
    }
  }
  return *gang_mix_;
}

bool CycleContext::place_gang(Statement& statement, std::span<const PodId> pods, FailureSummary* why,
                              const PlacementPass& pass) {
  const WorkloadId owner = pods.empty() ? -1 : workloads().workload_of(pods.front());
  if (owner < 0 || !options_.topology.enabled) return placer().place_gang(statement, pods, why, pass);
  const Result<GangTopology>* resolved = resolved_topology(owner);
  if (resolved && !resolved->ok()) {
    // A constraint that names what the cluster does not declare can never be met.
    if (why) {
      auto shortfall = std::make_shared<TopologyShortfall>();
      shortfall->unresolved = resolved->error().message;
      why->topology = std::move(shortfall);
    }
    return false;
  }
  const GangTopology* topology = gang_topology(owner);
  if (!topology) return placer().place_gang(statement, pods, why, pass);
  const Workload& workload = workloads()[owner];
  const auto gang = workload.gang();
  const Statement::Checkpoint start = statement.checkpoint();
  const bool gang_unbound = std::none_of(gang.begin(), gang.end(), [&](PodId pod) { return cluster().binding(pod); });
  // Pods that join the domain the gang holds: elastic extras (and, were part of a gang already
  // bound, the rest of it).
  std::vector<PodId> joining;
  for (PodId pod : pods) {
    if (!gang_unbound || workloads().position_of(pod) >= workload.min_member()) joining.push_back(pod);
  }
  if (joining.size() < pods.size()) {
    // The whole gang is placed anew (a pending workload, or one moved).
    const TopologyPlacementOptions options{options_.topology.rule, &gang_mix()};
    if (!place_in_topology(placer(), statement, *topology, options, why, pass)) return false;
  }
  if (joining.empty()) return true;
  const int level = topology->whole.required;
  if (level < 0) {
    if (placer().place_gang(statement, joining, why, pass)) return true;
    statement.rollback(start);
    return false;
  }
  auto anchor = std::find_if(gang.begin(), gang.end(), [&](PodId pod) { return cluster().binding(pod).has_value(); });
  const TopologyDomains& domains = cluster().topology();
  const int32_t domain =
      anchor == gang.end() ? -1 : domains.domain_of(topology->topology, level, cluster().binding(*anchor)->node);
  if (domain >= 0 &&
      placer().place_gang_among(
          statement, joining, domains.domains(topology->topology, level)[static_cast<size_t>(domain)].nodes, why, pass))
    return true;
  statement.rollback(start);
  return false;
}

}  // namespace tessera
