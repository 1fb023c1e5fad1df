// Small hand-built clusters and pods for the engine and policy tests.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>

#include "core/cluster.h"
#include "core/pod.h"

namespace tessera::testing {

// `count` nodes of `gpus` devices of model "A100" (80 GiB) with the given CPU and memory.
inline std::shared_ptr<ClusterSpec> uniform_cluster(int count, int gpus, int64_t cpu_milli = 64000,
                                                    int64_t memory_bytes = 256 * kGiB) {
  auto cluster = std::make_shared<ClusterSpec>();
  GpuModelId model = *cluster->models.intern("A100");
  for (int i = 0; i < count; ++i) {
    NodeSpec node;
    node.name = fmt::format("node-{}", i);
    node.allocatable = {cpu_milli, memory_bytes};
    node.gpus.assign(static_cast<size_t>(gpus), GpuDevice{model, 80 * kGiB});
    cluster->nodes.push_back(node);
  }
  return cluster;
}

inline PodSpec pod(std::string name, int64_t cpu_milli, GpuRequest gpu, int64_t memory_bytes = kGiB) {
  PodSpec spec;
  spec.name = std::move(name);
  spec.request = {cpu_milli, memory_bytes};
  spec.gpu = gpu;
  return spec;
}

}  // namespace tessera::testing
