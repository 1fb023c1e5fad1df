// What a pod counts against its queue, per queue resource (docs/design.md §2): GPUs (fractions included),
// CPU millicores, memory bytes, and the per-model GPU resources ("gpu/H100") a tree names.
#pragma once

#include <span>
#include <vector>

#include "core/binding.h"
#include "core/cluster.h"
#include "core/pod.h"
#include "core/queue.h"

namespace tessera {

class ResourceMeter {
 public:
  ResourceMeter(const ClusterSpec& cluster, const ResourceNames& resources);

  size_t resource_count() const { return resource_count_; }
  // The device memory a pending GPU-memory request is measured against: the cluster's median.
  int64_t typical_device_memory() const { return typical_device_memory_; }
  // What the cluster's nodes hold of each resource: the capacity fair shares divide.
  ResourceVector capacity() const;
  ResourceId gpu() const { return gpu_; }
  // How far GPU-memory limits may add up over the cluster's GPUs: the nodes' overcommit ratios
  // (NodeSpec::gpu_memory_overcommit_milli) weighted by their GPUs; 1 without GPUs.
  double limit_overcommit() const;

  // A pod not yet placed. A GPU-memory request counts as the portion of a device of the
  // cluster's median device memory; the per-model resource counts only when the pod allows
  // exactly one model.
  ResourceVector pending(const PodSpec& pod) const;
  // A placed pod: the GPU portion it holds on its devices, counted under their model too.
  ResourceVector bound(const PodSpec& pod, const Binding& binding) const;
  // Adds the amount to `total` (both sized resource_count()).
  void add_pending(const PodSpec& pod, std::span<double> total) const;
  void add_bound(const PodSpec& pod, const Binding& binding, std::span<double> total) const;

  // The resources quota rules compare for a request (see docs/fair-share.md), into `keys`: the
  // GPU resources when it asks for GPUs (gpu and any per-model one it touches), else CPU and
  // memory. An out-parameter: a cycle asks for 100,000 requests' keys.
  void key_resources(std::span<const double> request, std::vector<ResourceId>& keys) const;

 private:
  void add_common(const PodSpec& pod, std::span<double> total) const;

  const ClusterSpec& cluster_;
  size_t resource_count_;
  ResourceId gpu_ = 0, cpu_ = 1, memory_ = 2;
  std::vector<int> model_resource_;  // per GPU model id: its resource id, or -1
  int64_t typical_device_memory_ = 0;
};

}  // namespace tessera
