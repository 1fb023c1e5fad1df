// The workloads a scheduler knows, each with its pods in the ClusterState, its leaf queue and
// the times that order it (age) and protect it (minimum runtime). Persistent across cycles: the
// owner (the simulator, the Kubernetes adapter) adds workloads and finishes them; cycles place
// and evict their pods.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/queue.h"
#include "core/workload.h"
#include "engine/cluster_state.h"
#include "engine/pod_shapes.h"

namespace tessera {

using WorkloadId = int32_t;

struct Workload {
  WorkloadSpec spec;
  QueueIndex queue = 0;
  std::vector<PodId> pods;  // ClusterState ids, in spec.pods order; the first min_member are the gang
  double submitted_at = 0;  // orders a queue's workloads by age
  double started_at = 0;    // when its gang last started; minimum runtimes count from here
  bool finished = false;
  // A workload requeued by its time limit waits until then before it may run again
  // (LimitLedger::held_until): until then the cycle neither places it nor counts its demand.
  double held_until = 0;
  uint32_t gang_shape = 0;  // equal for workloads whose gangs ask for the same pods

  int min_member() const { return min_member_of(spec); }
  static int min_member_of(const WorkloadSpec& spec) {
    return spec.pods.empty() ? 0 : std::clamp(spec.min_member, 1, static_cast<int>(spec.pods.size()));
  }
  std::span<const PodId> gang() const { return {pods.data(), static_cast<size_t>(min_member())}; }
};

class WorkloadSet {
 public:
  // Adds the workload's pods to the cluster, unbound.
  WorkloadId add(WorkloadSpec spec, QueueIndex queue, ClusterState& cluster, double submitted_at);
  // Unbinds whatever still runs and takes the workload out of scheduling for good.
  void finish(WorkloadId id, ClusterState& cluster);

  size_t size() const { return workloads_.size(); }
  const Workload& operator[](WorkloadId id) const { return workloads_[static_cast<size_t>(id)]; }
  Workload& operator[](WorkloadId id) { return workloads_[static_cast<size_t>(id)]; }
  // Workloads not finished (in no particular order, but deterministically).
  const std::vector<WorkloadId>& active() const { return active_; }

  // The workload a pod belongs to, and the pod's position in it.
  WorkloadId workload_of(PodId pod) const { return pod_owner_[static_cast<size_t>(pod)]; }
  int position_of(PodId pod) const { return pod_position_[static_cast<size_t>(pod)]; }

  int bound_pods(WorkloadId id, const ClusterState& cluster) const;
  // Running: all of its gang is bound. Pending: none of its pods is.
  bool is_running(WorkloadId id, const ClusterState& cluster) const;
  bool is_pending(WorkloadId id, const ClusterState& cluster) const;

 private:
  std::vector<Workload> workloads_;
  std::vector<WorkloadId> active_;
  std::vector<int32_t> active_position_;  // per workload: its index in active_, -1 once finished
  std::vector<WorkloadId> pod_owner_;
  std::vector<int32_t> pod_position_;
  PodShapes pod_shapes_;
  std::unordered_map<std::string, uint32_t> gang_shapes_;
};

}  // namespace tessera
