// How much of each node's free GPU capacity the work the cluster is asked to run cannot use:
// FGD's fragmentation (policy/fragmentation.h, kFgdRules: "Beware of Fragmentation", USENIX
// ATC'23), the measure `tessera sim` reports and the fgd policy minimises. A node's is the free
// GPU capacity a pod type cannot use (all of it where the type fits nowhere on the node; else
// the free part of each device too small for the type), weighted by how common each type is.
// The types are those of the GPU pods the cluster holds, running and waiting, of any scheduler;
// with none, one pod of one whole GPU (then a node's fragmentation is the free part of its
// partly used devices).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "cli/user/node_view.h"
#include "policy/workload_mix.h"

namespace tessera::cli {

// The GPU pod types of `pods` (a PodList) that have not finished, nodes' models read from `nodes`
// (a NodeList, whose models are numbered in its order, as add_fragmentation numbers them); a pod
// that does not read is left out.
WorkloadMix gpu_pod_mix(const nlohmann::json& nodes, const nlohmann::json& pods);

// Sets each node's fragmented_milli: `gpus` as node_gpus made them from the same `nodes` and
// `pods`. A node that does not read as a Node keeps 0.
void add_fragmentation(std::vector<NodeGpus>& gpus, const nlohmann::json& nodes, const nlohmann::json& pods,
                       const WorkloadMix& mix);

}  // namespace tessera::cli
