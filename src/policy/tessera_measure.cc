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
  // R and S: every free GPU is lost to a type that no longer fits the CPU or memory.
  if (!type.request.fits_in(free)) return type.popularity * 2 * static_cast<double>(free_total);
  // What pods of the type alone could fill (S = free - usable): at most `capacity` by their GPUs,
  // fewer where CPU or memory runs out first (checked by multiplying, as dividing for every
  // type would cost more than the rest); nothing where no pod of it fits the devices, or it
  // asks for no portion of a device (it fills none of them).
  int64_t usable = 0;
  if (capacity >= 0) {
    const int64_t pods =
        type.request.cpu_milli * capacity <= free.cpu_milli && type.request.memory_bytes * capacity <= free.memory_bytes
            ? capacity
            : std::min(capacity, pods_that_fit(free, type.request));
    usable = pods * unit;
  }
  return type.popularity * static_cast<double>(free_total - std::min(usable, free_total));
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
  }
}

TesseraMeasure::Summary TesseraMeasure::summarize(const NodeSpec& node, const NodeState& state) {
  Summary summary;
  summary.free = state.free;
  summary.count = node.gpu_count();
  for (int i = 0; i < summary.count; ++i) summary.free_ascending[static_cast<size_t>(i)] = state.gpu_free_milli(i);
  std::sort(summary.free_ascending.begin(), summary.free_ascending.begin() + summary.count);
  count_devices(summary);
  return summary;
}

TesseraMeasure::Summary TesseraMeasure::summarize_sorted(const NodeSpec& node, const NodeState& state,
                                                         std::span<const int16_t> used_ascending, const PodSpec& pod,
                                                         int device) {
  Summary summary;
  summary.free = state.free - pod.request;
  summary.count = static_cast<int>(used_ascending.size());
  const auto free = summary.free_ascending.begin();
  const auto end = free + summary.count;
  std::transform(used_ascending.rbegin(), used_ascending.rend(), free,
                 [](int16_t used) { return kMilliPerGpu - used; });
  if (pod.gpu.kind == GpuRequest::Kind::kWhole) {
    // Its devices are idle ones, the last in the order; they go first with nothing free.
    int taken = 0;
    while (taken < pod.gpu.whole_gpus && taken < summary.count && *(end - 1 - taken) == kMilliPerGpu) ++taken;
    std::move_backward(free, end - taken, end);
    std::fill(free, free + taken, 0);
  } else if (pod.gpu.is_fractional() && device >= 0) {
    // One device with this much free has less: it moves down to its place in the order.
    const int was = state.gpu_free_milli(device);
    const int now = was - pod.gpu.milli_on_device(node.gpus[static_cast<size_t>(device)].memory_bytes);
    auto at = std::lower_bound(free, end, was);
    for (; at != free && *(at - 1) > now; --at) *at = *(at - 1);
    *at = now;
  }
  count_devices(summary);
  return summary;
}

void TesseraMeasure::count_devices(Summary& summary) {
  for (int i = 0; i < summary.count; ++i) {
    const int free = summary.free_ascending[static_cast<size_t>(i)];
    summary.idle += free == kMilliPerGpu ? 1 : 0;
    summary.free_total += free;
  }
  summary.max_free = summary.count > 0 ? summary.free_ascending[static_cast<size_t>(summary.count - 1)] : 0;
  while (summary.partial_begin < summary.count &&
         summary.free_ascending[static_cast<size_t>(summary.partial_begin)] == 0) {
    ++summary.partial_begin;
  }
  summary.partial_end = summary.count - summary.idle;
}

double TesseraMeasure::unusable_capacity(const NodeSpec& node, const NodeState& state) const {
  if (node.gpus.empty()) return 0;
  if (!uniform_devices_) return stranded_behind_resources(state, mix_) + expected_stranded_capacity(node, state, mix_);
  return unusable_capacity(summarize(node, state));
}

