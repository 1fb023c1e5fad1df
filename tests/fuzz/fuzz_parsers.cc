// libFuzzer harness for the Alibaba CSV readers, the scenario YAML reader and the quantity
// parsers. Not part of the CMake build. Build and run from the repository root:
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//       tests/fuzz/fuzz_parsers.cc src/sim/alibaba_trace.cc src/sim/scenario_yaml.cc src/policy/fair_share.cc \
//       -lcsv -lyaml-cpp -lfmt -o /tmp/fuzz_parsers
//   mkdir -p /tmp/fuzz_corpus && /tmp/fuzz_parsers -max_total_time=60 /tmp/fuzz_corpus
//
// (Debian: apt-get install clang libclang-rt-14-dev.) The first input byte picks the parser
// (mod 4): 0 node list, 1 pod list, 2 scenario YAML, 3 quantities; the rest is the text. To
// seed the corpus, write files holding that byte followed by a real input, e.g.
//   { printf '\0'; head -50 data/alibaba-gpu-v2023/openb_node_list_gpu_node.csv; } > /tmp/fuzz_corpus/nodes
//   { printf '\2'; awk '/^## A complete/{f=1} f&&p&&/^```$/{exit} f&&p; f&&/^```yaml/{p=1}' \
//       docs/scenario-format.md; } > /tmp/fuzz_corpus/yaml
//   for f in scenarios/*.yaml; do { printf '\2'; cat "$f"; } > "/tmp/fuzz_corpus/$(basename "$f")"; done
// (the documented example and the scenario library carry queues sections with quotas).
//
// Every result must be a value or an error whose message starts with the source name; anything
// else aborts, as does any exception (none may escape the parsers).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/alibaba_trace.h"
#include "sim/scenario_yaml.h"

namespace {

constexpr std::string_view kNodeCsv =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n0,64000,262144,2,P100\n"
    "n1,32000,131072,0,\n"
    "n2,96000,786432,8,V100M32\n";

constexpr std::string_view kPodCsv =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
    "p1,6000,12288,1,460,P100,LS,Running,427061,12902960,427061\n";

const tessera::ClusterSpec& small_cluster() {
  static const tessera::ClusterSpec cluster = *tessera::parse_alibaba_nodes(kNodeCsv, "nodes.csv");
  return cluster;
}

tessera::Result<std::string> resolve_small_traces(std::string_view reference) {
  if (reference == "nodes.csv") return std::string(kNodeCsv);
  if (reference == "pods.csv") return std::string(kPodCsv);
  return tessera::Error{std::string(reference) + ": cannot open file"};
}

template <typename T>
void check(const tessera::Result<T>& result, std::string_view source) {
  if (result.ok() || result.error().message.starts_with(source)) return;
  std::fprintf(stderr, "error message does not start with '%.*s': %s\n", static_cast<int>(source.size()), source.data(),
               result.error().message.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0:
      check(tessera::parse_alibaba_nodes(text, "nodes.csv"), "nodes.csv");
      break;
    case 1:
      check(tessera::parse_alibaba_pods(text, "pods.csv", small_cluster()), "pods.csv");
      break;
    case 2: {
      // With and without a cluster to resolve GPU model names against.
      check(tessera::parse_scenario_yaml(text, "fuzz.yaml", resolve_small_traces, nullptr), "fuzz.yaml");
      check(tessera::parse_scenario_yaml(text, "fuzz.yaml", resolve_small_traces, &small_cluster()), "fuzz.yaml");
      break;
    }
    default: {
      const std::optional<int64_t> cpu = tessera::parse_cpu_milli(text);
      const std::optional<int64_t> memory = tessera::parse_memory_bytes(text);
      if (cpu.value_or(0) < 0 || memory.value_or(0) < 0) std::abort();
      break;
    }
  }
  return 0;
}
