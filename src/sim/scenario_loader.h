// Resolves what `tessera sim --cluster X --workload Y` names into a Scenario. Each of X and Y
// may be `builtin:NAME` (an embedded Alibaba trace), an Alibaba CSV file (node list or pod
// list), or a Tessera scenario YAML that may carry the cluster, the workloads, or both. The queue
// tree travels with the workloads: it comes from the YAML file that supplied them (none for an
// Alibaba pod list).
#pragma once

#include <string>

#include "core/result.h"
#include "sim/scenario.h"

namespace tessera {

struct ScenarioRequest {
  std::string cluster = "builtin:gpu_node";
  std::string workload = "builtin:default";
  bool workload_given = false;  // false: a YAML --cluster may supply the workloads
};

Result<Scenario> load_scenario(const ScenarioRequest& request);

// The nodes of what `--cluster` names (a scenario YAML's other sections are left unread).
Result<std::shared_ptr<const ClusterSpec>> load_cluster(const std::string& reference);

// The text of `builtin:NAME` or of a file, or an Error naming what could not be read.
Result<std::string> read_reference(std::string_view reference);

}  // namespace tessera
