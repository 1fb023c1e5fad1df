// Builds the dashboard's picture of one cycle from what the cycle saw and decided: the cluster
// state it left, its queues and fair shares, and the rows of the workloads that wait and were
// evicted. Pure functions of their inputs, run on the cycle thread after each cycle.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dashboard/dashboard_state.h"
#include "engine/cluster_state.h"
#include "policy/fair_share.h"
#include "policy/workload_mix.h"
#include "scheduler/cycle.h"
#include "scheduler/resource_meter.h"
#include "scheduler/workload_set.h"

namespace tessera::dashboard {

struct CycleFacts {
  const ClusterState& cluster;  // as the cycle left it
  const WorkloadSet& workloads;
  const QueueTree& queues;
  const ResourceMeter& meter;
  const CycleResult& result;
  const std::vector<std::string>& workload_keys;  // by WorkloadId: "namespace/name"
  const WorkloadMix& mix;  // the pod shapes the cycle placed for (fragmentation is measured against them)
  double now = 0;
};

// The queues, each after its parent and depth first, without history (QueueHistory adds it).
std::vector<QueueRow> queue_rows(const CycleFacts& facts);

// Every node with each device's holders by queue (indices into `queue_rows`' order) and its FGD
// fragmentation against the cycle's workload mix.
std::vector<NodeRow> node_rows(const CycleFacts& facts);

Overview overview_of(const std::vector<NodeRow>& nodes, const std::vector<QueueRow>& queues,
                     const std::vector<WorkloadRow>& pending);

// A workload's GPUs (its gang's request as the queue meter counts it) and its leaf queue's name.
double workload_gpus(const CycleFacts& facts, WorkloadId id);

// The workloads the cycle left pending, with the reason it gives (docs/design.md §7) and no
// estimate; the Kubernetes scheduler makes its own rows, with estimates and the workloads the
// engine never saw.
std::vector<WorkloadRow> pending_rows(const CycleFacts& facts);

// The whole workloads the cycle evicted for which `carried_out(workload key)` holds (a
// PodDisruptionBudget may have refused the rest).
std::vector<EvictionRow> eviction_rows(const CycleFacts& facts,
                                       const std::function<bool(const std::string&)>& carried_out);

}  // namespace tessera::dashboard
