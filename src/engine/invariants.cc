#include "engine/invariants.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "policy/feasibility.h"

namespace tessera {

std::vector<std::string> check_invariants(const ClusterState& cluster) {
  std::vector<std::string> violations;
  const int nodes = cluster.node_count();
  std::vector<NodeState> recomputed;
  std::vector<std::vector<int>> whole_owners(static_cast<size_t>(nodes));
  std::vector<std::vector<int>> sharers(static_cast<size_t>(nodes));
  recomputed.reserve(static_cast<size_t>(nodes));
  for (NodeIndex node = 0; node < nodes; ++node) {
    recomputed.push_back(NodeState::empty(cluster.node_spec(node)));
    whole_owners[static_cast<size_t>(node)].assign(cluster.node_spec(node).gpus.size(), 0);
    sharers[static_cast<size_t>(node)].assign(cluster.node_spec(node).gpus.size(), 0);
  }
  for (PodId id = 0; id < cluster.pod_count(); ++id) {
    const auto& binding = cluster.binding(id);
    if (!binding) continue;
    const PodSpec& pod = cluster.pod(id);
    if (binding->node < 0 || binding->node >= nodes) {
      violations.push_back(fmt::format("pod {} bound to unknown node {}", pod.name, binding->node));
      continue;
    }
    const NodeSpec& spec = cluster.node_spec(binding->node);
    for (int16_t device : binding->devices) {
      if (device < 0 || device >= spec.gpu_count()) {
        violations.push_back(fmt::format("pod {} holds unknown device {} on {}", pod.name, device, spec.name));
        continue;
      }
      if (!pod.allowed_models.allows(spec.gpus[static_cast<size_t>(device)].model)) {
        violations.push_back(fmt::format("pod {} runs on a GPU model it does not allow on {}", pod.name, spec.name));
      }
      auto& counts = pod.gpu.kind == GpuRequest::Kind::kWhole ? whole_owners : sharers;
      ++counts[static_cast<size_t>(binding->node)][static_cast<size_t>(device)];
    }
    if (pod.gpu.kind == GpuRequest::Kind::kWhole && static_cast<int>(binding->devices.size()) != pod.gpu.whole_gpus) {
      violations.push_back(
          fmt::format("pod {} asked for {} GPUs but holds {}", pod.name, pod.gpu.whole_gpus, binding->devices.size()));
    }
    if (check_static(spec, pod) != Predicate::kFits) {
      violations.push_back(fmt::format("pod {} is bound to {} which it does not match", pod.name, spec.name));
    }
    recomputed[static_cast<size_t>(binding->node)].apply(pod, *binding);
  }
  for (NodeIndex node = 0; node < nodes; ++node) {
    const NodeSpec& spec = cluster.node_spec(node);
    const NodeState& actual = cluster.node_state(node);
    const NodeState& expected = recomputed[static_cast<size_t>(node)];
    if (actual.free != expected.free || actual.gpu_used_milli != expected.gpu_used_milli ||
        actual.gpu_burst_milli != expected.gpu_burst_milli) {
      violations.push_back(fmt::format("node {} usage differs from the sum of its bound pods", spec.name));
    }
    const int64_t free_milli = expected.gpu_free_total();
    const bool marked_free = (cluster.nodes_with_free_gpus()[node / 64] >> (node % 64) & 1) != 0;
    if (cluster.gpu_free_milli(node) != free_milli || marked_free != (free_milli > 0)) {
      violations.push_back(fmt::format("node {} free GPUs counted as {} (marked {}), not {}", spec.name,
                                       cluster.gpu_free_milli(node), marked_free, free_milli));
    }
    if (expected.free.cpu_milli < 0) violations.push_back(fmt::format("node {} CPU overcommitted", spec.name));
    if (expected.free.memory_bytes < 0) violations.push_back(fmt::format("node {} memory overcommitted", spec.name));
    for (int device = 0; device < spec.gpu_count(); ++device) {
      int used = expected.gpu_used_milli[static_cast<size_t>(device)];
      if (used > kMilliPerGpu || used < 0) {
        violations.push_back(fmt::format("node {} GPU {} holds {} milli", spec.name, device, used));
      }
      if (expected.device_limit_milli(device) > std::max(spec.gpu_memory_overcommit_milli, used)) {
        violations.push_back(fmt::format("node {} GPU {} holds limits of {} milli, over its overcommit cap of {}",
                                         spec.name, device, expected.device_limit_milli(device),
                                         spec.gpu_memory_overcommit_milli));
      }
      int whole = whole_owners[static_cast<size_t>(node)][static_cast<size_t>(device)];
      int shared = sharers[static_cast<size_t>(node)][static_cast<size_t>(device)];
      if (whole > 1 || (whole == 1 && shared > 0)) {
        violations.push_back(fmt::format("node {} GPU {} is shared by a whole-GPU pod", spec.name, device));
      }
    }
  }
  const TopologyDomains& domains = cluster.topology();
  for (int topology = 0; topology < domains.topology_count(); ++topology) {
    for (int level = 0; level < domains.level_count(topology); ++level) {
      const auto& all = domains.domains(topology, level);
      const std::span<const int64_t> kept = cluster.domain_free_gpu_milli(topology, level);
      for (size_t domain = 0; domain < all.size(); ++domain) {
        int64_t free_milli = 0;
        for (NodeIndex node : all[domain].nodes) free_milli += recomputed[static_cast<size_t>(node)].gpu_free_total();
        if (kept[domain] != free_milli) {
          violations.push_back(fmt::format("{} {} free GPUs counted as {} milli, not {}",
                                           domains.label(topology, level), all[domain].value, kept[domain],
                                           free_milli));
        }
      }
    }
  }
  // The cluster's GPUs by model (what the placement policy's cluster-wide term reads).
  GpuSupply supply;
  for (NodeIndex node = 0; node < nodes; ++node) {
    const NodeSpec& spec = cluster.node_spec(node);
    if (!spec.gpus.empty()) supply.count_idle(recomputed[static_cast<size_t>(node)].idle_devices(), 1);
    for (size_t device = 0; device < spec.gpus.size(); ++device) {
      const int64_t free_milli = recomputed[static_cast<size_t>(node)].gpu_free_milli(static_cast<int>(device));
      supply.free_milli[spec.gpus[device].model] += free_milli;
      supply.free_total_milli += free_milli;
      supply.move_partial(spec.gpus[device].model, 0, recomputed[static_cast<size_t>(node)].gpu_used_milli[device]);
    }
  }
  const GpuSupply& kept = cluster.gpu_supply();
  if (kept.free_milli != supply.free_milli || kept.free_total_milli != supply.free_total_milli) {
    violations.push_back(fmt::format("free GPUs by model counted as {} milli in all, not {}", kept.free_total_milli,
                                     supply.free_total_milli));
  }
  // The GPU nodes by their idle devices (the placement policy's weight for multi-GPU types).
  for (size_t idle = 0; idle < std::max(kept.nodes_by_idle.size(), supply.nodes_by_idle.size()); ++idle) {
    const int32_t counted = idle < kept.nodes_by_idle.size() ? kept.nodes_by_idle[idle] : 0;
    const int32_t found = idle < supply.nodes_by_idle.size() ? supply.nodes_by_idle[idle] : 0;
    if (counted != found) {
      violations.push_back(fmt::format("GPU nodes with {} idle devices counted as {}, not {}", idle, counted, found));
      break;
    }
  }
  // The devices with part of their share free, by model and free share (the placement policy's
  // sum-of-squares term reads them).
  for (size_t slot = 0; slot < std::max(kept.partial_tree.size(), supply.partial_tree.size()); ++slot) {
    const auto model = static_cast<GpuModelId>(slot / kMilliPerGpu);
    const int free_milli = static_cast<int>(slot % kMilliPerGpu);
    if (kept.partial_count(model, free_milli) != supply.partial_count(model, free_milli)) {
      violations.push_back(fmt::format("devices of GPU model {} with {} milli free counted as {}, not {}", int{model},
                                       free_milli, kept.partial_count(model, free_milli),
                                       supply.partial_count(model, free_milli)));
      break;
    }
  }
  return violations;
}

std::vector<std::string> check_gang(const ClusterState& cluster, std::span<const PodId> pods, int min_member) {
  int bound = 0;
  for (PodId id : pods) bound += cluster.binding(id).has_value() ? 1 : 0;
  if (bound == 0 || bound >= min_member) return {};
  return {fmt::format("gang of {} (min {}) is partially placed: {} bound", pods.size(), min_member, bound)};
}

std::vector<std::string> check_topology(const ClusterState& cluster, const WorkloadSpec& spec,
                                        std::span<const PodId> pods) {
  std::vector<std::string> violations;
  const TopologyDomains& domains = cluster.topology();
  // `subgroup`: the index of the subgroup whose pods are checked (-1: all), and its name.
  auto check = [&](const TopologyConstraint& constraint, int subgroup, const std::string& name) {
    if (constraint.required_level.empty()) return;
    const int topology =
        domains.find_topology(constraint.topology.empty() ? spec.topology_constraint().topology : constraint.topology);
    const int level = topology < 0 ? -1 : domains.find_level(topology, constraint.required_level);
    std::optional<int32_t> first;
    for (PodId pod : pods) {
      const auto& binding = cluster.binding(pod);
      if (!binding || (subgroup >= 0 && cluster.pod(pod).subgroup != subgroup)) continue;
      const int32_t domain = level < 0 ? -1 : domains.domain_of(topology, level, binding->node);
      if (domain < 0 || (first && *first != domain)) {
        violations.push_back(fmt::format("workload {}{}: pod {} on node {} is outside the one {} its pods must share",
                                         spec.name, name.empty() ? "" : " subgroup " + name, cluster.pod(pod).name,
                                         cluster.node_spec(binding->node).name, constraint.required_level));
        return;
      }
      first = domain;
    }
  };
  check(spec.topology_constraint(), -1, "");
  for (size_t i = 0; i < spec.subgroups().size(); ++i) {
    check(spec.subgroups()[i].constraint, static_cast<int>(i), spec.subgroups()[i].name);
  }
  return violations;
}

}  // namespace tessera
