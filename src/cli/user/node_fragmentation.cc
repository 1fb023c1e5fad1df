#include "cli/user/node_fragmentation.h"

#include <algorithm>
#include <map>

#include "adapter/object_translation.h"
#include "cli/user/object_reads.h"
#include "policy/fragmentation.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

// Every node's GPU model known to the catalog, so that a pod's model selector reads against them.
GpuModelCatalog node_models(const json& nodes) {
  GpuModelCatalog models;
  for (const json& node : list_items(nodes)) (void)adapter::node_from_object(node, models);
  return models;
}

}  // namespace

WorkloadMix gpu_pod_mix(const json& nodes, const json& pods) {
  const GpuModelCatalog models = node_models(nodes);
  std::vector<PodSpec> specs;
  for (const json& pod : list_items(pods)) {
    const std::string phase = text_at(pod, "/status/phase");
    if (phase == "Succeeded" || phase == "Failed") continue;
    Result<adapter::PodInfo> info = adapter::pod_from_object(pod, models);
    if (info && info->spec.gpu.wants_gpu()) specs.push_back(info->spec);
  }
  if (specs.empty()) {
    PodSpec one_gpu;
    one_gpu.gpu = GpuRequest::whole(1);
    specs.push_back(one_gpu);
  }
  return WorkloadMix::from_pods(specs);
}

void add_fragmentation(std::vector<NodeGpus>& gpus, const json& nodes, const json& pods, const WorkloadMix& mix) {
  GpuModelCatalog models;
  std::map<std::string, NodeSpec> specs;
  for (const json& node : list_items(nodes)) {
    if (Result<NodeSpec> spec = adapter::node_from_object(node, models))
      specs.emplace(text_at(node, "/metadata/name"), *spec);
  }
  // What the pods holding room take of each node's CPU and memory (the GPUs are node_gpus' map).
  std::map<std::string, Resources> used;
  for (const json& pod : list_items(pods)) {
    if (!holds_room(pod)) continue;
    if (Result<adapter::PodInfo> info = adapter::pod_from_object(pod, models)) {
      used[text_at(pod, "/spec/nodeName")] += info->spec.request;
    }
  }
  for (NodeGpus& node : gpus) {
    const auto spec = specs.find(node.name);
    if (spec == specs.end() || spec->second.gpus.size() != node.device_milli.size()) continue;
    NodeState state = NodeState::empty(spec->second);
    state.free -= used[node.name];
    for (size_t device = 0; device < node.device_milli.size(); ++device) {
      state.gpu_used_milli[device] = static_cast<int16_t>(std::clamp(node.device_milli[device], 0, kMilliPerGpu));
    }
    node.fragmented_milli = expected_fragmentation(spec->second, state, mix, kFgdRules);
  }
}

}  // namespace tessera::cli
