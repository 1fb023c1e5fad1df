#include "adapter/cycle_decisions.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string_view>

#include "scheduler/pending_reason.h"
#include "scheduler/queue_positions.h"

namespace tessera::adapter {

Decisions decide(const Snapshot& snapshot, const std::vector<std::optional<Binding>>& before,
                 const CycleResult& result) {
  const ClusterState& cluster = *snapshot.cluster;
  const WorkloadSet& workloads = snapshot.workloads;
  Decisions decisions;
  std::map<WorkloadId, size_t> start_of;  // workload -> index in decisions.starts
  auto start_for = [&](WorkloadId workload) -> StartDecision& {
    auto [it, inserted] = start_of.try_emplace(workload, decisions.starts.size());
    if (inserted) {
      StartDecision start;
      start.workload_key = snapshot.workload_keys[static_cast<size_t>(workload)];
      start.pod_group = snapshot.workload_pod_groups[static_cast<size_t>(workload)];
      decisions.starts.push_back(std::move(start));
    }
    return decisions.starts[it->second];
  };
  for (const Start& start : result.started) start_for(start.workload).action = start.action;

  // New bindings: pods unbound before the cycle and bound after it. Pods that were bound and
  // were moved are victims (below), not bindings: in Kubernetes a pod cannot change node.
  for (PodId pod = 0; pod < cluster.pod_count(); ++pod) {
    const std::optional<Binding>& after = cluster.binding(pod);
    const std::optional<Binding>& was = before[static_cast<size_t>(pod)];
    if (!after || was) continue;
    const WorkloadId workload = workloads.workload_of(pod);
    if (workload < 0) continue;
    const SnapshotPod& entry = snapshot.pods[static_cast<size_t>(pod)];
    start_for(workload).bindings.push_back({entry.key, entry.namespace_name, entry.name, placement_of(snapshot, *after),
                                            entry.fractional, entry.gpu_memory});
  }
  for (const Eviction& eviction : result.evictions) {
    if (eviction.whole_workload) {
      const auto index = static_cast<size_t>(eviction.workload);
      const Workload& workload = workloads[eviction.workload];
      EvictedWorkload& evicted = decisions.evicted[snapshot.workload_keys[index]];
      evicted.pod_group = snapshot.workload_pod_groups[index];
      evicted.owner = index < snapshot.workload_owners.size() ? snapshot.workload_owners[index] : std::nullopt;
      evicted.queue = snapshot.tree->spec(workload.queue).name;
      evicted.action = eviction.action;
      evicted.pods += static_cast<int>(eviction.pods.size());
      evicted.gpus += static_cast<double>(eviction.gpu_milli) / 1000.0;
      evicted.started_at = workload.started_at;
    }
    for (PodId pod : eviction.pods) {
      const SnapshotPod& entry = snapshot.pods[static_cast<size_t>(pod)];
      VictimDecision victim{snapshot.workload_keys[static_cast<size_t>(eviction.workload)],
                            entry.key,
                            entry.namespace_name,
                            entry.name,
                            eviction.action,
                            eviction.moved};
      if (eviction.beneficiary >= 0) {
        start_for(eviction.beneficiary).victims.push_back(std::move(victim));
      }
    }
  }
  std::erase_if(decisions.starts, [](const StartDecision& start) { return start.bindings.empty(); });

  std::map<WorkloadId, WaitingWorkload::QueuePlace> places;
  for (const QueuePosition& place : queue_positions(workloads, result.pending)) {
    places[place.workload] = {snapshot.tree->spec(place.queue).name, place.position, place.pending};
  }
  for (const PendingWorkload& pending : result.pending) {
    const auto index = static_cast<size_t>(pending.workload);
    WaitingWorkload waiting;
    waiting.workload_key = snapshot.workload_keys[index];
    waiting.pod_group = snapshot.workload_pod_groups[index];
    waiting.reason = pending_code_name(pending.reason.code);
    waiting.message = describe(pending.reason, *snapshot.tree);
    waiting.owner = index < snapshot.workload_owners.size() ? snapshot.workload_owners[index] : std::nullopt;
    waiting.queue_place = places.at(pending.workload);
    waiting.room_attempts = room_attempts(pending.reason, *snapshot.tree);
    for (PodId pod : workloads[pending.workload].pods) {
      waiting.pod_keys.push_back(snapshot.pods[static_cast<size_t>(pod)].key);
    }
    decisions.waiting.push_back(std::move(waiting));
  }
  for (const HeldWorkload& held : snapshot.held) {
    WaitingWorkload waiting;
    waiting.workload_key = held.key;
    waiting.pod_group = held.pod_group;
    waiting.pod_keys = held.pod_keys;
    waiting.reason = held.reason;
    waiting.message = held.message;
    waiting.owner = held.owner;
    decisions.waiting.push_back(std::move(waiting));
  }
  return decisions;
}

void attach_estimates(Decisions& decisions, const Snapshot& snapshot, const StartEstimates& estimates) {
  std::map<std::string_view, const StartEstimate*> by_key;
  for (const StartEstimate& estimate : estimates.estimates) {
    by_key[snapshot.workload_keys[static_cast<size_t>(estimate.workload)]] = &estimate;
  }
  std::set<std::string_view> unreached;
  for (WorkloadId id : estimates.unreached) unreached.insert(snapshot.workload_keys[static_cast<size_t>(id)]);
  for (WaitingWorkload& waiting : decisions.waiting) {
    if (const auto found = by_key.find(waiting.workload_key); found != by_key.end()) {
      waiting.estimated_start = found->second->start;
      waiting.estimate = describe_cause(*found->second, *snapshot.tree);
    } else if (unreached.contains(waiting.workload_key)) {
      waiting.estimate = estimates.stop == EstimateStop::kNoMoreEnds
                             ? "no estimate: it waits for work with no time limit or expected runtime to end"
                             : fmt::format("no estimate: the estimator stopped at its {} before reaching it",
                                           estimate_stop_name(estimates.stop));
    }
  }
}

}  // namespace tessera::adapter
