#include "adapter/api_actions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "adapter/annotations.h"
#include "adapter/failure_log.h"
#include "adapter/object_translation.h"

namespace tessera::adapter {

namespace {

using nlohmann::json;

std::string pod_path(const std::string& namespace_name, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", namespace_name, name);
}

CallResult outcome_of(const Result<kube::ApiResponse>& response) {
  if (!response) return {CallOutcome::kFailed, response.error().message, response.error().message};
  if (response->ok()) return {CallOutcome::kDone, "", ""};
  const std::string cause = failure_cause(response);
  switch (response->status) {
    case 404:
      return {CallOutcome::kGone, response->error_message(), cause};
    case 409:
      return {CallOutcome::kConflict, response->error_message(), cause};
    case 429:
      return {CallOutcome::kRefused, response->error_message(), cause};
    default:
      return {CallOutcome::kFailed, response->failure_text(), cause};
  }
}

std::string join(const std::vector<int>& values) { return fmt::format("{}", fmt::join(values, ",")); }

}  // namespace

json gpu_annotations(const PodBindingDecision& binding) {
  const PodPlacement& placement = binding.placement;
  json annotations = json::object();
  if (placement.devices.empty()) return annotations;
  const std::string devices = join(placement.devices);
  annotations[std::string(kGpuIndexAnnotation)] = devices;
  std::string env = fmt::format("NVIDIA_VISIBLE_DEVICES={}\n", devices);
  if (binding.fractional) {
    annotations[std::string(kGpuPortionAnnotation)] = std::to_string(placement.milli_per_device);
    env += fmt::format("TESSERA_GPU_PORTION={}\n", placement.milli_per_device / 1000.0);
    // The node agent fills its ledger from these (annotations.h); the interposer reads the env.
    if (const GpuMemoryTerms& memory = binding.gpu_memory; memory.request_bytes > 0) {
      annotations[std::string(kGpuMemoryRequestBytesAnnotation)] = std::to_string(memory.request_bytes);
      annotations[std::string(kGpuMemoryLimitBytesAnnotation)] = std::to_string(memory.limit_bytes);
      env += fmt::format("TESSERA_GPU_MEMORY_REQUEST={}\nTESSERA_GPU_MEMORY_LIMIT={}\nTESSERA_GPU_MEMORY_RESOLVER={}\n",
                         memory.request_bytes, memory.limit_bytes, memory.resolver);
    }
  }
  annotations[std::string(kGpuEnvAnnotation)] = env;
  return annotations;
}

CallResult bind_pod(kube::ApiClient& client, const PodBindingDecision& binding) {
  json metadata = {{"name", binding.name}, {"namespace", binding.namespace_name}};
  if (json annotations = gpu_annotations(binding); !annotations.empty()) metadata["annotations"] = annotations;
  const json body = {{"apiVersion", "v1"},
                     {"kind", "Binding"},
                     {"metadata", metadata},
                     {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", binding.placement.node}}}};
  return outcome_of(client.post(pod_path(binding.namespace_name, binding.name) + "/binding", body));
}

CallResult evict_pod(kube::ApiClient& client, const VictimDecision& victim) {
  const json body = {{"apiVersion", "policy/v1"},
                     {"kind", "Eviction"},
                     {"metadata", {{"name", victim.name}, {"namespace", victim.namespace_name}}}};
  auto response = client.post(pod_path(victim.namespace_name, victim.name) + "/eviction", body);
  // Only a 429 naming the DisruptionBudget cause is a refusal; a plain 429 is an overloaded server.
  if (response && response->status == 429 && !response->has_cause("DisruptionBudget")) {
    return {CallOutcome::kFailed, fmt::format("HTTP 429: {}", response->error_message()), failure_cause(response)};
  }
  return outcome_of(response);
}

CallResult delete_pod(kube::ApiClient& client, const std::string& namespace_name, const std::string& name) {
  return outcome_of(client.del(pod_path(namespace_name, name)));
}

CallResult mark_unschedulable(kube::ApiClient& client, const std::string& namespace_name, const std::string& name,
                              const std::string& message, const std::string& transition_time) {
  const json condition = {{"type", "PodScheduled"},
                          {"status", "False"},
                          {"reason", "Unschedulable"},
                          {"message", message},
                          {"lastProbeTime", nullptr},
                          {"lastTransitionTime", transition_time}};
  return outcome_of(client.patch(pod_path(namespace_name, name) + "/status",
                                 {{"status", {{"conditions", json::array({condition})}}}},
                                 kube::PatchType::kStrategicMerge));
}

}  // namespace tessera::adapter
