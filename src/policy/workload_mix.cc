#include "policy/workload_mix.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tessera {

WorkloadMix WorkloadMix::from_pods(std::span<const PodSpec> pods) {
  using Key = std::tuple<int64_t, int64_t, int, int, int, int64_t, uint64_t>;
  std::map<Key, size_t> index;
  WorkloadMix mix;
  std::vector<double> counts;
  for (const PodSpec& pod : pods) {
    Key key{pod.request.cpu_milli, pod.request.memory_bytes, static_cast<int>(pod.gpu.kind), pod.gpu.whole_gpus,
            pod.gpu.portion_milli, pod.gpu.memory_bytes,     pod.allowed_models.bits()};
    auto [it, inserted] = index.try_emplace(key, mix.types_.size());
    if (inserted) {
      mix.types_.push_back(PodType{pod.request, pod.gpu, pod.allowed_models, 0});
      counts.push_back(0);
    }
    counts[it->second] += 1;
  }
  for (size_t i = 0; i < mix.types_.size(); ++i)
    mix.types_[i].popularity = counts[i] / static_cast<double>(pods.size());
  return mix;
}

double WorkloadMix::cpu_per_gpu_milli() const {
  double cpu_milli = 0, gpu_milli = 0;
  for (const PodType& type : types_) {
    cpu_milli += type.popularity * static_cast<double>(type.request.cpu_milli);
    gpu_milli += type.popularity * static_cast<double>(type.gpu.nominal_milli());
  }
  return gpu_milli > 0 ? cpu_milli / gpu_milli : 0;
}

WorkloadMix WorkloadMix::typical(double coverage) const {
  using Key = std::tuple<int64_t, int, int, int, int64_t, uint64_t>;
  std::map<Key, size_t> index;
  std::vector<PodType> merged;
  for (PodType type : types_) {
    type.request.memory_bytes = 0;
    Key key{type.request.cpu_milli, static_cast<int>(type.gpu.kind), type.gpu.whole_gpus,
            type.gpu.portion_milli, type.gpu.memory_bytes,           type.allowed_models.bits()};
    auto [it, inserted] = index.try_emplace(key, merged.size());
    if (inserted) {
      merged.push_back(type);
    } else {
      merged[it->second].popularity += type.popularity;
    }
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const PodType& a, const PodType& b) { return a.popularity > b.popularity; });
  std::vector<PodType> kept;
  double covered = 0;
  for (const PodType& type : merged) {
    if (covered >= coverage) break;
    kept.push_back(type);
    covered += type.popularity;
  }
  for (PodType& type : kept) type.popularity /= covered;
  return WorkloadMix(std::move(kept));
}

}  // namespace tessera
