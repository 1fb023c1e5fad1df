// The Alibaba 2023 trace files built into the binary, so `tessera sim` runs out of the box.
// Referred to on the command line and in scenarios as `builtin:NAME`, e.g. builtin:default,
// builtin:gpushare40, builtin:gpu_node.
#pragma once

#include <string_view>
#include <vector>

namespace tessera {

struct EmbeddedTrace {
  enum class Kind { kNodes, kPods };
  std::string_view name;       // "default", "gpushare40", "gpu_node", ...
  std::string_view file_name;  // "openb_pod_list_default.csv"
  Kind kind;
  std::string_view text;
};

const std::vector<EmbeddedTrace>& embedded_traces();
// By short name or file name; nullptr when there is none.
const EmbeddedTrace* find_embedded_trace(std::string_view name);

// The LLM inference requests `tessera sim --mode gpu-memory` models its pods' memory on: a sample of
// the Azure LLM inference trace 2023 (data/azure-llm-inference-2023/README.md).
std::string_view embedded_llm_requests();
inline constexpr std::string_view kEmbeddedLlmRequestsName = "builtin:azure-llm-conv-2023";

inline constexpr std::string_view kDefaultClusterTrace = "gpu_node";
inline constexpr std::string_view kDefaultWorkloadTrace = "default";

}  // namespace tessera
