#include "engine/pod_shapes.h"

#include <string_view>

namespace tessera {

namespace {

// The key is the fields' bytes, strings with their length first: no two shapes share one, and
// building it costs a few copies where formatting the numbers as text cost most of a placement
// search in a full cluster.
template <typename Value>
void append_bytes(std::string& key, Value value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void append_text(std::string& key, std::string_view text) {
  append_bytes(key, text.size());
  key.append(text);
}

}  // namespace

uint32_t PodShapes::intern(const PodSpec& pod) {
  key_.clear();
  append_bytes(key_, pod.request.cpu_milli);
  append_bytes(key_, pod.request.memory_bytes);
  append_bytes(key_, static_cast<int>(pod.gpu.kind));
  append_bytes(key_, pod.gpu.whole_gpus);
  append_bytes(key_, pod.gpu.portion_milli);
  append_bytes(key_, pod.gpu.memory_bytes);
  append_bytes(key_, pod.gpu.memory_limit_bytes);
  append_bytes(key_, pod.allowed_models.bits());
  append_bytes(key_, pod.node_selector.size());
  for (const auto& [label, value] : pod.node_selector) {
    append_text(key_, label);
    append_text(key_, value);
  }
  append_bytes(key_, pod.tolerations.size());
  for (const Toleration& toleration : pod.tolerations) {
    append_text(key_, toleration.key);
    append_bytes(key_, static_cast<int>(toleration.op));
    append_text(key_, toleration.value);
    append_bytes(key_, toleration.effect ? static_cast<int>(*toleration.effect) : -1);
  }
  if (auto known = ids_.find(key_); known != ids_.end()) return known->second;
  return ids_.emplace(key_, static_cast<uint32_t>(ids_.size())).first->second;
}

}  // namespace tessera
