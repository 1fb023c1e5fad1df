// What the policy lab replays: a cluster and the workloads that arrive on it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/queue.h"
#include "core/workload.h"
#include "sim/topology_cost.h"

namespace tessera {

struct Scenario {
  std::string name;                            // shown in reports ("alibaba-2023 default", a file stem)
  std::string cluster_source;                  // where the nodes came from, for the report
  std::string workload_source;                 // where the workloads came from
  std::shared_ptr<const ClusterSpec> cluster;  // never null once loaded
  std::vector<WorkloadSpec> workloads;         // sorted by arrival
  // The queue tree (docs/design.md §2). Empty when the scenario defines none: every workload then belongs
  // to one queue with no quota. Quotas are indexed by `resources`: gpu, cpu (millicores),
  // memory (bytes), then any per-model GPU resource (gpu/H100) a quota names.
  std::vector<QueueSpec> queues;
  ResourceNames resources = ResourceNames::standard();
  std::vector<std::string> warnings;  // from the files read: accepted, but likely not meant
  // Why a timeline replay cannot use the workloads (their pod list has no times); empty: it can.
  std::string untimed;
  // How a gang's spread over the topology stretches its run time (the topology section's
  // run_time_factors); no topology: none.
  TopologyCost topology_cost;
};

inline int64_t pod_count(const Scenario& scenario) {
  int64_t count = 0;
  for (const WorkloadSpec& workload : scenario.workloads) count += static_cast<int64_t>(workload.pods.size());
  return count;
}

// Every pod of every workload, in workload order.
inline std::vector<PodSpec> all_pods(const Scenario& scenario) {
  std::vector<PodSpec> pods;
  for (const WorkloadSpec& workload : scenario.workloads)
    pods.insert(pods.end(), workload.pods.begin(), workload.pods.end());
  return pods;
}

}  // namespace tessera
