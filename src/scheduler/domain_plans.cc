#include "scheduler/domain_plans.h"

#include <climits>

namespace tessera {

namespace {

// Per domain of a level: the GPUs (milli) free, and free plus all the index's units hold there.
struct LevelRoom {
  std::vector<int64_t> free;
  std::vector<int64_t> reach;
};

LevelRoom level_room(const ClusterState& cluster, VictimIndex& victims, int topology, int level) {
  const TopologyDomains& domains = cluster.topology();
  const std::span<const int64_t> free = cluster.domain_free_gpu_milli(topology, level);
  LevelRoom room{{free.begin(), free.end()}, {}};
  room.reach = room.free;
  const std::vector<int64_t>& held = victims.gpus_held_in(domains, topology, level);
  for (size_t domain = 0; domain < held.size(); ++domain) room.reach[domain] += held[domain];
  return room;
}

// Seats each subgroup with a required level narrower than the gang's domain (`level` -1: the
// cluster) in a domain of its level inside it: largest subgroup first, each into the domain with
// the most GPUs left free whose reach still holds it, so subgroups share a domain only where its
// free room holds them. False when some subgroup has no such domain.
bool seat_parts(const ClusterState& cluster, VictimIndex& victims, const GangTopology& gang, DomainPlan& plan) {
  const TopologyDomains& domains = cluster.topology();
  std::vector<std::pair<int, LevelRoom>> rooms;  // per level met so far, what is left of it
  for (const GangTopology::Part& part : gang.parts) {
    const int level = part.levels.required;
    if (level < 0 || level <= plan.level) continue;  // kept within the gang's domain
    auto room = std::find_if(rooms.begin(), rooms.end(), [level](const auto& entry) { return entry.first == level; });
    if (room == rooms.end()) {
      rooms.emplace_back(level, level_room(cluster, victims, gang.topology, level));
      room = rooms.end() - 1;
    }
    LevelRoom& left = room->second;
    const int64_t need = nominal_gpu_milli(cluster, part.pods);
    int32_t chosen = -1;
    for (size_t domain = 0; domain < left.free.size(); ++domain) {
      const auto index = static_cast<int32_t>(domain);
      if (plan.level >= 0 && domains.ancestor(gang.topology, level, index, plan.level) != plan.domain) continue;
      if (left.reach[domain] < need) continue;
      if (chosen < 0 || left.free[domain] > left.free[static_cast<size_t>(chosen)]) chosen = index;
    }
    if (chosen < 0) return false;
    left.free[static_cast<size_t>(chosen)] = std::max<int64_t>(0, left.free[static_cast<size_t>(chosen)] - need);
    left.reach[static_cast<size_t>(chosen)] -= need;
    plan.scope.parts.push_back({part.pods, domains.domains(gang.topology, level)[static_cast<size_t>(chosen)].nodes});
    if (plan.named_level < 0) {
      plan.named_level = level;
      plan.named_domain = chosen;
    }
  }
  return true;
}

}  // namespace

// The plans to try, best first: one per domain of the gang's required level that could hold it
// (with its subgroups seated), or, without a required level, one in the whole cluster.
std::vector<DomainPlan> domain_plans(const ClusterState& cluster, VictimIndex& victims, int64_t need,
                                     const GangTopology& gang) {
  std::vector<DomainPlan> plans;
  const int level = gang.whole.required;
  if (level < 0) {
    DomainPlan plan;
    if (seat_parts(cluster, victims, gang, plan)) plans.push_back(std::move(plan));
    return plans;
  }
  const LevelRoom room = level_room(cluster, victims, gang.topology, level);
  std::vector<int32_t> reachable;
  for (size_t domain = 0; domain < room.reach.size(); ++domain) {
    if (room.reach[domain] >= need) reachable.push_back(static_cast<int32_t>(domain));
  }
  std::sort(reachable.begin(), reachable.end(), [&room](int32_t a, int32_t b) {
    const auto free_a = room.free[static_cast<size_t>(a)], free_b = room.free[static_cast<size_t>(b)];
    return free_a != free_b ? free_a > free_b : a < b;
  });
  const auto& all = cluster.topology().domains(gang.topology, level);
  for (int32_t domain : reachable) {
    DomainPlan plan{{all[static_cast<size_t>(domain)].nodes, {}}, level, domain, level, domain,
                    room.free[static_cast<size_t>(domain)]};
    if (seat_parts(cluster, victims, gang, plan)) plans.push_back(std::move(plan));
    if (plans.size() == static_cast<size_t>(kMaxRoomTrials)) break;
  }
  return plans;
}

int min_evictions(const DomainPlan& plan, int64_t need, int64_t max_unit_milli) {
  const int64_t lacking = need - plan.free_milli;
  if (plan.level < 0 || max_unit_milli <= 0 || lacking <= 0) return 0;
  return static_cast<int>(std::min<int64_t>((lacking + max_unit_milli - 1) / max_unit_milli, INT_MAX));
}

// Whether some domain of the gang's required level has the GPUs to hold it when empty (true
// without a required level of its own).
bool any_domain_holds(const ClusterState& cluster, const GangTopology& gang, int64_t need) {
  if (gang.whole.required < 0) return true;
  const auto& all = cluster.topology().domains(gang.topology, gang.whole.required);
  return std::any_of(all.begin(), all.end(),
                     [need](const TopologyDomain& domain) { return domain.gpu_capacity_milli >= need; });
}

// Whether making room for the gang must keep it within domains: it has a required level, or a
// subgroup has.
bool needs_domains(const GangTopology& gang) {
  return gang.whole.required >= 0 ||
         std::any_of(gang.parts.begin(), gang.parts.end(), [](const auto& part) { return part.levels.required >= 0; });
}

}  // namespace tessera
