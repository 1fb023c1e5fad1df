#include "engine/pod_shapes.h"

#include <fmt/format.h>

namespace tessera {

uint32_t PodShapes::intern(const PodSpec& pod) {
  std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", pod.request.cpu_milli, pod.request.memory_bytes,
                                static_cast<int>(pod.gpu.kind), pod.gpu.whole_gpus, pod.gpu.portion_milli,
                                pod.gpu.memory_bytes, pod.allowed_models.bits());
  for (const auto& [label, value] : pod.node_selector) key += fmt::format("|s:{}={}", label, value);
  for (const Toleration& toleration : pod.tolerations) {
    key += fmt::format("|t:{}:{}:{}:{}", toleration.key, static_cast<int>(toleration.op), toleration.value,
                       toleration.effect ? static_cast<int>(*toleration.effect) : -1);
  }
  auto [it, inserted] = ids_.try_emplace(std::move(key), static_cast<uint32_t>(ids_.size()));
  return it->second;
}

}  // namespace tessera
