#include "scheduler/resource_meter.h"

#include <bit>

namespace tessera {

ResourceMeter::ResourceMeter(const ClusterSpec& cluster, const ResourceNames& resources)
    : cluster_(cluster), resource_count_(resources.size()) {
  gpu_ = resources.find(kGpuResource).value_or(0);
  cpu_ = resources.find(kCpuResource).value_or(1);
  memory_ = resources.find(kMemoryResource).value_or(2);
  model_resource_.assign(cluster.models.size(), -1);
  for (size_t model = 0; model < cluster.models.size(); ++model) {
    if (auto id = resources.find(gpu_model_resource(cluster.models.name(static_cast<GpuModelId>(model))))) {
      model_resource_[model] = static_cast<int>(*id);
    }
  }
  typical_device_memory_ = cluster.median_device_memory();
}

void ResourceMeter::add_common(const PodSpec& pod, std::span<double> total) const {
  total[cpu_] += static_cast<double>(pod.request.cpu_milli);
  total[memory_] += static_cast<double>(pod.request.memory_bytes);
}

void ResourceMeter::add_pending(const PodSpec& pod, std::span<double> total) const {
  add_common(pod, total);
  if (!pod.gpu.wants_gpu()) return;
  const double gpus = static_cast<double>(pod.gpu.pending_milli(typical_device_memory_)) / kMilliPerGpu;
  total[gpu_] += gpus;
  const uint64_t bits = pod.allowed_models.bits();
  if (std::popcount(bits) == 1) {
    const auto model = static_cast<size_t>(std::countr_zero(bits));
    if (model < model_resource_.size() && model_resource_[model] >= 0) {
      total[static_cast<size_t>(model_resource_[model])] += gpus;
    }
  }
}

void ResourceMeter::add_bound(const PodSpec& pod, const Binding& binding, std::span<double> total) const {
  add_common(pod, total);
  if (binding.devices.empty()) return;
  const double gpus = static_cast<double>(binding.gpu_milli()) / kMilliPerGpu;
  total[gpu_] += gpus;
  const NodeSpec& node = cluster_.nodes[static_cast<size_t>(binding.node)];
  const GpuModelId model = node.gpus[static_cast<size_t>(binding.devices.front())].model;
  if (model < model_resource_.size() && model_resource_[model] >= 0) {
    total[static_cast<size_t>(model_resource_[model])] += gpus;
  }
}

double ResourceMeter::limit_overcommit() const {
  double gpus = 0, limit_room = 0;
  for (const NodeSpec& node : cluster_.nodes) {
    if (!node.schedulable) continue;
    gpus += node.gpu_count();
    limit_room += node.gpu_count() * static_cast<double>(node.gpu_memory_overcommit_milli) / kMilliPerGpu;
  }
  return gpus > 0 ? limit_room / gpus : 1.0;
}

ResourceVector ResourceMeter::capacity() const {
  ResourceVector total(resource_count_, 0.0);
  for (const NodeSpec& node : cluster_.nodes) {
    if (!node.schedulable) continue;
    total[cpu_] += static_cast<double>(node.allocatable.cpu_milli);
    total[memory_] += static_cast<double>(node.allocatable.memory_bytes);
    total[gpu_] += node.gpu_count();
    for (const GpuDevice& device : node.gpus) {
      if (device.model < model_resource_.size() && model_resource_[device.model] >= 0) {
        total[static_cast<size_t>(model_resource_[device.model])] += 1;
      }
    }
  }
  return total;
}

ResourceVector ResourceMeter::pending(const PodSpec& pod) const {
  ResourceVector total(resource_count_, 0.0);
  add_pending(pod, total);
  return total;
}

ResourceVector ResourceMeter::bound(const PodSpec& pod, const Binding& binding) const {
  ResourceVector total(resource_count_, 0.0);
  add_bound(pod, binding, total);
  return total;
}

void ResourceMeter::key_resources(std::span<const double> request, std::vector<ResourceId>& keys) const {
  keys.clear();
  if (resource_at(request, gpu_) > 0) {
    keys.push_back(gpu_);
    for (int id : model_resource_) {
      if (id >= 0 && resource_at(request, static_cast<size_t>(id)) > 0) keys.push_back(static_cast<size_t>(id));
    }
  } else {
    keys.push_back(cpu_);
    keys.push_back(memory_);
  }
}

}  // namespace tessera
