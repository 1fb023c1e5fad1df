// Tessera's own scenario format (YAML): a cluster of nodes, a tree of queues with quotas, and a list
// of workloads with arrival times, durations and gang sizes. docs/scenario-format.md is the
// reference.
//
// Errors name the source, the line and column (1-based) and the field, and say what was expected.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sim/scenario.h"

namespace tessera {

// Resolves a file reference inside a scenario (e.g. `alibaba_nodes: builtin:gpu_node` or a path
// relative to the scenario) to its text, or an Error.
using TextResolver = std::function<Result<std::string>(std::string_view reference)>;

// Parses a scenario. A scenario may carry only a cluster or only workloads; the caller combines
// it with --cluster / --workload. `cluster` is null when the file has no cluster; the sources
// are the references as written for `alibaba_nodes` / `alibaba_pods` and empty for inline
// sections.
struct ScenarioParts {
  std::string name;
  std::shared_ptr<const ClusterSpec> cluster;
  std::optional<std::vector<WorkloadSpec>> workloads;
  // The `queues` section, in file order, each quota padded to `resources.size()`. The tree has
  // been validated (QueueTree::build) and every workload names one of its leaves. Min runtimes
  // are as written: absent ones are not filled in from the parent.
  std::optional<std::vector<QueueSpec>> queues;
  // gpu, cpu, memory, then each gpu/MODEL a quota names, in order of first appearance.
  ResourceNames resources = ResourceNames::standard();
  std::string cluster_source;
  std::string workload_source;
  // What is accepted but likely not meant ("FILE:LINE:COL: field 'queues[1]': ..."): a child's
  // deserved quota above its parent's.
  std::vector<std::string> warnings;
  // The topology section's run_time_factors (docs/topology.md); empty topology: none given.
  TopologyCost topology_cost;
};

// `cluster_hint` resolves GPU model names in workloads and in per-model quotas (gpu/MODEL) when
// the file itself has no cluster.
Result<ScenarioParts> parse_scenario_yaml(std::string_view yaml_text, std::string_view source,
                                          const TextResolver& resolve, const ClusterSpec* cluster_hint);

// Kubernetes quantity strings as the API server reads them (wire/quantity.h): "500m", "2", "1.5"
// (CPU -> millicores); "64Gi", "512Mi", "1G", "1024" (memory -> bytes). Return nullopt for
// anything else or a negative value.
std::optional<int64_t> parse_cpu_milli(std::string_view text);
std::optional<int64_t> parse_memory_bytes(std::string_view text);

}  // namespace tessera
