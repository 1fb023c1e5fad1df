// What the policy lab replays: a cluster and the workloads that arrive on it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/workload.h"

namespace tessera {

struct Scenario {
  std::string name;                            // shown in reports ("alibaba-2023 default", a file stem)
  std::string cluster_source;                  // where the nodes came from, for the report
  std::string workload_source;                 // where the workloads came from
  std::shared_ptr<const ClusterSpec> cluster;  // never null once loaded
  std::vector<WorkloadSpec> workloads;         // sorted by arrival
};

}  // namespace tessera
