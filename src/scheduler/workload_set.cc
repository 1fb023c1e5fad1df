#include "scheduler/workload_set.h"

namespace tessera {

WorkloadId WorkloadSet::add(WorkloadSpec spec, QueueIndex queue, ClusterState& cluster, double submitted_at) {
  const auto id = static_cast<WorkloadId>(workloads_.size());
  Workload workload;
  workload.queue = queue;
  workload.submitted_at = submitted_at;
  workload.pods.reserve(spec.pods.size());
  for (size_t position = 0; position < spec.pods.size(); ++position) {
    const PodId pod = cluster.add_pod(spec.pods[position]);
    // Pods the cluster knows that belong to no workload (placed by someone else) own nothing.
    if (pod_owner_.size() <= static_cast<size_t>(pod)) {
      pod_owner_.resize(static_cast<size_t>(pod) + 1, -1);
      pod_position_.resize(static_cast<size_t>(pod) + 1, -1);
    }
    pod_owner_[static_cast<size_t>(pod)] = id;
    pod_position_[static_cast<size_t>(pod)] = static_cast<int32_t>(position);
    workload.pods.push_back(pod);
  }
  std::string signature;
  for (size_t position = 0; position < static_cast<size_t>(workload.min_member_of(spec)); ++position) {
    signature += std::to_string(pod_shapes_.intern(spec.pods[position]));
    const int16_t subgroup = spec.pods[position].subgroup;
    signature += subgroup < 0 ? "," : "/" + std::to_string(subgroup) + ",";
  }
  // Equal pods under different topology constraints fit in different places.
  auto add_constraint = [&signature](const TopologyConstraint& constraint) {
    signature += "|" + constraint.topology + "|" + constraint.required_level + "|" + constraint.preferred_level;
  };
  add_constraint(spec.topology_constraint());
  for (const SubGroupSpec& subgroup : spec.subgroups()) {
    signature += "|" + subgroup.name;
    add_constraint(subgroup.constraint);
  }
  workload.gang_shape = gang_shapes_.try_emplace(signature, static_cast<uint32_t>(gang_shapes_.size())).first->second;
  workload.spec = std::move(spec);
  workloads_.push_back(std::move(workload));
  active_position_.push_back(static_cast<int32_t>(active_.size()));
  active_.push_back(id);
  return id;
}

void WorkloadSet::finish(WorkloadId id, ClusterState& cluster) {
  Workload& workload = workloads_[static_cast<size_t>(id)];
  if (workload.finished) return;
  for (PodId pod : workload.pods) {
    if (cluster.binding(pod)) cluster.unbind(pod);
  }
  workload.finished = true;
  // Swap-remove keeps finishing O(1); active() order is therefore not the order added once
  // workloads finish, which no caller relies on beyond determinism.
  const auto position = static_cast<size_t>(active_position_[static_cast<size_t>(id)]);
  active_[position] = active_.back();
  active_position_[static_cast<size_t>(active_[position])] = static_cast<int32_t>(position);
  active_.pop_back();
  active_position_[static_cast<size_t>(id)] = -1;
}

int WorkloadSet::bound_pods(WorkloadId id, const ClusterState& cluster) const {
  int bound = 0;
  for (PodId pod : workloads_[static_cast<size_t>(id)].pods) bound += cluster.binding(pod) ? 1 : 0;
  return bound;
}

bool WorkloadSet::is_running(WorkloadId id, const ClusterState& cluster) const {
  const Workload& workload = workloads_[static_cast<size_t>(id)];
  for (PodId pod : workload.gang()) {
    if (!cluster.binding(pod)) return false;
  }
  return !workload.finished;
}

bool WorkloadSet::is_pending(WorkloadId id, const ClusterState& cluster) const {
  const Workload& workload = workloads_[static_cast<size_t>(id)];
  if (workload.finished) return false;
  for (PodId pod : workload.pods) {
    if (cluster.binding(pod)) return false;
  }
  return true;
}

}  // namespace tessera