double TesseraMeasure::unusable_capacity_after(const NodeSpec& node, const NodeState& state, const PodSpec& pod,
                                               int device) const {
  if (node.gpus.empty()) return 0;
  if (!uniform_devices_) return unusable_capacity(node, state_after(node, state, pod, device));
  // Sorted here, so that the pod is placed in the summary in one way only (summarize_sorted).
  std::array<int16_t, kMaxUniformDevices> used_ascending;  // a node of like devices has at most this many
  const auto used_end = std::copy(state.gpu_used_milli.begin(), state.gpu_used_milli.end(), used_ascending.begin());
  std::sort(used_ascending.begin(), used_end);
  return unusable_capacity_after(node, state, std::span<const int16_t>(used_ascending.begin(), used_end), pod, device);
}

double TesseraMeasure::unusable_capacity_after(const NodeSpec& node, const NodeState& state,
                                               std::span<const int16_t> used_ascending, const PodSpec& pod,
                                               int device) const {
  if (node.gpus.empty()) return 0;
  if (!uniform_devices_) return unusable_capacity(node, state_after(node, state, pod, device));
  return unusable_capacity(summarize_sorted(node, state, used_ascending, pod, device));
}

int64_t TesseraMeasure::gpu_capacity(const GpuNeed& need, const Summary& summary) {
  if (need.need <= 0) return -1;
  if (need.whole_gpus > 0) {
    if (summary.idle < need.whole_gpus) return -1;
    return need.whole_gpus == 1 ? summary.idle : summary.idle / need.whole_gpus;
  }
  if (summary.max_free < need.need) return -1;
  int64_t slots = int64_t{summary.idle} * need.per_idle_device;
  // Largest first: the devices with less free than the need hold none.
  for (int i = summary.partial_end - 1; i >= summary.partial_begin; --i) {
    const int free = summary.free_ascending[static_cast<size_t>(i)];
    if (free < need.need) break;
    slots += free / need.need;
  }
  return slots;
}

double TesseraMeasure::unusable_capacity(const Summary& summary) const {
  if (summary.free_total == 0) return 0;
  double expected = 0;
  for (size_t need = 0; need < gpu_needs_.size(); ++need)
    expected += need_unusable(need, gpu_capacity(gpu_needs_[need], summary), summary.free, summary.free_total);
  return expected;
}

TesseraMeasure::GroupParts TesseraMeasure::group_parts(const NodeState& state) const {
  GroupParts parts;
  if (!uniform_devices_ || group_needs_.empty()) return parts;
  // A type of several whole GPUs reads only the idle devices, the free total and the free CPU
  // and memory: no summary of the devices' free shares is needed.
  parts.idle = state.idle_devices();
  parts.free_total = state.gpu_free_total();
  for (size_t i = 0; i < group_needs_.size(); ++i) {
    const int size = gpu_needs_[group_needs_[i].need].whole_gpus;
    parts.part[i] = parts.free_total == 0
                        ? 0
                        : need_unusable(group_needs_[i].need, parts.idle >= size ? parts.idle / size : -1, state.free,
                                        parts.free_total);
  }
  return parts;
}

TesseraMeasure::GroupGrowth TesseraMeasure::group_growth(const NodeSpec& node, const NodeState& state,
                                                         const PodSpec& pod, int device,
                                                         const GroupParts& before) const {
  GroupGrowth growth{};
  if (!uniform_devices_ || group_needs_.empty()) return growth;
  int idle_after = before.idle;
  int64_t free_total_after = before.free_total;
  if (pod.gpu.kind == GpuRequest::Kind::kWhole) {
    idle_after -= pod.gpu.whole_gpus;
    free_total_after -= int64_t{pod.gpu.whole_gpus} * kMilliPerGpu;
  } else if (pod.gpu.is_fractional() && device >= 0) {
    idle_after -= state.device_is_idle(device) ? 1 : 0;
    free_total_after -= pod.gpu.milli_on_device(node.gpus[static_cast<size_t>(device)].memory_bytes);
  }
  const Resources free_after = state.free - pod.request;
  for (size_t i = 0; i < group_needs_.size(); ++i) {
    const GroupNeed& group = group_needs_[i];
    const int size = gpu_needs_[group.need].whole_gpus;
    const double now = free_total_after == 0 ? 0
                                             : need_unusable(group.need, idle_after >= size ? idle_after / size : -1,
                                                             free_after, free_total_after);
    growth[group.group] += now - before.part[i];
  }
  return growth;
}

}  // namespace tessera
