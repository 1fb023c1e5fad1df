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
            pod.gpu.portion_milli, pod.gpu.memory_bytes, pod.allowed_models.bits()};
    auto [it, inserted] = index.try_emplace(key, mix.types_.size());
    if (inserted) {
      mix.types_.push_back(PodType{pod.request, pod.gpu, pod.allowed_models, 0});
      counts.push_back(0);
    }
    counts[it->second] += 1;
  }
  for (size_t i = 0; i < mix.types_.size(); ++i) mix.types_[i].popularity = counts[i] / static_cast<double>(pods.size());
  return mix;
}

}  // namespace tessera
