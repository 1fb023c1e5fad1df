#include "sim/embedded_traces.h"

extern "C" {
extern const char tessera_trace_node_list_gpu_node_begin[];
extern const char tessera_trace_node_list_gpu_node_end[];
extern const char tessera_trace_node_list_all_node_begin[];
extern const char tessera_trace_node_list_all_node_end[];
extern const char tessera_trace_pod_list_default_begin[];
extern const char tessera_trace_pod_list_default_end[];
extern const char tessera_trace_pod_list_gpushare20_begin[];
extern const char tessera_trace_pod_list_gpushare20_end[];
extern const char tessera_trace_pod_list_gpushare40_begin[];
extern const char tessera_trace_pod_list_gpushare40_end[];
extern const char tessera_trace_pod_list_gpushare60_begin[];
extern const char tessera_trace_pod_list_gpushare60_end[];
extern const char tessera_trace_pod_list_gpushare80_begin[];
extern const char tessera_trace_pod_list_gpushare80_end[];
extern const char tessera_trace_pod_list_gpushare100_begin[];
extern const char tessera_trace_pod_list_gpushare100_end[];
extern const char tessera_trace_pod_list_cpu0_begin[];
extern const char tessera_trace_pod_list_cpu0_end[];
extern const char tessera_trace_pod_list_cpu050_begin[];
extern const char tessera_trace_pod_list_cpu050_end[];
extern const char tessera_trace_pod_list_cpu100_begin[];
extern const char tessera_trace_pod_list_cpu100_end[];
extern const char tessera_trace_pod_list_cpu200_begin[];
extern const char tessera_trace_pod_list_cpu200_end[];
extern const char tessera_trace_pod_list_cpu250_begin[];
extern const char tessera_trace_pod_list_cpu250_end[];
extern const char tessera_trace_pod_list_cpu300_begin[];
extern const char tessera_trace_pod_list_cpu300_end[];
extern const char tessera_llm_requests_conv_sample_begin[];
extern const char tessera_llm_requests_conv_sample_end[];
}

namespace tessera {

const std::vector<EmbeddedTrace>& embedded_traces() {
  static const std::vector<EmbeddedTrace> traces = {
      {"gpu_node", "openb_node_list_gpu_node.csv", EmbeddedTrace::Kind::kNodes,
       std::string_view(
           tessera_trace_node_list_gpu_node_begin,
           static_cast<size_t>(tessera_trace_node_list_gpu_node_end - tessera_trace_node_list_gpu_node_begin))},
      {"all_node", "openb_node_list_all_node.csv", EmbeddedTrace::Kind::kNodes,
       std::string_view(
           tessera_trace_node_list_all_node_begin,
           static_cast<size_t>(tessera_trace_node_list_all_node_end - tessera_trace_node_list_all_node_begin))},
      {"default", "openb_pod_list_default.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(
           tessera_trace_pod_list_default_begin,
           static_cast<size_t>(tessera_trace_pod_list_default_end - tessera_trace_pod_list_default_begin))},
      {"gpushare20", "openb_pod_list_gpushare20.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(
           tessera_trace_pod_list_gpushare20_begin,
           static_cast<size_t>(tessera_trace_pod_list_gpushare20_end - tessera_trace_pod_list_gpushare20_begin))},
      {"gpushare40", "openb_pod_list_gpushare40.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(
           tessera_trace_pod_list_gpushare40_begin,
           static_cast<size_t>(tessera_trace_pod_list_gpushare40_end - tessera_trace_pod_list_gpushare40_begin))},
      {"gpushare60", "openb_pod_list_gpushare60.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(
           tessera_trace_pod_list_gpushare60_begin,
           static_cast<size_t>(tessera_trace_pod_list_gpushare60_end - tessera_trace_pod_list_gpushare60_begin))},
      {"gpushare80", "openb_pod_list_gpushare80.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(
           tessera_trace_pod_list_gpushare80_begin,
           static_cast<size_t>(tessera_trace_pod_list_gpushare80_end - tessera_trace_pod_list_gpushare80_begin))},
      {"gpushare100", "openb_pod_list_gpushare100.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(
           tessera_trace_pod_list_gpushare100_begin,
           static_cast<size_t>(tessera_trace_pod_list_gpushare100_end - tessera_trace_pod_list_gpushare100_begin))},
      {"cpu0", "openb_pod_list_cpu0.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(tessera_trace_pod_list_cpu0_begin,
                        static_cast<size_t>(tessera_trace_pod_list_cpu0_end - tessera_trace_pod_list_cpu0_begin))},
      {"cpu050", "openb_pod_list_cpu050.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(tessera_trace_pod_list_cpu050_begin,
                        static_cast<size_t>(tessera_trace_pod_list_cpu050_end - tessera_trace_pod_list_cpu050_begin))},
      {"cpu100", "openb_pod_list_cpu100.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(tessera_trace_pod_list_cpu100_begin,
                        static_cast<size_t>(tessera_trace_pod_list_cpu100_end - tessera_trace_pod_list_cpu100_begin))},
      {"cpu200", "openb_pod_list_cpu200.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(tessera_trace_pod_list_cpu200_begin,
                        static_cast<size_t>(tessera_trace_pod_list_cpu200_end - tessera_trace_pod_list_cpu200_begin))},
      {"cpu250", "openb_pod_list_cpu250.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(tessera_trace_pod_list_cpu250_begin,
                        static_cast<size_t>(tessera_trace_pod_list_cpu250_end - tessera_trace_pod_list_cpu250_begin))},
      {"cpu300", "openb_pod_list_cpu300.csv", EmbeddedTrace::Kind::kPods,
       std::string_view(tessera_trace_pod_list_cpu300_begin,
                        static_cast<size_t>(tessera_trace_pod_list_cpu300_end - tessera_trace_pod_list_cpu300_begin))},
  };
  return traces;
}

const EmbeddedTrace* find_embedded_trace(std::string_view name) {
  for (const EmbeddedTrace& trace : embedded_traces()) {
    if (trace.name == name || trace.file_name == name) return &trace;
  }
  return nullptr;
}

std::string_view embedded_llm_requests() {
  return {tessera_llm_requests_conv_sample_begin,
          static_cast<size_t>(tessera_llm_requests_conv_sample_end - tessera_llm_requests_conv_sample_begin)};
}

}  // namespace tessera
