#include "policy/tessera_measure.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "policy/device_choice.h"
#include "policy/usable_capacity.h"

namespace tessera {

double stranded_behind_resources(const NodeState& state, const WorkloadMix& mix) {
  const auto free_total = static_cast<double>(state.gpu_free_total());
  double expected = 0;
  for (const PodType& type : mix.types()) {
    if (!type.request.fits_in(state.free)) expected += type.popularity * free_total;
  }
  return expected;
}

inline double TesseraMeasure::type_unusable(const CompactType& type, int64_t unit, int64_t capacity,
                                            const Resources& free, int64_t free_total) {
  // What pods of the type alone could fill (S = free - usable): `capacity` by their GPUs where
  // the free CPU and memory hold as many (checked by multiplying, as dividing for every type
  // would cost more than the rest; then one pod fits too), fewer where they run out first.
  int64_t pods = capacity;
  if (type.request.cpu_milli * capacity > free.cpu_milli || type.request.memory_bytes * capacity > free.memory_bytes) {
    // R and S: every free GPU is lost to a type that no longer fits the CPU or memory.
    if (!type.request.fits_in(free)) return type.popularity * 2 * static_cast<double>(free_total);
    pods = std::min(capacity, pods_that_fit(free, type.request));
  }
  return type.popularity * static_cast<double>(free_total - std::min(pods * unit, free_total));
}

inline double TesseraMeasure::need_unusable(size_t need, int64_t capacity, const Resources& free,
                                            int64_t free_total) const {
  const NeedTypes& alike = need_types_[need];
  // Every type of the need fits the free CPU and memory for as many pods as the devices hold (for
  // one where they hold none), or none fits it at all: each then loses the same GPUs.
  const int64_t pods = std::max<int64_t>(capacity, 1);
  if (alike.largest.cpu_milli * pods <= free.cpu_milli && alike.largest.memory_bytes * pods <= free.memory_bytes) {
    const int64_t usable = capacity >= 0 ? capacity * alike.unit : 0;
    return alike.popularity * static_cast<double>(free_total - std::min(usable, free_total));
  }
  if (!alike.least.fits_in(free)) return alike.popularity * 2 * static_cast<double>(free_total);
  double expected = 0;
  if (capacity < 0) {  // no pod fits the devices: a type loses every free GPU, twice where it fits no CPU or memory
    for (const CompactType& type : alike.types) {
      expected += type.request.fits_in(free) ? type.popularity * static_cast<double>(free_total)
                                             : type.popularity * 2 * static_cast<double>(free_total);
    }
    return expected;
  }
  for (const CompactType& type : alike.types) expected += type_unusable(type, alike.unit, capacity, free, free_total);
  return expected;
}

bool TesseraMeasure::could_ever_run(const NodeSpec& node, const PodType& type) {
  if (!type.request.fits_in(node.allocatable)) return false;
  if (!type.gpu.wants_gpu()) return true;
  int allowed = 0;
  bool one_fits = false;
  for (const GpuDevice& device : node.gpus) {
    if (!type.allowed_models.allows(device.model)) continue;
    ++allowed;
    if (type.gpu.kind != GpuRequest::Kind::kWhole && type.gpu.milli_on_device(device.memory_bytes) <= kMilliPerGpu)
      one_fits = true;
  }
  return type.gpu.kind == GpuRequest::Kind::kWhole ? allowed >= type.gpu.whole_gpus : one_fits;
}

std::vector<int> TesseraMeasure::group_sizes(const WorkloadMix& mix) {
  std::map<int, double> demand;  // GPUs asked per pod of the mix, by size
  for (const PodType& type : mix.types()) {
    if (type.gpu.kind == GpuRequest::Kind::kWhole && type.gpu.whole_gpus > 1)
      demand[type.gpu.whole_gpus] += type.popularity * type.gpu.whole_gpus;
  }
  std::vector<std::pair<int, double>> by_demand(demand.begin(), demand.end());
  std::stable_sort(by_demand.begin(), by_demand.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (by_demand.size() > kMaxGroupSizes) by_demand.resize(kMaxGroupSizes);
  std::vector<int> sizes;
  for (const auto& [size, asked] : by_demand) sizes.push_back(size);
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

TesseraMeasure::TesseraMeasure(const NodeSpec& node, const WorkloadMix& mix) {
  const std::vector<int> sizes = group_sizes(mix);
  std::vector<PodType> types;
  double kept = 0;
  for (const PodType& type : mix.types()) {
    if (!could_ever_run(node, type)) continue;
    kept += type.popularity;
    // A CPU-only type keeps its share of the node's pods but counts nothing (see the header).
    if (type.gpu.wants_gpu()) types.push_back(type);
  }
  for (PodType& type : types) type.popularity /= kept;
  mix_ = WorkloadMix(std::move(types));

  uniform_devices_ = !node.gpus.empty() && node.gpus.size() <= kMaxUniformDevices && node.devices_alike();
  if (!uniform_devices_) return;
  for (const PodType& type : mix_.types()) {
    GpuNeed need;
    if (type.gpu.kind == GpuRequest::Kind::kWhole) {
      need.whole_gpus = type.gpu.whole_gpus;
      need.need = kMilliPerGpu;
    } else {
      need.need = type.gpu.milli_on_device(node.gpus.front().memory_bytes);
      need.per_idle_device = need.need > 0 ? kMilliPerGpu / need.need : 0;
    }
    auto known = std::find(gpu_needs_.begin(), gpu_needs_.end(), need);
    if (known == gpu_needs_.end()) known = gpu_needs_.insert(gpu_needs_.end(), need);
    const auto need_index = static_cast<size_t>(known - gpu_needs_.begin());
    const int64_t unit = need.whole_gpus > 0 ? int64_t{need.whole_gpus} * kMilliPerGpu : need.need;
    if (need_index == need_types_.size()) {  // a need first asked
      need_types_.push_back(NeedTypes{{}, 0, {}, type.request, unit});
      const auto size = std::find(sizes.begin(), sizes.end(), need.whole_gpus);
      if (need.whole_gpus > 1 && size != sizes.end())
        group_needs_.push_back({need_index, static_cast<size_t>(size - sizes.begin())});
    }
    NeedTypes& alike = need_types_[need_index];
    alike.types.push_back({.request = type.request, .popularity = type.popularity});
    alike.popularity += type.popularity;
    alike.largest.cpu_milli = std::max(alike.largest.cpu_milli, type.request.cpu_milli);
    alike.largest.memory_bytes = std::max(alike.largest.memory_bytes, type.request.memory_bytes);
    alike.least.cpu_milli = std::min(alike.least.cpu_milli, type.request.cpu_milli);
    alike.least.memory_bytes = std::min(alike.least.memory_bytes, type.request.memory_bytes);
  }
  // Past this many distinct needs the counts are not kept per state (a mix of the trace has a few
  // dozen); the general definitions serve such a node instead.
  if (gpu_needs_.size() > kMaxGpuNeeds) {
    uniform_devices_ = false;
    gpu_needs_.clear();
    need_types_.clear();
    group_needs_.clear();
    return;
  }
  for (size_t i = 0; i < gpu_needs_.size(); ++i) {
    const GpuNeed& need = gpu_needs_[i];
    if (need.whole_gpus > 0) {
      whole_needs_.push_back({i, need.whole_gpus});
    } else if (need.need > 0) {
      portion_needs_.push_back({i, need.need, need.per_idle_device});
    }
  }
}

TesseraMeasure::DeviceCounts TesseraMeasure::count_devices(const NodeSpec& node, const NodeState& state,
                                                           std::span<int32_t> slots) const {
  DeviceCounts counts;
  if (!uniform_devices_) return counts;         // the general definitions read no counts
  std::array<int, kMaxUniformDevices> partial;  // the free milli of devices in use but not full
  size_t partials = 0;
  for (int device = 0; device < node.gpu_count(); ++device) {  // at most kMaxUniformDevices, as alike
    const int free = state.gpu_free_milli(device);
    counts.free_total += free;
    if (free == kMilliPerGpu) {
      ++counts.idle;
    } else if (free > 0) {
      partial[partials++] = free;
    }
  }
  std::fill(slots.begin(), slots.end(), 0);  // a need that asks for no portion of a device holds none
  for (const WholeNeed& whole : whole_needs_) slots[whole.need] = counts.idle / whole.gpus;
  for (const PortionNeed& portion : portion_needs_) {
    int32_t held = counts.idle * portion.per_idle_device;
    for (size_t p = 0; p < partials; ++p) held += partial[p] / portion.milli;
    slots[portion.need] = held;
  }
  return counts;
}

double TesseraMeasure::unusable_capacity(const NodeSpec& node, const NodeState& state) const {
  if (node.gpus.empty()) return 0;
  if (!uniform_devices_) return stranded_behind_resources(state, mix_) + expected_stranded_capacity(node, state, mix_);
  std::array<int32_t, kMaxGpuNeeds> slots;
  const std::span<int32_t> held(slots.data(), gpu_needs_.size());
  NeedParts parts;
  return unusable_capacity(held, state.free, count_devices(node, state, held).free_total, parts);
}

double TesseraMeasure::unusable_capacity_after(const NodeSpec& node, const NodeState& state, const PodSpec& pod,
                                               int device) const {
  if (node.gpus.empty()) return 0;
  if (!uniform_devices_) return unusable_capacity(node, state_after(node, state, pod, device));
  std::array<int32_t, kMaxGpuNeeds> slots;
  const std::span<int32_t> held(slots.data(), gpu_needs_.size());
  const DeviceCounts counts = count_devices(node, state, held);
  NeedParts parts;
  return unusable_capacity_after(node, state, counts, held, pod, device, parts);
}

double TesseraMeasure::unusable_capacity(const NodeSpec& node, const NodeState& state, const DeviceCounts& counts,
                                         std::span<const int32_t> slots, NeedParts& parts) const {
  if (node.gpus.empty()) return 0;
  if (!uniform_devices_) return unusable_capacity(node, state);
  return unusable_capacity(slots, state.free, counts.free_total, parts);
}

double TesseraMeasure::unusable_capacity_after(const NodeSpec& node, const NodeState& state, const DeviceCounts& counts,
                                               std::span<const int32_t> slots, const PodSpec& pod, int device,
                                               NeedParts& parts) const {
  if (node.gpus.empty()) return 0;
  if (!uniform_devices_) return unusable_capacity(node, state_after(node, state, pod, device));
  const Resources free = state.free - pod.request;
  int idle = counts.idle;
  int64_t free_total = counts.free_total;
  int taken = 0;  // idle devices a whole-GPU pod takes (the idle ones, as pick_whole_devices does)
  int was = -1;   // a fraction's device: its free milli before and after
  int now = -1;
  if (pod.gpu.kind == GpuRequest::Kind::kWhole) {
    taken = std::min(pod.gpu.whole_gpus, idle);
    idle -= taken;
    free_total -= int64_t{taken} * kMilliPerGpu;
  } else if (pod.gpu.is_fractional() && device >= 0) {
    was = state.gpu_free_milli(device);
    now = was - pod.gpu.milli_on_device(node.gpus[static_cast<size_t>(device)].memory_bytes);
    idle -= was == kMilliPerGpu ? 1 : 0;
    free_total -= was - now;
  }
  // What the devices hold of each need after the placement: a pod that takes no device leaves
  // every count as it was, one of whole GPUs takes idle devices, a fraction one device's share.
  std::array<int32_t, kMaxGpuNeeds> moved;
  std::span<const int32_t> held = slots;
  if (taken > 0 || was >= 0) {
    std::copy(slots.begin(), slots.end(), moved.begin());
    if (taken > 0) {
      for (const PortionNeed& portion : portion_needs_) moved[portion.need] -= taken * portion.per_idle_device;
    } else {
      for (const PortionNeed& portion : portion_needs_)
        moved[portion.need] += now / portion.milli - was / portion.milli;
    }
    if (idle != counts.idle) {
      for (const WholeNeed& whole : whole_needs_) moved[whole.need] = idle / whole.gpus;
    }
    held = std::span<const int32_t>(moved.data(), slots.size());
  }
  return unusable_capacity(held, free, free_total, parts);
}

double TesseraMeasure::unusable_capacity(std::span<const int32_t> slots, const Resources& free, int64_t free_total,
                                         NeedParts& parts) const {
  if (free_total == 0) {
    std::fill_n(parts.begin(), gpu_needs_.size(), 0.0);
    return 0;
  }
  double expected = 0;
  for (size_t need = 0; need < gpu_needs_.size(); ++need) {
    parts[need] = need_unusable(need, slots[need] > 0 ? slots[need] : -1, free, free_total);
    expected += parts[need];
  }
  return expected;
}

TesseraMeasure::GroupParts TesseraMeasure::group_parts(const NeedParts& before) const {
  GroupParts parts;
  if (!uniform_devices_) return parts;
  for (size_t i = 0; i < group_needs_.size(); ++i) parts.part[i] = before[group_needs_[i].need];
  return parts;
}

TesseraMeasure::GroupGrowth TesseraMeasure::group_growth(const NeedParts& after, const GroupParts& before) const {
  GroupGrowth growth{};
  if (!uniform_devices_) return growth;
  for (size_t i = 0; i < group_needs_.size(); ++i)
    growth[group_needs_[i].group] += after[group_needs_[i].need] - before.part[i];
  return growth;
}

}  // namespace tessera
