#include "apiserver/node_objects.h"

#include <fmt/format.h>

#include <functional>

#include "apiserver/discovery.h"
#include "wire/quantity.h"
#include "wire/taint_effect.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

json condition(const char* type, const char* status, const char* reason, const char* message, const std::string& now) {
  return {{"type", type},     {"status", status},  {"lastHeartbeatTime", now}, {"lastTransitionTime", now},
          {"reason", reason}, {"message", message}};
}

// Stable identifiers derived from the name, so a node keeps them across restarts.
std::string derived_id(const std::string& name, const char* salt) {
  const size_t hash = std::hash<std::string>{}(name + salt);
  return fmt::format("{:016x}{:016x}", hash, std::hash<std::string>{}(salt + name));
}

}  // namespace

std::string node_internal_ip(size_t index) {
  const size_t host = index + 1;
  return fmt::format("10.{}.{}.{}", 64 + (host >> 16) % 64, (host >> 8) & 0xFF, host & 0xFF);
}

json node_object(const NodeSpec& node, const GpuModelCatalog& models, size_t index, const std::string& now) {
  json labels = json::object();
  for (const auto& [key, value] : node.labels) labels[key] = value;
  labels["kubernetes.io/hostname"] = node.name;
  labels["kubernetes.io/os"] = "linux";
  labels["kubernetes.io/arch"] = "amd64";
  json resources = {{"cpu", wire::format_quantity_milli(node.allocatable.cpu_milli)},
                    {"memory", wire::format_bytes(node.allocatable.memory_bytes)},
                    {"pods", "110"},
                    {"ephemeral-storage", "1Ti"}};
  if (node.gpu_count() > 0) {
    const GpuDevice& device = node.gpus.front();
    resources["nvidia.com/gpu"] = std::to_string(node.gpu_count());
    labels["nvidia.com/gpu.product"] = models.name(device.model);
    labels["nvidia.com/gpu.memory"] = std::to_string(device.memory_bytes / (1024 * 1024));
    labels["nvidia.com/gpu.count"] = std::to_string(node.gpu_count());
    labels["nvidia.com/gpu.present"] = "true";
  }
  json taints = json::array();
  for (const Taint& taint : node.taints) {
    json entry = {{"key", taint.key}, {"effect", wire::taint_effect_name(taint.effect)}};
    if (!taint.value.empty()) entry["value"] = taint.value;
    taints.push_back(std::move(entry));
  }
  json spec = {{"podCIDR", fmt::format("10.{}.{}.0/24", 128 + (index >> 8) % 128, index & 0xFF)}};
  spec["podCIDRs"] = json::array({spec["podCIDR"]});
  if (!node.schedulable) {
    spec["unschedulable"] = true;
    // What the node lifecycle controller adds to a cordoned node.
    taints.push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", wire::taint_effect_name(TaintEffect::kNoSchedule)}, {"timeAdded", now}});
  }
  if (!taints.empty()) spec["taints"] = taints;
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", node.name}, {"labels", labels}, {"annotations", {{"node.alpha.kubernetes.io/ttl", "0"}}}}},
      {"spec", spec},
      {"status",
       {{"capacity", resources},
        {"allocatable", resources},
        {"conditions",
         {condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available",
                    now),
          condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", now),
          condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available", now),
          condition("Ready", "True", "KubeletReady",
                    "kubelet is posting ready status (simulated by tessera dev cluster)", now)}},
        {"addresses",
         {{{"type", "InternalIP"}, {"address", node_internal_ip(index)}},
          {{"type", "Hostname"}, {"address", node.name}}}},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
        {"nodeInfo",
         {{"machineID", derived_id(node.name, "machine")},
          {"systemUUID", derived_id(node.name, "system")},
          {"bootID", derived_id(node.name, "boot")},
          {"kernelVersion", "6.1.0-tessera"},
          {"osImage", "Tessera simulated node"},
          {"containerRuntimeVersion", "containerd://1.7.0"},
          {"kubeletVersion", kServerGitVersion},
          {"kubeProxyVersion", kServerGitVersion},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}}}}};
}

}  // namespace tessera::apiserver
