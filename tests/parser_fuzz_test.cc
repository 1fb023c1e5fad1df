// Deterministic randomized robustness test for the trace and scenario readers: valid inputs are
// mutated (byte flips, truncation, inserted separators, huge numbers...) and every result must be
// either a value or an error whose message starts with the source name. Nothing may throw or
// crash. tests/fuzz/fuzz_parsers.cc is the coverage-guided (libFuzzer) version of the same.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <string_view>

#include "sim/alibaba_trace.h"
#include "sim/scenario_yaml.h"

namespace tessera {
namespace {

constexpr std::string_view kNodeCsv =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n0,64000,262144,2,P100\n"
    "n1,32000,131072,0,\n"
    "\"n,2\",96000,786432,8,V100M32\n"
    "n3,8000,1024,4,T4\n";

constexpr std::string_view kPodCsv =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
    "p1,6000,12288,1,460,T4,LS,Running,427061,12902960,427061\n"
    "p2,88000,327680,8,1000,V100M32|P100,Burstable,Succeeded,9437497,10769854,9437497\n"
    "p3,4000,15258,0,0,,BE,Running,9679175,9973826,\n";

constexpr std::string_view kScenarioYaml = R"(name: fuzz
cluster:
  nodes:
    - name: a100
      count: 2
      cpu: 64
      memory: 512Gi
      gpus: 8
      gpu_model: A100
      gpu_memory: 80Gi
      labels: {rack: r1}
      taints: [{key: dedicated, value: infer, effect: NoSchedule}]
queues:
  - name: org
    priority: 1
    preempt_min_runtime: 600
    quota:
      gpu: {deserved: 12, weight: 2, limit: 16}
      cpu: {deserved: 64, limit: 128}
      memory: {deserved: 512Gi}
  - name: team-a
    parent: org
    reclaim_min_runtime: 60
    quota: {gpu: {deserved: 8}, gpu/A100: {deserved: 4, weight: 0, limit: 4}}
  - {name: team-b, parent: org, quota: {cpu: {deserved: 500m}}}
workloads:
  - name: train
    count: 2
    queue: team-a
    kind: train
    priority: 1
    preemptible: true
    arrival: 0
    arrival_interval: 30
    duration: 3600
    checkpoint_interval: 600
    time_limit: 7200
    pods: 4
    min_member: 2
    pod:
      cpu: 8
      memory: 64Gi
      gpus: 1
      gpu_models: [A100]
      node_selector: {rack: r1}
      tolerations: [{key: dedicated, operator: Equal, value: infer, effect: NoSchedule}]
  - name: share
    queue: team-b
    kind: interactive
    arrival: 1.5
    pod: {cpu: 500m, memory: 1Gi, gpu_portion: 0.5}
)";

constexpr std::string_view kReferencingYaml =
    "cluster:\n  alibaba_nodes: nodes.csv\nworkloads:\n  alibaba_pods: pods.csv\n";

constexpr std::array<std::string_view, 30> kInsertions = {",",
                                                          "\"",
                                                          "\n",
                                                          ":",
                                                          "[",
                                                          "]",
                                                          "{",
                                                          "}",
                                                          "-",
                                                          " ",
                                                          "\t",
                                                          "\r\n",
                                                          "#",
                                                          "'",
                                                          "|",
                                                          "&a ",
                                                          "*a",
                                                          "? ",
                                                          "99999999999999999999999",
                                                          "-1",
                                                          "0",
                                                          "1e308",
                                                          "nan",
                                                          "9223372036854775807",
                                                          "1.5",
                                                          "Ei",
                                                          "m",
                                                          "\"\"",
                                                          "- ",
                                                          std::string_view("\0", 1)};

class Mutator {
 public:
  explicit Mutator(uint32_t seed) : random_(seed) {}

  std::string mutate(std::string_view original) {
    std::string text(original);
    const int rounds = 1 + below(4);
    for (int i = 0; i < rounds; ++i) mutate_once(text);
    return text;
  }

 private:
  int below(size_t bound) { return static_cast<int>(std::uniform_int_distribution<size_t>(0, bound - 1)(random_)); }
  size_t position(const std::string& text) { return static_cast<size_t>(below(text.size() + 1)); }

