// A small scheduler world for the cycle tests: a cluster, a queue tree, workloads, and one
// cluster state and placer kept across cycles as the simulator and the adapter keep them.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/invariants.h"
#include "policy/policy_registry.h"
#include "scheduler/cycle.h"
#include "test_cluster.h"

namespace tessera::testing {

inline QueueSpec gpu_queue(std::string name, std::string parent, double deserved, double weight = 1,
                           std::optional<double> limit = std::nullopt) {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  spec.quota = {QueueQuota{deserved, weight, limit}};
  return spec;
}

struct WorkloadShape {
  int pods = 1;
  int gpus_per_pod = 1;  // whole GPUs; 0 with portion_milli > 0: a fraction
  int portion_milli = 0;
  int64_t gpu_memory = 0;  // > 0 (with gpus_per_pod 0): GPU memory, with its limit
  int64_t gpu_memory_limit = 0;
  int min_member = -1;  // -1: all pods
  int priority = 0;
  bool preemptible = true;
  double time_limit = 0;         // seconds; 0: none
  int64_t cpu_milli = 1000;      // per pod
  bool cpu_only_first = false;   // the first pod asks for no GPU: a launcher beside its workers
  bool cpu_only_extras = false;  // the pods beyond min_member ask for no GPU
};

class SchedulerWorld {
 public:
  SchedulerWorld(std::shared_ptr<ClusterSpec> cluster, std::vector<QueueSpec> queues,
                 std::string_view policy = "leftover-fit")
      : cluster_spec_(std::move(cluster)),
        tree_(*QueueTree::build(std::move(queues), ResourceNames::standard())),
        meter_(*cluster_spec_, tree_.resources()),
        cluster_(cluster_spec_),
        policy_(*make_policy(policy, WorkloadMix())),
        placer_(*policy_) {}

  WorkloadId submit(const std::string& name, const std::string& queue, const WorkloadShape& shape, double at = 0) {
    WorkloadSpec spec;
    spec.name = name;
    spec.queue = queue;
    spec.priority = shape.priority;
    spec.preemptible = shape.preemptible;
    spec.min_member = shape.min_member < 0 ? shape.pods : shape.min_member;
    spec.time_limit_seconds = shape.time_limit;
    for (int i = 0; i < shape.pods; ++i) {
      GpuRequest gpu = shape.portion_milli > 0
                           ? GpuRequest::portion(shape.portion_milli)
                           : (shape.gpus_per_pod > 0 ? GpuRequest::whole(shape.gpus_per_pod) : GpuRequest::none());
      if (shape.gpu_memory > 0) gpu = GpuRequest::memory(shape.gpu_memory, shape.gpu_memory_limit);
      if ((shape.cpu_only_first && i == 0) || (shape.cpu_only_extras && i >= spec.min_member)) gpu = GpuRequest::none();
      PodSpec pod_spec = pod(fmt::format("{}-p{}", name, i), shape.cpu_milli, gpu);
      pod_spec.priority = shape.priority;
      pod_spec.preemptible = shape.preemptible;
      spec.pods.push_back(pod_spec);
    }
    auto queue_index = tree_.find(queue);
    EXPECT_TRUE(queue_index.has_value()) << queue;
    return workloads_.add(std::move(spec), queue_index.value_or(0), cluster_, at);
  }

  // Runs a cycle, handing it what the last one left (reservations, remembered use), as the
  // simulator and the adapter do.
  CycleResult cycle(double now, const CycleOptions& options = {}) {
    auto result = run_cycle({cluster_, placer_, workloads_, tree_, meter_, now, &carried_}, options);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    if (!result.ok()) return CycleResult{};
    return std::move(*result);
  }
  // What the last cycle left for the next: the reservations in force, the remembered use.
  const std::vector<Reservation>& reservations() const { return carried_.reservations; }
  CarriedState& carried() { return carried_; }

  // GPUs the leaf queue's running pods hold.
  double gpus_of(const std::string& queue) const {
    double total = 0;
    const QueueIndex index = *tree_.find(queue);
    for (WorkloadId id : workloads_.active()) {
      if (workloads_[id].queue != index) continue;
      for (PodId pod : workloads_[id].pods) {
        if (const auto& binding = cluster_.binding(pod)) total += static_cast<double>(binding->gpu_milli()) / 1000;
      }
    }
    return total;
  }
  bool running(WorkloadId id) const { return workloads_.is_running(id, cluster_); }
  int bound(WorkloadId id) const { return workloads_.bound_pods(id, cluster_); }

  ClusterState& cluster() { return cluster_; }
  WorkloadSet& workloads() { return workloads_; }
  const QueueTree& tree() const { return tree_; }
  const ResourceMeter& meter() const { return meter_; }
  PlacementPolicy& policy() { return *policy_; }

 private:
  std::shared_ptr<ClusterSpec> cluster_spec_;
  QueueTree tree_;
  ResourceMeter meter_;
  ClusterState cluster_;
  PlacementPolicyPtr policy_;
  Placer placer_;
  WorkloadSet workloads_;
  CarriedState carried_;
};

// The safety invariants of the cluster, whole gangs and kept topology constraints, asserted
// (`where` names the world and time in the message).
inline void assert_sound(SchedulerWorld& world, const std::string& where) {
  auto violations = check_invariants(world.cluster());
  ASSERT_TRUE(violations.empty()) << where << ": " << violations.front();
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(world.workloads().size()); ++id) {
    const Workload& workload = world.workloads()[id];
    auto gang = check_gang(world.cluster(), workload.pods, workload.min_member());
    ASSERT_TRUE(gang.empty()) << where << ": " << gang.front();
    auto topology = check_topology(world.cluster(), workload.spec, workload.pods);
    ASSERT_TRUE(topology.empty()) << where << ": " << topology.front();
  }
}

}  // namespace tessera::testing
