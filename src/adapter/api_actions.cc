#include "adapter/api_actions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <random>

#include "adapter/annotations.h"
#include "adapter/object_translation.h"

namespace tessera::adapter {

namespace {

using nlohmann::json;

std::string pod_path(const std::string& namespace_name, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", namespace_name, name);
}

CallResult outcome_of(const Result<kube::ApiResponse>& response) {
  if (!response) return {CallOutcome::kFailed, response.error().message};
  if (response->ok()) return {CallOutcome::kDone, ""};
  switch (response->status) {
    case 404:
      return {CallOutcome::kGone, response->error_message()};
    case 409:
      return {CallOutcome::kConflict, response->error_message()};
    case 429:
      return {CallOutcome::kRefused, response->error_message()};
    default:
      return {CallOutcome::kFailed, fmt::format("HTTP {}: {}", response->status, response->error_message())};
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
    if (binding.gpu_memory_limit_bytes > 0) {
      env += fmt::format("TESSERA_GPU_MEMORY_LIMIT={}\n", binding.gpu_memory_limit_bytes);
    }
  }
  annotations[std::string(kGpuEnvAnnotation)] = env;
  return annotations;
}

CallResult bind_pod(kube::ApiClient& client, const PodBindingDecision& binding) {
  const std::string path = pod_path(binding.namespace_name, binding.name);
  if (json annotations = gpu_annotations(binding); !annotations.empty()) {
    CallResult patched = outcome_of(client.patch(path, {{"metadata", {{"annotations", annotations}}}}));
    if (patched.outcome != CallOutcome::kDone) return patched;
  }
  const json body = {{"apiVersion", "v1"},
                     {"kind", "Binding"},
                     {"metadata", {{"name", binding.name}, {"namespace", binding.namespace_name}}},
                     {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", binding.placement.node}}}};
  return outcome_of(client.post(path + "/binding", body));
}

CallResult evict_pod(kube::ApiClient& client, const VictimDecision& victim) {
  const json body = {{"apiVersion", "policy/v1"},
                     {"kind", "Eviction"},
                     {"metadata", {{"name", victim.name}, {"namespace", victim.namespace_name}}}};
  return outcome_of(client.post(pod_path(victim.namespace_name, victim.name) + "/eviction", body));
}

CallResult post_event(kube::ApiClient& client, const EventRecord& event, double now) {
  // Event names must be unique; client-go uses the object name and a hex timestamp.
  thread_local std::mt19937_64 random(std::random_device{}());
  const std::string name = fmt::format("{}.{:x}", event.object_name, random());
  const std::string time = format_timestamp(now);
  const json body = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name}, {"namespace", event.namespace_name}}},
      {"involvedObject",
       {{"kind", event.object_kind},
        {"apiVersion", event.object_api_version},
        {"namespace", event.namespace_name},
        {"name", event.object_name},
        {"uid", event.object_uid}}},
      {"type", event.type},
      {"reason", event.reason},
      {"message", event.message},
      {"source", {{"component", "tessera-scheduler"}}},
      {"reportingComponent", "tessera-scheduler"},
      {"firstTimestamp", time},
      {"lastTimestamp", time},
      {"count", 1},
  };
  return outcome_of(client.post(fmt::format("/api/v1/namespaces/{}/events", event.namespace_name), body));
}

}  // namespace tessera::adapter
