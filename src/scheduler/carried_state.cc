#include "scheduler/carried_state.h"

namespace tessera {

void fade_into_recent_usage(CarriedState& carried, size_t queue_count, double now, double half_life_seconds) {
  carried.recent_usage.resize(queue_count);
  for (QueueIndex queue = 0; queue < queue_count && queue < carried.held.size(); ++queue) {
    carried.recent_usage[queue] =
        decay_usage(carried.recent_usage[queue], carried.held[queue], now - carried.usage_at, half_life_seconds);
  }
  carried.usage_at = now;
}

std::vector<ResourceVector> usage_of_running_work(const WorkloadSet& workloads, const ClusterState& cluster,
                                                  const QueueTree& queues, const ResourceMeter& meter, double now,
                                                  double half_life_seconds) {
  std::vector<ResourceVector> usage(queues.size(), ResourceVector(queues.resource_count(), 0.0));
  ResourceVector held(queues.resource_count(), 0.0);
  for (WorkloadId id : workloads.active()) {
    const Workload& workload = workloads[id];
    if (workload.queue >= queues.size()) continue;
    held.assign(queues.resource_count(), 0.0);
    for (PodId pod : workload.pods) {
      if (const auto& binding = cluster.binding(pod)) meter.add_bound(cluster.pod(pod), *binding, held);
    }
    // Held since it started and nothing before: decay_usage from zero over the time it has run.
    const ResourceVector remembered = decay_usage({}, held, now - workload.started_at, half_life_seconds);
    for (QueueIndex queue = workload.queue; queue != QueueTree::kNoParent; queue = queues.parent(queue)) {
      for (ResourceId r = 0; r < remembered.size(); ++r) usage[queue][r] += remembered[r];
    }
  }
  return usage;
}

}  // namespace tessera
