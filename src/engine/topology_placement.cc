#include "engine/topology_placement.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera {

namespace {

// Resolves one constraint; `field` names it in errors ("topology", "subgroups[1].topology").
Result<LevelConstraint> resolve_levels(const TopologyDomains& domains, int topology,
                                       const TopologyConstraint& constraint, const std::string& field) {
  LevelConstraint levels;
  auto level = [&](const std::string& label, const char* which, int& out) -> Status {
    if (label.empty()) return Ok{};
    out = domains.find_level(topology, label);
    if (out < 0) {
      return Error{fmt::format("{}.{}: {} is not a level of topology '{}'", field, which, label, constraint.topology)};
    }
    return Ok{};
  };
  if (auto status = level(constraint.required_level, "required", levels.required); !status) return status.error();
  if (auto status = level(constraint.preferred_level, "preferred", levels.preferred); !status) return status.error();
  if (levels.required >= 0 && levels.preferred >= 0 && levels.preferred < levels.required) {
    return Error{fmt::format("{}.preferred: {} is wider than the required level {} (expected a narrower level)", field,
                             constraint.preferred_level, constraint.required_level)};
  }
  return levels;
}

// Where pods go: a domain of a level, or (level -1) the whole cluster.
struct Scope {
  int level = -1;
  int32_t domain = -1;
};

// The levels to try for a constraint inside a scope, narrowest first; kInScope stands for the
// scope itself (a level no narrower than the scope's is met by it).
constexpr int kInScope = -1;
std::vector<int> levels_to_try(const LevelConstraint& constraint, int scope_level) {
  const int narrowest = constraint.preferred >= 0 ? constraint.preferred : constraint.required;
  if (narrowest < 0) return {kInScope};
  std::vector<int> levels;
  const int widest = constraint.required >= 0 ? constraint.required : scope_level + 1;
  for (int level = narrowest; level >= widest; --level) {
    if (level <= scope_level) break;
    levels.push_back(level);
  }
  if (constraint.required < 0 || constraint.required <= scope_level) levels.push_back(kInScope);
  return levels;
}

class TopologyPlacement {
 public:
  TopologyPlacement(Placer& placer, Statement& statement, const GangTopology& gang,
                    const TopologyPlacementOptions& options, const PlacementPass& pass)
      : placer_(placer),
        statement_(statement),
        cluster_(statement.cluster()),
        domains_(statement.cluster().topology()),
        gang_(gang),
        options_(options),
        pass_(pass) {}

  bool place(FailureSummary* why) {
    std::vector<PodId> all = gang_.rest;
    for (const GangTopology::Part& part : gang_.parts) all.insert(all.end(), part.pods.begin(), part.pods.end());
    const int64_t need = nominal_gpu_milli(cluster_, all);
    int domains_with_room = 0;
    for (int level : levels_to_try(gang_.whole, -1)) {
      if (level == kInScope) {
        if (place_parts({})) return true;
        continue;
      }
      const std::vector<int32_t> candidates = candidate_domains(cluster_, gang_.topology, level, need, options_);
      for (size_t i = 0; i < candidates.size() && i < static_cast<size_t>(kMaxDomainTries); ++i) {
        if (place_parts({level, candidates[i]})) return true;
      }
      if (level == gang_.whole.required) domains_with_room = static_cast<int>(candidates.size());
    }
    if (why) {
      *why = last_failure_;
      if (gang_.whole.required >= 0) why->topology = explain_shortfall(need, domains_with_room);
    }
    return false;
  }

 private:
  // The gang's subgroups, then its other pods, all inside the scope.
  bool place_parts(Scope scope) {
    const Statement::Checkpoint start = statement_.checkpoint();
    for (const GangTopology::Part& part : gang_.parts) {
      if (!place_part(part, scope)) {
        statement_.rollback(start);
        return false;
      }
    }
    if (!place_pods(gang_.rest, scope)) {
      statement_.rollback(start);
      return false;
    }
    return true;
  }

  bool place_part(const GangTopology::Part& part, Scope scope) {
    const int64_t need = nominal_gpu_milli(cluster_, part.pods);
    for (int level : levels_to_try(part.levels, scope.level)) {
      if (level == kInScope) {
        if (place_pods(part.pods, scope)) return true;
        continue;
      }
      const std::vector<int32_t> candidates =
          candidate_domains(cluster_, gang_.topology, level, need, options_, scope.level, scope.domain);
      for (size_t i = 0; i < candidates.size() && i < static_cast<size_t>(kMaxDomainTries); ++i) {
        if (place_pods(part.pods, {level, candidates[i]})) return true;
      }
    }
    return false;
  }

  bool place_pods(const std::vector<PodId>& pods, Scope scope) {
    FailureSummary failure;
    const bool placed = scope.level < 0 ? placer_.place_gang(statement_, pods, &failure, pass_)
                                        : placer_.place_gang_among(statement_, pods, nodes_of(scope), &failure, pass_);
    if (!placed) last_failure_ = failure;
    return placed;
  }

  const std::vector<NodeIndex>& nodes_of(Scope scope) const {
    return domains_.domains(gang_.topology, scope.level)[static_cast<size_t>(scope.domain)].nodes;
  }

