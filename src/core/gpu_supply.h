// The cluster's GPUs by model: what each model has in all and what of it is free. The engine
// keeps it in step with every binding, so a placement can weigh how much of a model is left
// cluster-wide (which no single node's state shows).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/gpu_model.h"
#include "core/gpu_request.h"
#include "core/resources.h"

namespace tessera {

// The CPU a workload asking `cpu_per_gpu_milli` of CPU per milli-GPU asks for, filling a
// cluster's GPUs, as a share of its CPU (above 1: CPU runs out first); 0 for a cluster without CPU.
inline double cpu_asked_share(double cpu_per_gpu_milli, int64_t gpu_capacity_milli, int64_t cpu_capacity_milli) {
  if (cpu_capacity_milli <= 0) return 0;
  return cpu_per_gpu_milli * static_cast<double>(gpu_capacity_milli) / static_cast<double>(cpu_capacity_milli);
}

struct GpuSupply {
  std::array<int64_t, GpuModelSet::kMaxModels> capacity_milli{};
  std::array<int64_t, GpuModelSet::kMaxModels> free_milli{};
  // The memory of one device of the model (the first seen), to read GPU-memory requests with.
  std::array<int64_t, GpuModelSet::kMaxModels> device_memory_bytes{};
  int64_t free_total_milli = 0;
  // The cluster's allocatable CPU, to tell whether GPUs or CPU run out first.
  int64_t cpu_capacity_milli = 0;
  // How many devices of each model have each partial share free (0 < free < 1000 milli; idle and
  // full devices are not counted): the gaps fractional pods can fill. Kept as one Fenwick tree
  // per model (at [model * kMilliPerGpu + free milli]), so that the devices of a range of free
  // shares are counted in a few steps: a placement policy asks for every node group it scores.
  // Sized for the cluster's models; empty: none counted. Read through the functions below.
  std::vector<int32_t> partial_tree;
  // The cluster's GPU nodes by shape, each shape once: which models have nodes large enough
  // for a pod at all (a pod asking for more CPU or memory than most nodes of its GPU count have
  // can run only on the larger ones, as if it named their model).
  struct NodeShape {
    GpuModelId model = 0;
    int gpus = 0;
    Resources allocatable;
    friend bool operator==(const NodeShape&, const NodeShape&) = default;
  };
  std::vector<NodeShape> node_shapes;
  void count_shape(const NodeShape& shape) {
    if (std::find(node_shapes.begin(), node_shapes.end(), shape) == node_shapes.end()) node_shapes.push_back(shape);
  }

  // How many GPU nodes have each number of idle devices (at [idle]): the whole groups of idle
  // devices that pods of several GPUs need, cluster-wide.
  std::vector<int32_t> nodes_by_idle;

  // The devices in whole groups of `size` idle devices on one node, over the cluster.
  int64_t idle_in_groups(int size) const {
    int64_t devices = 0;
    for (size_t idle = static_cast<size_t>(size); idle < nodes_by_idle.size(); ++idle)
      devices += int64_t{nodes_by_idle[idle]} *
                 static_cast<int64_t>(idle / static_cast<size_t>(size) * static_cast<size_t>(size));
    return devices;
  }
  // Counts a GPU node with `idle` idle devices in (`change` 1) or out (-1).
  void count_idle(int idle, int32_t change) {
    const auto at = static_cast<size_t>(idle);
    if (at >= nodes_by_idle.size()) nodes_by_idle.resize(at + 1, 0);
    nodes_by_idle[at] += change;
  }
  // Counts a GPU node whose idle devices went from `was` to `now`.
  void move_idle(int was, int now) {
    count_idle(was, -1);
    count_idle(now, 1);
  }

  // Whether a workload asking `cpu_per_gpu_milli` of CPU per milli-GPU, filling the cluster's GPUs,
  // asks for no more than its CPU: where CPU runs out first, it decides which pods fail.
  bool gpus_run_out_first(double cpu_per_gpu_milli) const {
    return cpu_per_gpu_milli * static_cast<double>(gpu_capacity_milli()) <= static_cast<double>(cpu_capacity_milli);
  }
  // The CPU such a workload asks for, filling the cluster's GPUs, as a share of the cluster's CPU
  // (the free function below).
  double cpu_asked_share(double cpu_per_gpu_milli) const {
    return tessera::cpu_asked_share(cpu_per_gpu_milli, gpu_capacity_milli(), cpu_capacity_milli);
  }
  // All the cluster's GPUs.
  int64_t gpu_capacity_milli() const {
    int64_t gpu_capacity = 0;
    for (int64_t milli : capacity_milli) gpu_capacity += milli;
    return gpu_capacity;
  }

  // The model's devices with exactly `free_milli` free.
  int32_t partial_count(GpuModelId model, int free_milli) const {
    return partial_between(model, free_milli, free_milli + 1);
  }
  // The model's devices with from `low` to below `high` milli free.
  int32_t partial_between(GpuModelId model, int low, int high) const {
    return partial_below(model, high) - partial_below(model, low);
  }
  // Counts a device of the model whose used share went from `was` to `now` milli.
  void move_partial(GpuModelId model, int was_used_milli, int now_used_milli) {
    add_partial(model, kMilliPerGpu - was_used_milli, -1);
    add_partial(model, kMilliPerGpu - now_used_milli, 1);
  }

 private:
  // The model's devices with 0 < free < `free_milli`.
  int32_t partial_below(GpuModelId model, int free_milli) const {
    const size_t base = static_cast<size_t>(model) * kMilliPerGpu;
    if (base >= partial_tree.size()) return 0;
    int32_t count = 0;
    for (int i = std::min(free_milli - 1, kMilliPerGpu - 1); i > 0; i -= i & -i) {
      count += partial_tree[base + static_cast<size_t>(i)];
    }
    return count;
  }
  void add_partial(GpuModelId model, int free_milli, int32_t change) {
    if (free_milli <= 0 || free_milli >= kMilliPerGpu) return;
    const size_t base = static_cast<size_t>(model) * kMilliPerGpu;
    if (base >= partial_tree.size()) partial_tree.resize(base + kMilliPerGpu, 0);
    for (int i = free_milli; i < kMilliPerGpu; i += i & -i) partial_tree[base + static_cast<size_t>(i)] += change;
  }
};

}  // namespace tessera