  void mutate_once(std::string& text) {
    switch (below(6)) {
      case 0:  // flip a byte
        if (!text.empty()) text[static_cast<size_t>(below(text.size()))] = static_cast<char>(below(256));
        break;
      case 1:  // truncate
        text.resize(position(text));
        break;
      case 2:  // insert a separator, a quote, a huge number...
        text.insert(position(text), kInsertions[static_cast<size_t>(below(kInsertions.size()))]);
        break;
      case 3: {  // delete a span
        const size_t start = position(text);
        text.erase(start, static_cast<size_t>(below(16)));
        break;
      }
      case 4: {  // duplicate a span elsewhere
        const size_t start = position(text);
        const std::string span = text.substr(start, static_cast<size_t>(below(40)));
        text.insert(position(text), span);
        break;
      }
      default: {  // replace a digit run with a huge or odd number
        const size_t digit = text.find_first_of("0123456789", position(text));
        if (digit == std::string::npos) break;
        const size_t end = std::min(text.find_first_not_of("0123456789", digit), text.size());
        constexpr std::array<std::string_view, 6> kNumbers = {
            "18446744073709551616", "-9223372036854775809", "65", "1001", "0.0000001", "1e9"};
        text.replace(digit, end - digit, kNumbers[static_cast<size_t>(below(kNumbers.size()))]);
        break;
      }
    }
  }

  std::mt19937 random_;
};

TextResolver small_traces() {
  return [](std::string_view reference) -> Result<std::string> {
    if (reference == "nodes.csv") return std::string(kNodeCsv);
    if (reference == "pods.csv") return std::string(kPodCsv);
    return Error{std::string(reference) + ": cannot open file"};
  };
}

template <typename T>
void expect_value_or_named_error(const Result<T>& result, std::string_view source, const std::string& input) {
  if (result.ok()) return;
  EXPECT_TRUE(result.error().message.starts_with(source)) << "message: " << result.error().message << "\ninput:\n"
                                                          << input;
}

constexpr int kIterations = 3000;

TEST(ParserFuzz, OriginalsParse) {
  auto cluster = parse_alibaba_nodes(kNodeCsv, "nodes.csv");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  ASSERT_TRUE(parse_alibaba_pods(kPodCsv, "pods.csv", *cluster).ok());
  auto scenario = parse_scenario_yaml(kScenarioYaml, "fuzz.yaml", small_traces(), nullptr);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  auto referencing = parse_scenario_yaml(kReferencingYaml, "fuzz.yaml", small_traces(), nullptr);
  ASSERT_TRUE(referencing.ok()) << referencing.error().message;
}

TEST(ParserFuzz, MutatedNodeLists) {
  Mutator mutator(20230101);
  for (int i = 0; i < kIterations; ++i) {
    const std::string input = mutator.mutate(kNodeCsv);
    EXPECT_NO_THROW(expect_value_or_named_error(parse_alibaba_nodes(input, "nodes.csv"), "nodes.csv", input));
  }
}

TEST(ParserFuzz, MutatedPodLists) {
  auto cluster = parse_alibaba_nodes(kNodeCsv, "nodes.csv");
  ASSERT_TRUE(cluster.ok());
  Mutator mutator(8152);
  for (int i = 0; i < kIterations; ++i) {
    const std::string input = mutator.mutate(kPodCsv);
    EXPECT_NO_THROW(expect_value_or_named_error(parse_alibaba_pods(input, "pods.csv", *cluster), "pods.csv", input));
  }
}

TEST(ParserFuzz, MutatedScenarios) {
  Mutator mutator(1213);
  for (int i = 0; i < kIterations; ++i) {
    const std::string input = mutator.mutate(kScenarioYaml);
    EXPECT_NO_THROW(expect_value_or_named_error(parse_scenario_yaml(input, "fuzz.yaml", small_traces(), nullptr),
                                                "fuzz.yaml", input));
  }
}

TEST(ParserFuzz, MutatedReferencingScenarios) {
  Mutator mutator(6212);
  for (int i = 0; i < kIterations / 3; ++i) {
    const std::string input = mutator.mutate(kReferencingYaml);
    EXPECT_NO_THROW(expect_value_or_named_error(parse_scenario_yaml(input, "fuzz.yaml", small_traces(), nullptr),
                                                "fuzz.yaml", input));
  }
}

TEST(ParserFuzz, MutatedQuantities) {
  Mutator mutator(42);
  for (int i = 0; i < kIterations; ++i) {
    const std::string input = mutator.mutate("1.5Gi");
    std::optional<int64_t> memory;
    std::optional<int64_t> cpu;
    EXPECT_NO_THROW(memory = parse_memory_bytes(input));
    EXPECT_NO_THROW(cpu = parse_cpu_milli(input));
    EXPECT_GE(memory.value_or(0), 0) << input;
    EXPECT_GE(cpu.value_or(0), 0) << input;
  }
}

}  // namespace
}  // namespace tessera