  std::shared_ptr<const TopologyShortfall> explain_shortfall(int64_t need, int domains_with_room) const {
    auto made = std::make_shared<TopologyShortfall>();
    TopologyShortfall& shortfall = *made;
    const int level = gang_.whole.required;
    shortfall.level = std::string(domains_.noun(gang_.topology, level));
    shortfall.need_milli = need;
    shortfall.domains_with_room = domains_with_room;
    shortfall.most_free_milli = 0;
    const std::span<const int64_t> free = cluster_.domain_free_gpu_milli(gang_.topology, level);
    const auto& domains = domains_.domains(gang_.topology, level);
    for (size_t domain = 0; domain < free.size(); ++domain) {
      if (shortfall.domain.empty() || free[domain] > shortfall.most_free_milli) {
        shortfall.most_free_milli = free[domain];
        shortfall.domain = domains[domain].value;
      }
    }
    return made;
  }

  Placer& placer_;
  Statement& statement_;
  const ClusterState& cluster_;
  const TopologyDomains& domains_;
  const GangTopology& gang_;
  const TopologyPlacementOptions& options_;
  const PlacementPass& pass_;
  FailureSummary last_failure_;
};

}  // namespace

Result<GangTopology> resolve_gang_topology(const ClusterState& cluster, const WorkloadSpec& spec,
                                           std::span<const PodId> gang) {
  GangTopology resolved;
  if (!spec.has_topology_constraints()) {
    resolved.rest.assign(gang.begin(), gang.end());
    return resolved;
  }
  const TopologyDomains& domains = cluster.topology();
  // Subgroups name the workload's topology, or none (they then use the workload's).
  std::string name = spec.topology_constraint().topology;
  for (const SubGroupSpec& subgroup : spec.subgroups()) {
    if (name.empty()) name = subgroup.constraint.topology;
  }
  resolved.topology = domains.find_topology(name);
  if (resolved.topology < 0) {
    return Error{fmt::format("workload '{}': topology '{}' is not declared by the cluster", spec.name, name)};
  }
  auto whole = resolve_levels(domains, resolved.topology, spec.topology_constraint(),
                              fmt::format("workload '{}': topology", spec.name));
  if (!whole) return whole.error();
  resolved.whole = *whole;
  std::vector<int> part_of(spec.subgroups().size(), -1);
  for (size_t i = 0; i < spec.subgroups().size(); ++i) {
    const SubGroupSpec& subgroup = spec.subgroups()[i];
    if (subgroup.constraint.empty()) continue;
    if (!subgroup.constraint.topology.empty() && subgroup.constraint.topology != name) {
      return Error{fmt::format("workload '{}': subgroups[{}].topology: '{}' differs from the workload's topology '{}'",
                               spec.name, i, subgroup.constraint.topology, name)};
    }
    TopologyConstraint constraint = subgroup.constraint;
    constraint.topology = name;
    auto levels = resolve_levels(domains, resolved.topology, constraint,
                                 fmt::format("workload '{}': subgroups[{}].topology", spec.name, i));
    if (!levels) return levels.error();
    part_of[i] = static_cast<int>(resolved.parts.size());
    resolved.parts.push_back({subgroup.name, *levels, {}});
  }
  for (PodId pod : gang) {
    const int16_t subgroup = cluster.pod(pod).subgroup;
    const int part =
        subgroup >= 0 && static_cast<size_t>(subgroup) < part_of.size() ? part_of[static_cast<size_t>(subgroup)] : -1;
    if (part >= 0) {
      resolved.parts[static_cast<size_t>(part)].pods.push_back(pod);
    } else {
      resolved.rest.push_back(pod);
    }
  }
  // Bigger subgroups first: they have the fewest domains to choose from.
  std::stable_sort(resolved.parts.begin(), resolved.parts.end(),
                   [&cluster](const GangTopology::Part& a, const GangTopology::Part& b) {
                     return nominal_gpu_milli(cluster, a.pods) > nominal_gpu_milli(cluster, b.pods);
                   });
  return resolved;
}

int64_t nominal_gpu_milli(const ClusterState& cluster, std::span<const PodId> pods) {
  int64_t milli = 0;
  for (PodId pod : pods) milli += cluster.pod(pod).gpu.nominal_milli();
  return milli;
}

std::vector<int32_t> candidate_domains(const ClusterState& cluster, int topology, int level, int64_t need_milli,
                                       const TopologyPlacementOptions& options, int within_level, int32_t within) {
  const TopologyDomains& domains = cluster.topology();
  const std::span<const int64_t> free = cluster.domain_free_gpu_milli(topology, level);
  const auto& all = domains.domains(topology, level);
  std::vector<DomainRoom> rooms(all.size());
  for (size_t domain = 0; domain < all.size(); ++domain) {
    if (within_level >= 0 && domains.ancestor(topology, level, static_cast<int32_t>(domain), within_level) != within) {
      continue;  // capacity 0: not a candidate
    }
    rooms[domain] = {free[domain], all[domain].gpu_capacity_milli};
  }
  // A domain without GPUs can hold a gang without GPUs.
  if (need_milli == 0) {
    for (size_t domain = 0; domain < all.size(); ++domain) {
      if (rooms[domain].capacity_milli == 0 &&
          (within_level < 0 || domains.ancestor(topology, level, static_cast<int32_t>(domain), within_level) == within))
        rooms[domain].capacity_milli = 1;
    }
  }
  static const GangSizeMix kNoMix;
  return order_domains(rooms, need_milli, options.rule, options.mix ? *options.mix : kNoMix);
}

bool place_in_topology(Placer& placer, Statement& statement, const GangTopology& gang,
                       const TopologyPlacementOptions& options, FailureSummary* why, const PlacementPass& pass) {
  if (!gang.constrained()) return placer.place_gang(statement, gang.rest, why, pass);
  return TopologyPlacement(placer, statement, gang, options, pass).place(why);
}

}  // namespace tessera
