// v1 Node objects for the nodes of a Tessera cluster description (what `tessera sim` reads), as a
// kubelet with NVIDIA's device plugin and GPU feature discovery would register them: capacity
// and allocatable (cpu, memory, nvidia.com/gpu, pods), GPU labels, taints, Ready.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/gpu_model.h"
#include "core/node.h"

namespace tessera::apiserver {

// The node's InternalIP; `index` is its position in the cluster.
std::string node_internal_ip(size_t index);

nlohmann::json node_object(const NodeSpec& node, const GpuModelCatalog& models, size_t index, const std::string& now);

}  // namespace tessera::apiserver
