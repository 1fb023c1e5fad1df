#include "sim/scenario_yaml.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "policy/fair_share.h"
#include "sim/embedded_traces.h"

namespace tessera {
namespace {

// Resolves builtin:NAME to the embedded traces and anything else from a fixed table.
TextResolver resolver(std::map<std::string, std::string, std::less<>> files = {}) {
  return [files = std::move(files)](std::string_view reference) -> Result<std::string> {
    if (reference.starts_with("builtin:")) {
      if (const EmbeddedTrace* trace = find_embedded_trace(reference.substr(8))) return std::string(trace->text);
    }
    if (auto found = files.find(reference); found != files.end()) return found->second;
    return Error{std::string(reference) + ": cannot open file"};
  };
}

Result<ScenarioParts> parse(std::string_view yaml, const ClusterSpec* cluster_hint = nullptr) {
  return parse_scenario_yaml(yaml, "s.yaml", resolver(), cluster_hint);
}

// Every error reads "SOURCE:LINE:COLUMN: field 'FIELD': ...".
void expect_error_at(const Result<ScenarioParts>& result, int line, int column, std::string_view field,
                     std::string_view detail = "") {
  ASSERT_FALSE(result.ok()) << "expected an error at s.yaml:" << line << ":" << column << " field " << field;
  const std::string& message = result.error().message;
  const std::string prefix =
      "s.yaml:" + std::to_string(line) + ":" + std::to_string(column) + ": field '" + std::string(field) + "': ";
  EXPECT_TRUE(message.starts_with(prefix)) << "message: " << message << "\nexpected prefix: " << prefix;
  EXPECT_NE(message.find(detail), std::string::npos) << "message: " << message << "\nexpected to contain: " << detail;
}

constexpr std::string_view kCompleteExample = R"(name: two-racks
cluster:
  nodes:
    - name: a100-node
      count: 2
      cpu: 64
      memory: 512Gi
      gpus: 8
      gpu_model: A100
      gpu_memory: 80Gi
      labels: {rack: r1}
      taints: [{key: dedicated, value: infer, effect: NoSchedule}]
    - name: cpu-node
      cpu: 1.5
      memory: 1G
      schedulable: false
workloads:
  - name: train-a
    queue: team-a
    kind: train
    arrival: 30
    duration: 3600
    pods: 4
    min_member: 2
    pod:
      cpu: 8
      memory: 64Gi
      gpus: 1
      gpu_models: [A100]
      node_selector: {rack: r1}
      tolerations: [{key: dedicated, operator: Equal, value: infer, effect: NoSchedule}]
  - name: notebook
    count: 2
    kind: interactive
    priority: 10
    arrival: 0
    pod:
      cpu: 500m
      memory: 2Gi
      gpu_portion: 0.25
  - name: infer
    arrival: 30
    pod:
      gpu_memory: 20Gi
      gpu_memory_limit: 40Gi
      tolerations: [{operator: Exists}]
)";

TEST(ScenarioYaml, CompleteExample) {
  auto parts = parse(kCompleteExample);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_EQ(parts->name, "two-racks");
  ASSERT_NE(parts->cluster, nullptr);
  EXPECT_TRUE(parts->cluster_source.empty());
  const ClusterSpec& cluster = *parts->cluster;
  ASSERT_EQ(cluster.nodes.size(), 3U);
  EXPECT_EQ(cluster.nodes[0].name, "a100-node-0");
  EXPECT_EQ(cluster.nodes[1].name, "a100-node-1");
  EXPECT_EQ(cluster.nodes[2].name, "cpu-node");
  const NodeSpec& gpu_node = cluster.nodes[1];
  EXPECT_EQ(gpu_node.allocatable, (Resources{64000, 512 * kGiB}));
  ASSERT_EQ(gpu_node.gpu_count(), 8);
  EXPECT_EQ(cluster.models.name(gpu_node.gpus[7].model), "A100");
  EXPECT_EQ(gpu_node.gpus[7].memory_bytes, 80 * kGiB);
  EXPECT_EQ(gpu_node.labels.at("rack"), "r1");
  EXPECT_EQ(gpu_node.labels.at("tessera.dev/gpu-model"), "A100");
  ASSERT_EQ(gpu_node.taints.size(), 1U);
  EXPECT_EQ(gpu_node.taints[0], (Taint{"dedicated", "infer", TaintEffect::kNoSchedule}));
  EXPECT_TRUE(gpu_node.schedulable);
  EXPECT_EQ(cluster.nodes[2].allocatable, (Resources{1500, 1'000'000'000}));
  EXPECT_FALSE(cluster.nodes[2].schedulable);
  EXPECT_EQ(cluster.nodes[2].gpu_count(), 0);

  ASSERT_TRUE(parts->workloads.has_value());
  const std::vector<WorkloadSpec>& workloads = *parts->workloads;
  ASSERT_EQ(workloads.size(), 4U);
  // Sorted by arrival, ties in file order.
  EXPECT_EQ(workloads[0].name, "notebook-0");
  EXPECT_EQ(workloads[1].name, "notebook-1");
  EXPECT_EQ(workloads[2].name, "train-a");
  EXPECT_EQ(workloads[3].name, "infer");

  const WorkloadSpec& train = workloads[2];
  EXPECT_EQ(train.queue, "team-a");
  EXPECT_EQ(train.kind, WorkloadKind::kTrain);
  EXPECT_TRUE(train.preemptible);
  EXPECT_EQ(train.min_member, 2);
  EXPECT_DOUBLE_EQ(train.arrival_seconds, 30);
  EXPECT_DOUBLE_EQ(train.duration_seconds, 3600);
  ASSERT_EQ(train.pods.size(), 4U);
  EXPECT_EQ(train.pods[3].name, "train-a-p3");
  EXPECT_EQ(train.pods[0].request, (Resources{8000, 64 * kGiB}));
  EXPECT_EQ(train.pods[0].gpu, GpuRequest::whole(1));
  EXPECT_TRUE(train.pods[0].allowed_models.allows(*cluster.models.find("A100")));
  EXPECT_FALSE(train.pods[0].allowed_models.is_any());
  EXPECT_EQ(train.pods[0].node_selector.at("rack"), "r1");
  ASSERT_EQ(train.pods[0].tolerations.size(), 1U);
  EXPECT_TRUE(train.pods[0].tolerations[0].tolerates(gpu_node.taints[0]));

  const WorkloadSpec& notebook = workloads[1];
  EXPECT_EQ(notebook.queue, "default");
  EXPECT_EQ(notebook.kind, WorkloadKind::kInteractive);
  EXPECT_FALSE(notebook.preemptible);
  EXPECT_EQ(notebook.priority, 10);
  EXPECT_LT(notebook.duration_seconds, 0);  // runs to the end
  ASSERT_EQ(notebook.pods.size(), 1U);
  EXPECT_EQ(notebook.min_member, 1);
  EXPECT_EQ(notebook.pods[0].name, "notebook-1-p0");
  EXPECT_EQ(notebook.pods[0].priority, 10);
  EXPECT_FALSE(notebook.pods[0].preemptible);
  EXPECT_EQ(notebook.pods[0].request, (Resources{500, 2 * kGiB}));
  EXPECT_EQ(notebook.pods[0].gpu, GpuRequest::portion(250));

  const WorkloadSpec& infer = workloads[3];
  EXPECT_EQ(infer.pods[0].gpu, GpuRequest::memory(20 * kGiB, 40 * kGiB));
  EXPECT_EQ(infer.pods[0].request, (Resources{0, 0}));
  EXPECT_TRUE(infer.pods[0].tolerations[0].tolerates(gpu_node.taints[0]));
}

// The first ```yaml block after "## A complete example" in docs/scenario-format.md.
std::string documented_example() {
  std::ifstream file(std::string(TESSERA_DATA_DIR) + "/../docs/scenario-format.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const size_t section = doc.find("## A complete example");
  const size_t start = doc.find("```yaml\n", section);
  const size_t end = doc.find("```\n", start + 8);
  if (section == std::string::npos || start == std::string::npos || end == std::string::npos) return "";
  return doc.substr(start + 8, end - start - 8);
}

TEST(ScenarioYaml, DocumentedExampleParses) {
  const std::string example = documented_example();
  ASSERT_FALSE(example.empty()) << "no example found in docs/scenario-format.md";
  auto parts = parse_scenario_yaml(example, "docs/scenario-format.md", resolver(), nullptr);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_EQ(parts->name, "two-racks");
  EXPECT_EQ(parts->cluster->nodes.size(), 7U);
  EXPECT_EQ(parts->cluster->models.size(), 2U);
  ASSERT_EQ(parts->workloads->size(), 11U);
  EXPECT_EQ(parts->workloads->front().name, "pretrain");
  EXPECT_EQ(parts->workloads->front().pods.size(), 8U);
  EXPECT_EQ(parts->workloads->back().name, "finetune-2");
  EXPECT_DOUBLE_EQ(parts->workloads->back().arrival_seconds, 1200);
  EXPECT_DOUBLE_EQ(parts->workloads->back().checkpoint_interval_seconds, 600);
  ASSERT_TRUE(parts->queues.has_value());
  EXPECT_EQ(parts->queues->size(), 5U);
  EXPECT_EQ(parts->resources.names().back(), "gpu/H100");
}

TEST(ScenarioYaml, NameDefaultsToTheFileStem) {
  auto parts = parse_scenario_yaml("workloads: []\n", "dir/my-runs.yaml", resolver(), nullptr);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_EQ(parts->name, "my-runs");
  EXPECT_EQ(parts->cluster, nullptr);
  ASSERT_TRUE(parts->workloads.has_value());
  EXPECT_TRUE(parts->workloads->empty());
}

TEST(ScenarioYaml, ClusterOnly) {
  auto parts = parse("cluster:\n  nodes: [{name: n, cpu: 2, memory: 4Gi}]\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_FALSE(parts->workloads.has_value());
  ASSERT_NE(parts->cluster, nullptr);
  EXPECT_EQ(parts->cluster->nodes.size(), 1U);
}

TEST(ScenarioYaml, AlibabaReferences) {
  auto parts = parse("cluster:\n  alibaba_nodes: builtin:gpu_node\nworkloads:\n  alibaba_pods: builtin:default\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_EQ(parts->cluster->nodes.size(), 1213U);
  EXPECT_EQ(parts->cluster_source, "builtin:gpu_node");
  EXPECT_EQ(parts->workloads->size(), 8152U);
  EXPECT_EQ(parts->workload_source, "builtin:default");
}

TEST(ScenarioYaml, AlibabaReferenceErrors) {
  expect_error_at(parse("cluster:\n  alibaba_nodes: missing.csv\n"), 2, 18, "cluster.alibaba_nodes",
                  "missing.csv: cannot open file");
  // A CSV error names the scenario's place first, then the CSV's own line and column.
  auto bad_csv =
      parse_scenario_yaml("cluster:\n  alibaba_nodes: nodes.csv\n", "s.yaml",
                          resolver({{"nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,x,\n"}}), nullptr);
  expect_error_at(bad_csv, 2, 18, "cluster.alibaba_nodes", "nodes.csv:2: column 'gpu': 'x' is not a number");
  expect_error_at(parse("workloads:\n  alibaba_pods: [a]\n"), 2, 17, "workloads.alibaba_pods", "is a list");
  expect_error_at(parse("workloads:\n  pods: x\n"), 2, 3, "workloads.pods",
                  "unknown field (expected one of: alibaba_pods)");
}

TEST(ScenarioYaml, ClusterHintResolvesGpuModels) {
  auto hint =
      parse("cluster:\n  nodes: [{name: n, cpu: 2, memory: 4Gi, gpus: 1, gpu_model: H100, gpu_memory: 80Gi}]\n");
  ASSERT_TRUE(hint.ok()) << hint.error().message;
  constexpr std::string_view kWorkloads = "workloads:\n  - name: w\n    pod: {gpus: 1, gpu_models: [H100]}\n";
  auto parts = parse(kWorkloads, hint->cluster.get());
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_EQ(parts->cluster, nullptr);
  EXPECT_TRUE((*parts->workloads)[0].pods[0].allowed_models.allows(*hint->cluster->models.find("H100")));
  // Without a cluster the names cannot be checked: only an empty list is accepted.
  expect_error_at(parse(kWorkloads), 3, 32, "workloads[0].pod.gpu_models", "no cluster to resolve GPU models against");
  EXPECT_TRUE(parse("workloads:\n  - name: w\n    pod: {gpus: 1, gpu_models: []}\n").ok());
}

TEST(ScenarioYaml, EmptyOrNotAMap) {
  expect_error_at(parse(""), 1, 1, "(top level)", "the file is empty");
  expect_error_at(parse("# only a comment\n"), 1, 1, "(top level)", "the file is empty");
  expect_error_at(parse("- a\n- b\n"), 1, 1, "(top level)",
                  "is a list (expected a map with keys: name, cluster, queues, workloads)");
  expect_error_at(parse("just text\n"), 1, 1, "(top level)", "is 'just text'");
}

TEST(ScenarioYaml, UnknownKeysAreNamedWithTheAllowedOnes) {
  expect_error_at(parse("name: x\nclustr: {}\n"), 2, 1, "clustr",
                  "unknown field (expected one of: name, cluster, queues, workloads)");
  expect_error_at(parse("cluster:\n  nodes:\n    - name: n\n      cpu: 1\n      memory: 1Gi\n      gpu: 2\n"), 6, 7,
                  "cluster.nodes[0].gpu", "unknown field (expected one of: name, count, cpu, memory, gpus");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {}\n  - name: b\n    pod:\n      gpu_portoin: 0.5\n"), 6, 7,
                  "workloads[1].pod.gpu_portoin", "gpu_portion");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {tolerations: [{key: k, effct: NoSchedule}]}\n"), 3, 34,
                  "workloads[0].pod.tolerations[0].effct", "expected one of: key, operator, value, effect");
  expect_error_at(parse("name: a\nname: b\n"), 2, 1, "name", "appears twice");
}

TEST(ScenarioYaml, WrongTypes) {
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {cpu: [1]}\n"), 3, 16, "workloads[0].pod.cpu", "is a list");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {memory: lots}\n"), 3, 19, "workloads[0].pod.memory",
                  "'lots' is not a valid quantity");
  expect_error_at(parse("workloads:\n  - name: a\n    pods: two\n    pod: {}\n"), 3, 11, "workloads[0].pods",
                  "'two' is not a whole number");
  expect_error_at(parse("workloads:\n  - name: a\n    preemptible: maybe\n    pod: {}\n"), 3, 18,
                  "workloads[0].preemptible", "not a boolean");
  expect_error_at(parse("workloads:\n  - name: a\n    kind: batch\n    pod: {}\n"), 3, 11, "workloads[0].kind",
                  "expected train, interactive or inference");
  expect_error_at(parse("workloads:\n  - name: a\n    arrival:\n    pod: {}\n"), 3, 5, "workloads[0].arrival",
                  "is empty");
  expect_error_at(parse("workloads: 5\n"), 1, 12, "workloads", "a list of workloads, or a map with alibaba_pods");
  expect_error_at(parse("cluster:\n  nodes:\n    - name: n\n      cpu: 1\n      memory: 1Gi\n      labels: [a]\n"), 6,
                  15, "cluster.nodes[0].labels", "expected a map of label names to values");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {node_selector: {rack: [r1]}}\n"), 3, 33,
                  "workloads[0].pod.node_selector.rack", "is a list");
}

TEST(ScenarioYaml, NegativeAndZeroValues) {
  expect_error_at(parse("workloads:\n  - name: a\n    arrival: -1\n    pod: {}\n"), 3, 14, "workloads[0].arrival",
                  "-1 is negative");
  expect_error_at(parse("workloads:\n  - name: a\n    duration: 0\n    pod: {}\n"), 3, 15, "workloads[0].duration",
                  "0 is not positive");
  expect_error_at(parse("workloads:\n  - name: a\n    count: 0\n    pod: {}\n"), 3, 12, "workloads[0].count",
                  "0 is out of range");
  expect_error_at(parse("workloads:\n  - name: a\n    pods: -3\n    pod: {}\n"), 3, 11, "workloads[0].pods",
                  "-3 is negative");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {cpu: -1}\n"), 3, 16, "workloads[0].pod.cpu", "is negative");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {gpus: 0}\n"), 3, 17, "workloads[0].pod.gpus",
                  "0 is out of range (expected whole GPUs, a whole number from 1 to 64)");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {gpu_memory: 0}\n"), 3, 23, "workloads[0].pod.gpu_memory",
                  "is 0");
  expect_error_at(parse("workloads:\n  - name: a\n    priority: 99999999999\n    pod: {}\n"), 3, 15,
                  "workloads[0].priority", "out of range");
}

TEST(ScenarioYaml, GpuRequestRules) {
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {gpus: 1, gpu_portion: 0.5}\n"), 3, 20,
                  "workloads[0].pod.gpu_portion", "is given together with gpus");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {gpu_portion: 1.0}\n"), 3, 24,
                  "workloads[0].pod.gpu_portion", "not between 0 and 1");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {gpu_portion: 0.0001}\n"), 3, 24,
                  "workloads[0].pod.gpu_portion", "rounds to 0 thousandths");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {gpu_memory: 20Gi, gpu_memory_limit: 10Gi}\n"), 3, 47,
                  "workloads[0].pod.gpu_memory_limit", "expected a limit >= the request");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {gpu_memory_limit: 10Gi}\n"), 3, 11,
                  "workloads[0].pod.gpu_memory_limit", "without gpu_memory");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {gpu_models: []}\n"), 3, 11, "workloads[0].pod.gpu_models",
                  "asks for no GPU");
  auto memory_only = parse("workloads:\n  - name: a\n    pod: {gpu_memory: 10Gi}\n");
  ASSERT_TRUE(memory_only.ok()) << memory_only.error().message;
  EXPECT_EQ((*memory_only->workloads)[0].pods[0].gpu, GpuRequest::memory(10 * kGiB, 10 * kGiB));
}

TEST(ScenarioYaml, UnknownGpuModel) {
  constexpr std::string_view kCluster =
      "cluster:\n  nodes: [{name: n, cpu: 1, memory: 1Gi, gpus: 1, gpu_model: A100, gpu_memory: 40Gi}]\n";
  expect_error_at(
      parse(std::string(kCluster) + "workloads:\n  - name: a\n    pod: {gpus: 1, gpu_models: [A100, H100]}\n"), 5, 39,
      "workloads[0].pod.gpu_models[1]", "unknown GPU model 'H100'; the cluster has: A100");
}

TEST(ScenarioYaml, GangRules) {
  expect_error_at(parse("workloads:\n  - name: a\n    pods: 2\n    min_member: 3\n    pod: {}\n"), 4, 17,
                  "workloads[0].min_member", "3 is more than pods, 2");
  auto gang = parse("workloads:\n  - name: a\n    pods: 3\n    pod: {}\n");
  ASSERT_TRUE(gang.ok()) << gang.error().message;
  EXPECT_EQ((*gang->workloads)[0].min_member, 3);
  expect_error_at(parse("workloads:\n  - name: a\n"), 2, 5, "workloads[0].pod", "is missing");
  expect_error_at(parse("workloads:\n  - pod: {}\n"), 2, 5, "workloads[0].name", "is missing");
  expect_error_at(parse("workloads:\n  - name: a\n    count: 100000\n    pods: 10000\n    pod: {}\n"), 3, 12,
                  "workloads[0].count", "larger than 1000000 pods");
}

TEST(ScenarioYaml, DuplicateNames) {
  expect_error_at(parse("cluster:\n  nodes:\n    - {name: n, count: 2, cpu: 1, memory: 1Gi}\n"
                        "    - {name: n-1, cpu: 1, memory: 1Gi}\n"),
                  4, 14, "cluster.nodes[1].name", "makes node name 'n-1' that cluster.nodes[0] also makes");
  expect_error_at(parse("workloads:\n  - {name: w, pod: {}}\n  - {name: w, pod: {}}\n"), 3, 12, "workloads[1].name",
                  "that workloads[0] also makes");
}

TEST(ScenarioYaml, NodeRules) {
  expect_error_at(parse("cluster:\n  nodes:\n    - {name: n, cpu: 1, memory: 1Gi, gpus: 2, gpu_memory: 1Gi}\n"), 3, 7,
                  "cluster.nodes[0].gpu_model", "is missing");
  expect_error_at(parse("cluster:\n  nodes:\n    - {name: n, cpu: 1, memory: 1Gi, gpu_model: A100}\n"), 3, 38,
                  "cluster.nodes[0].gpu_model", "the node has no GPUs");
  expect_error_at(parse("cluster:\n  nodes:\n    - {name: n, memory: 1Gi}\n"), 3, 7, "cluster.nodes[0].cpu",
                  "is missing");
  expect_error_at(parse("cluster:\n  nodes:\n    - {name: n, cpu: 1, memory: 1Gi, gpus: 65}\n"), 3, 44,
                  "cluster.nodes[0].gpus", "65 is out of range");
  expect_error_at(
      parse("cluster:\n  nodes:\n    - {name: n, cpu: 1, memory: 1Gi, taints: [{key: k, effect: Never}]}\n"), 3, 64,
      "cluster.nodes[0].taints[0].effect", "expected NoSchedule, PreferNoSchedule or NoExecute");
  expect_error_at(parse("cluster:\n  nodes: []\n"), 2, 10, "cluster.nodes", "at least one node");
  expect_error_at(parse("cluster:\n  nodes: [{name: n, cpu: 1, memory: 1Gi}]\n  alibaba_nodes: builtin:gpu_node\n"), 2,
                  3, "cluster.nodes", "together with alibaba_nodes");
  expect_error_at(parse("cluster: {}\n"), 1, 10, "cluster.alibaba_nodes", "either alibaba_nodes or nodes");
}

TEST(ScenarioYaml, TolerationRules) {
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {tolerations: [{operator: Exists, value: v}]}\n"), 3, 44,
                  "workloads[0].pod.tolerations[0].value", "Exists");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {tolerations: [{operator: Equal}]}\n"), 3, 25,
                  "workloads[0].pod.tolerations[0].key", "operator Exists");
  expect_error_at(parse("workloads:\n  - name: a\n    pod: {tolerations: [{key: k, operator: Like}]}\n"), 3, 44,
                  "workloads[0].pod.tolerations[0].operator", "expected Equal or Exists");
}

TEST(ScenarioYaml, SyntaxErrorsHaveAPlace) {
  auto result = parse("cluster:\n  nodes: [{name: n\n");
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(result.error().message.starts_with("s.yaml:")) << result.error().message;
  EXPECT_NE(result.error().message.find("invalid YAML"), std::string::npos) << result.error().message;

  auto tab = parse("name: a\n\tcluster: {}\n");
  ASSERT_FALSE(tab.ok());
  EXPECT_TRUE(tab.error().message.starts_with("s.yaml:2:")) << tab.error().message;

  auto alias = parse("name: *nowhere\n");
  ASSERT_FALSE(alias.ok());
  EXPECT_TRUE(alias.error().message.starts_with("s.yaml:1:")) << alias.error().message;
}

TEST(ScenarioYaml, DeepNestingIsAnErrorNotACrash) {
  const std::string flow = "workloads: " + std::string(100'000, '[') + std::string(100'000, ']') + "\n";
  auto result = parse(flow);
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(result.error().message.starts_with("s.yaml:1:")) << result.error().message;
  EXPECT_NE(result.error().message.find("levels deep"), std::string::npos) << result.error().message;
}

// ----- Queues -----

constexpr std::string_view kQueuesExample = R"(cluster:
  nodes:
    - {name: a, cpu: 64, memory: 512Gi, gpus: 8, gpu_model: A100, gpu_memory: 80Gi}
    - {name: h, cpu: 64, memory: 512Gi, gpus: 8, gpu_model: H100, gpu_memory: 80Gi}
queues:
  - name: research
    priority: 2
    preempt_min_runtime: 600
    reclaim_min_runtime: 0
    quota:
      gpu: {deserved: 8, weight: 2, limit: 16}
      cpu: {deserved: 64, limit: 128}
      memory: {deserved: 512Gi}
      gpu/H100: {deserved: 4}
  - name: vision
    parent: research
    reclaim_min_runtime: 300
    quota:
      gpu: {deserved: 2.5, weight: 0}
      cpu: {deserved: 500m}
  - name: nlp
    parent: research
    priority: -1
    quota:
      gpu/A100: {deserved: 1, limit: 3}
      gpu/H100: {deserved: 2}
  - name: ops
    parent: ""
workloads:
  - name: w
    queue: vision
    pod: {gpus: 1}
  - name: o
    queue: ops
    pod: {}
)";

TEST(ScenarioYamlQueues, CompleteExample) {
  auto parts = parse(kQueuesExample);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  // gpu, cpu, memory, then the per-model resources in order of first appearance.
  EXPECT_EQ(parts->resources.names(), (std::vector<std::string>{"gpu", "cpu", "memory", "gpu/H100", "gpu/A100"}));
  ASSERT_TRUE(parts->queues.has_value());
  const std::vector<QueueSpec>& queues = *parts->queues;
  ASSERT_EQ(queues.size(), 4U);
  for (const QueueSpec& queue : queues) EXPECT_EQ(queue.quota.size(), 5U) << queue.name;  // padded

  const QueueSpec& research = queues[0];
  EXPECT_EQ(research.name, "research");
  EXPECT_EQ(research.parent, "");
  EXPECT_EQ(research.priority, 2);
  EXPECT_EQ(research.preempt_min_runtime_seconds, 600);
  EXPECT_EQ(research.reclaim_min_runtime_seconds, 0);
  EXPECT_EQ(research.quota[0], (QueueQuota{8, 2, 16}));
  EXPECT_EQ(research.quota[1], (QueueQuota{64000, 1, 128000}));  // millicores
  EXPECT_EQ(research.quota[2], (QueueQuota{512.0 * kGiB, 1, std::nullopt}));
  EXPECT_EQ(research.quota[3], (QueueQuota{4, 1, std::nullopt}));
  EXPECT_EQ(research.quota[4], QueueQuota{});

  const QueueSpec& vision = queues[1];
  EXPECT_EQ(vision.parent, "research");
  EXPECT_EQ(vision.priority, 0);
  // Inheritance is the scheduler's business: what the file does not say stays empty.
  EXPECT_FALSE(vision.preempt_min_runtime_seconds.has_value());
  EXPECT_EQ(vision.reclaim_min_runtime_seconds, 300);
  EXPECT_EQ(vision.quota[0], (QueueQuota{2.5, 0, std::nullopt}));
  EXPECT_EQ(vision.quota[1], (QueueQuota{500, 1, std::nullopt}));
  EXPECT_EQ(vision.quota[2], QueueQuota{});

  const QueueSpec& nlp = queues[2];
  EXPECT_EQ(nlp.priority, -1);
  EXPECT_EQ(nlp.quota[0], QueueQuota{});
  EXPECT_EQ(nlp.quota[3], (QueueQuota{2, 1, std::nullopt}));
  EXPECT_EQ(nlp.quota[4], (QueueQuota{1, 1, 3}));

  EXPECT_EQ(queues[3].parent, "");
  EXPECT_TRUE(queues[3].quota_for(0) == QueueQuota{});
  EXPECT_FALSE(queues[3].preempt_min_runtime_seconds.has_value());
  EXPECT_FALSE(queues[3].reclaim_min_runtime_seconds.has_value());

  // The specs build a tree as they are.
  auto tree = QueueTree::build(queues, parts->resources);
  ASSERT_TRUE(tree.ok()) << tree.error().message;
  EXPECT_EQ(tree->leaves().size(), 3U);
  ASSERT_EQ(parts->workloads->size(), 2U);
  EXPECT_EQ((*parts->workloads)[0].queue, "vision");
}

TEST(ScenarioYamlQueues, AbsentMeansNoQueuesAndNoCheck) {
  auto parts = parse("workloads:\n  - {name: w, queue: anything, pod: {}}\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_FALSE(parts->queues.has_value());
  EXPECT_EQ(parts->resources.names(), ResourceNames::standard().names());
  EXPECT_EQ((*parts->workloads)[0].queue, "anything");
  // An empty section is a tree with no queues: then no workload has a leaf to go to.
  auto empty = parse("queues: []\n");
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  ASSERT_TRUE(empty->queues.has_value());
  EXPECT_TRUE(empty->queues->empty());
}

TEST(ScenarioYamlQueues, PerModelQuotasWithoutAClusterAreNotChecked) {
  auto parts = parse("queues:\n  - {name: q, quota: {gpu/B200: {deserved: 1}}}\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_EQ(parts->resources.names().back(), "gpu/B200");
  // With a cluster hint (the --cluster the file is combined with) they are.
  auto hint =
      parse("cluster:\n  nodes: [{name: n, cpu: 1, memory: 1Gi, gpus: 1, gpu_model: A100, gpu_memory: 40Gi}]\n");
  ASSERT_TRUE(hint.ok()) << hint.error().message;
  expect_error_at(parse("queues:\n  - {name: q, quota: {gpu/B200: {deserved: 1}}}\n", hint->cluster.get()), 2, 23,
                  "queues[0].quota.gpu/B200", "unknown GPU model 'B200'; the cluster has: A100");
  EXPECT_TRUE(parse("queues:\n  - {name: q, quota: {gpu/A100: {deserved: 1}}}\n", hint->cluster.get()).ok());
}

constexpr std::string_view kGpuCluster =
    "cluster:\n  nodes: [{name: n, cpu: 1, memory: 1Gi, gpus: 1, gpu_model: A100, gpu_memory: 40Gi}]\n";

TEST(ScenarioYamlQueues, Errors) {
  // Unknown keys: in a queue, in a quota entry, and an unknown resource.
  expect_error_at(parse("queues:\n  - name: a\n    weight: 1\n"), 3, 5, "queues[0].weight",
                  "unknown field (expected one of: name, parent, priority, preempt_min_runtime, reclaim_min_runtime, "
                  "quota, rules)");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      gpu: {deserved: 1, limt: 2}\n"), 4, 26,
                  "queues[0].quota.gpu.limt", "unknown field (expected one of: deserved, weight, limit)");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      gpus: {deserved: 1}\n"), 4, 7, "queues[0].quota.gpus",
                  "unknown resource (expected gpu, cpu, memory or gpu/MODEL)");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      gpu/: {deserved: 1}\n"), 4, 7, "queues[0].quota.gpu/",
                  "names no GPU model");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      gpu: {deserved: 1}\n      gpu: {deserved: 2}\n"), 5, 7,
                  "queues[0].quota.gpu", "appears twice");
  // Wrong types and out of range.
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      gpu: {deserved: -1}\n"), 4, 23,
                  "queues[0].quota.gpu.deserved", "-1 is negative (expected a number of GPUs >= 0");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      cpu: {deserved: -2}\n"), 4, 23,
                  "queues[0].quota.cpu.deserved", "'-2' is negative");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      memory: {deserved: lots}\n"), 4, 26,
                  "queues[0].quota.memory.deserved", "'lots' is not a valid quantity");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      gpu: {weight: -0.5}\n"), 4, 21,
                  "queues[0].quota.gpu.weight", "-0.5 is negative (expected an over-quota weight >= 0");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      gpu: 8\n"), 4, 12, "queues[0].quota.gpu",
                  "is '8' (expected a map with keys: deserved, weight, limit)");
  expect_error_at(parse("queues:\n  - name: a\n    quota: [gpu]\n"), 3, 12, "queues[0].quota", "is a list");
  expect_error_at(parse("queues:\n  - name: a\n    priority: high\n"), 3, 15, "queues[0].priority",
                  "'high' is not a whole number");
  expect_error_at(parse("queues:\n  - name: a\n    preempt_min_runtime: -5\n"), 3, 26, "queues[0].preempt_min_runtime",
                  "-5 is negative");
  expect_error_at(parse("queues:\n  - name: a\n    reclaim_min_runtime: soon\n"), 3, 26,
                  "queues[0].reclaim_min_runtime", "'soon' is not a number");
  expect_error_at(parse("queues:\n  - parent: b\n"), 2, 5, "queues[0].name", "is missing");
  expect_error_at(parse("queues: {name: a}\n"), 1, 9, "queues", "is a map (expected a list of queues");
  // limit < deserved, in the unit of the resource.
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      gpu: {deserved: 8, limit: 4}\n"), 4, 33,
                  "queues[0].quota.gpu.limit", "4 GPUs is less than deserved, 8 GPUs (expected a limit >= deserved)");
  expect_error_at(parse("queues:\n  - name: a\n    quota:\n      cpu: {deserved: 2, limit: 1500m}\n"), 4, 33,
                  "queues[0].quota.cpu.limit", "1500 millicores is less than deserved, 2000 millicores");
  // An unknown GPU model in gpu/MODEL, against the file's own cluster.
  expect_error_at(parse(std::string(kGpuCluster) + "queues:\n  - name: a\n    quota:\n      gpu/H100: {deserved: 1}\n"),
                  6, 7, "queues[0].quota.gpu/H100",
                  "unknown GPU model 'H100'; the cluster has: A100 (expected one of them)");
}

TEST(ScenarioYamlQueues, TreeErrorsArePlacedAtTheQueue) {
  expect_error_at(parse("queues:\n  - name: a\n  - name: b\n    parent: lab\n"), 4, 13, "queues[1].parent",
                  "parent 'lab' is not a queue (expected the name of a queue in this section");
  expect_error_at(parse("queues:\n  - {name: top}\n  - {name: a, parent: b}\n  - {name: b, parent: a}\n"), 3, 23,
                  "queues[1].parent", "parent forms a cycle (a -> b -> a) (expected parents that lead up");
  expect_error_at(parse("queues:\n  - {name: a, parent: a}\n"), 2, 23, "queues[0].parent", "(a -> a)");
  expect_error_at(parse("queues:\n  - name: a\n  - name: b\n  - name: a\n"), 4, 11, "queues[2].name",
                  "'a' is the name of queues[0] too (expected unique queue names)");
  // A parent may be listed after its children.
  auto later = parse("queues:\n  - {name: child, parent: lab}\n  - {name: lab}\n");
  ASSERT_TRUE(later.ok()) << later.error().message;
}

TEST(ScenarioYamlQueues, WorkloadsBelongToLeafQueues) {
  constexpr std::string_view kQueues =
      "queues:\n  - {name: lab}\n  - {name: susan, parent: lab}\n  - {name: joe, parent: lab}\n";
  EXPECT_TRUE(parse(std::string(kQueues) + "workloads:\n  - {name: w, queue: joe, pod: {}}\n").ok());
  expect_error_at(parse(std::string(kQueues) + "workloads:\n  - {name: w, queue: lab, pod: {}}\n"), 6, 22,
                  "workloads[0].queue", "queue 'lab' has child queues (expected a leaf queue: susan, joe)");
  expect_error_at(parse(std::string(kQueues) + "workloads:\n  - name: w\n    queue: jemma\n    pod: {}\n"), 7, 12,
                  "workloads[0].queue",
                  "queue 'jemma' is not in the queues section (expected a leaf queue: susan, joe)");
  // Without `queue` a workload is in 'default', which must then be a leaf too.
  expect_error_at(parse(std::string(kQueues) + "workloads:\n  - {name: w, pod: {}}\n"), 6, 5, "workloads[0].queue",
                  "is missing, so the workload is in queue 'default'");
  EXPECT_TRUE(parse("queues: [{name: default}]\nworkloads:\n  - {name: w, pod: {}}\n").ok());
  // Only a few leaf names are listed.
  std::string many = "queues:\n";
  for (int i = 0; i < 10; ++i) many += "  - {name: q" + std::to_string(i) + "}\n";
  expect_error_at(parse(many + "workloads:\n  - {name: w, queue: x, pod: {}}\n"), 13, 22, "workloads[0].queue",
                  "(expected a leaf queue: q0, q1, q2, q3, q4, q5, ... (10 in all))");
  // Pods of an Alibaba list are checked as well.
  expect_error_at(parse("queues: [{name: team}]\nworkloads:\n  alibaba_pods: builtin:default\n"), 3, 17,
                  "workloads.alibaba_pods", "is not in the queues section");
}

TEST(ScenarioYaml, ArrivalIntervalSpreadsTheCopies) {
  auto parts = parse(
      "workloads:\n"
      "  - {name: a, count: 3, arrival: 100, arrival_interval: 60, pod: {}}\n"
      "  - {name: b, arrival: 130, pod: {}}\n"
      "  - {name: c, count: 2, arrival: 160, pod: {}}\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  std::vector<std::pair<std::string, double>> order;
  for (const WorkloadSpec& workload : *parts->workloads) order.emplace_back(workload.name, workload.arrival_seconds);
  // Sorted by arrival; ties (a-1, c-0, c-1 at 160) keep the file's order.
  EXPECT_EQ(order, (std::vector<std::pair<std::string, double>>{
                       {"a-0", 100}, {"b", 130}, {"a-1", 160}, {"c-0", 160}, {"c-1", 160}, {"a-2", 220}}));
  expect_error_at(parse("workloads:\n  - {name: a, count: 2, arrival_interval: -1, pod: {}}\n"), 2, 43,
                  "workloads[0].arrival_interval", "-1 is negative");
  expect_error_at(parse("workloads:\n  - {name: a, count: 2, arrival_interval: 1e308, arrival: 1e308, pod: {}}\n"), 2,
                  43, "workloads[0].arrival_interval", "too large");
}

TEST(ScenarioYaml, CheckpointInterval) {
  auto parts = parse("workloads:\n  - {name: a, checkpoint_interval: 600, pod: {}}\n  - {name: b, pod: {}}\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_DOUBLE_EQ((*parts->workloads)[0].checkpoint_interval_seconds, 600);
  EXPECT_DOUBLE_EQ((*parts->workloads)[1].checkpoint_interval_seconds, 0);  // no checkpoints
  expect_error_at(parse("workloads:\n  - {name: a, checkpoint_interval: 0, pod: {}}\n"), 2, 36,
                  "workloads[0].checkpoint_interval", "0 is not positive");
  expect_error_at(parse("workloads:\n  - {name: a, checkpoint_interval: often, pod: {}}\n"), 2, 36,
                  "workloads[0].checkpoint_interval", "'often' is not a number");
}

TEST(ScenarioYaml, TimeLimit) {
  auto parts = parse("workloads:\n  - {name: a, time_limit: 1200, pod: {}}\n  - {name: b, pod: {}}\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_DOUBLE_EQ((*parts->workloads)[0].time_limit_seconds, 1200);
  EXPECT_DOUBLE_EQ((*parts->workloads)[1].time_limit_seconds, 0);  // no limit
  expect_error_at(parse("workloads:\n  - {name: a, time_limit: -5, pod: {}}\n"), 2, 27, "workloads[0].time_limit",
                  "-5 is not positive");
  expect_error_at(parse("workloads:\n  - {name: a, time_limit: soon, pod: {}}\n"), 2, 27, "workloads[0].time_limit",
                  "'soon' is not a number");
}

TEST(ScenarioYamlQueues, RulesPerWorkloadKind) {
  auto parts = parse(
      "queues:\n"
      "  - name: lab\n"
      "    rules:\n"
      "      interactive: {idle_limit: 3600, notice: 900, warmup_grace: 1200, idle_threshold: 10, idle_window: 120}\n"
      "      train: {max_runtime: 86400, on_expiry: requeue, requeue_delay: 300}\n"
      "      inference: {max_runtime: 0, on_expiry: preemptible}\n"
      "  - {name: team, parent: lab}\n"
      "workloads:\n"
      "  - {name: nb, queue: team, kind: interactive, idle_limit: 1800, pod: {},\n"
      "     utilisation: {profile: bursty, burst: 600, period: 3600, busy: 70}}\n"
      "  - {name: tr, queue: team, max_runtime: 172800, pod: {}, utilisation: {profile: warmup, after: 1200}}\n"
      "  - {name: sv, queue: team, kind: inference, pod: {}}\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  const WorkRules& notebooks = (*parts->queues)[0].work_rules[static_cast<size_t>(WorkloadKind::kInteractive)];
  EXPECT_EQ(notebooks.idle_limit_seconds, 3600);
  EXPECT_EQ(notebooks.notice_seconds, 900);
  EXPECT_EQ(notebooks.warmup_grace_seconds, 1200);
  EXPECT_EQ(notebooks.idle_threshold_pct, 10);
  EXPECT_EQ(notebooks.idle_window_seconds, 120);
  EXPECT_FALSE(notebooks.max_runtime_seconds);  // left to the parent (none here)
  const WorkRules& training = (*parts->queues)[0].work_rules[static_cast<size_t>(WorkloadKind::kTrain)];
  EXPECT_EQ(training.max_runtime_seconds, 86400);
  EXPECT_EQ(training.on_expiry, ExpiryAction::kRequeue);
  EXPECT_EQ((*parts->queues)[0].work_rules[static_cast<size_t>(WorkloadKind::kInference)].on_expiry,
            ExpiryAction::kPreemptible);
  EXPECT_TRUE((*parts->queues)[1].work_rules[0].empty());

  const std::vector<WorkloadSpec>& workloads = *parts->workloads;
  ASSERT_EQ(workloads.size(), 3u);
  EXPECT_EQ(workloads[0].kind, WorkloadKind::kInteractive);
  EXPECT_EQ(workloads[0].idle_limit_seconds, 1800);
  EXPECT_EQ(workloads[0].utilisation.shape, UtilisationShape::kBursty);
  EXPECT_EQ(workloads[0].utilisation.busy_pct, 70);
  EXPECT_EQ(workloads[0].utilisation.period_seconds, 3600);
  EXPECT_EQ(workloads[1].utilisation.shape, UtilisationShape::kWarmup);
  EXPECT_EQ(workloads[2].kind, WorkloadKind::kInference);
  EXPECT_EQ(workloads[2].utilisation.shape, UtilisationShape::kBusy);
  // tr asked for 48 hours where its queue allows 24: it gets 24, and a warning says so.
  ASSERT_EQ(parts->warnings.size(), 1u);
  EXPECT_EQ(parts->warnings[0],
            "s.yaml: workload 'tr' asked for a maximum runtime of 48 h; its queue allows 24 h, so 24 h applies");
}

TEST(ScenarioYamlQueues, RuleAndUtilisationErrorsNameTheField) {
  expect_error_at(parse("queues:\n  - name: q\n    rules:\n      interactive: {on_expiry: kill}\n"), 4, 32,
                  "queues[0].rules.interactive.on_expiry", "'kill' is not an action (expected stop, requeue or");
  expect_error_at(parse("queues:\n  - name: q\n    rules:\n      batch: {}\n"), 4, 7, "queues[0].rules.batch",
                  "unknown field (expected one of: train, interactive, inference)");
  expect_error_at(parse("queues:\n  - name: q\n    rules:\n      train: {idle_threshold: 120}\n"), 4, 31,
                  "queues[0].rules.train.idle_threshold", "120 is more than 100");
  expect_error_at(parse("queues:\n  - name: q\n    rules:\n      train: {notice: -1}\n"), 4, 23,
                  "queues[0].rules.train.notice", "-1 is negative");
  expect_error_at(parse("workloads:\n  - {name: a, max_runtime: 0, pod: {}}\n"), 2, 28, "workloads[0].max_runtime",
                  "0 is not positive");
  expect_error_at(parse("workloads:\n  - {name: a, utilisation: {profile: idle_after}, pod: {}}\n"), 2, 28,
                  "workloads[0].utilisation.after", "is missing");
  expect_error_at(parse("workloads:\n  - {name: a, utilisation: {profile: sleepy}, pod: {}}\n"), 2, 38,
                  "workloads[0].utilisation.profile", "'sleepy' is not a utilisation profile");
  expect_error_at(parse("workloads:\n  - {name: a, utilisation: {profile: busy, after: 60}, pod: {}}\n"), 2, 44,
                  "workloads[0].utilisation.after", "does not apply to profile busy");
  expect_error_at(parse("workloads:\n  - {name: a, kind: batch, pod: {}}\n"), 2, 21, "workloads[0].kind",
                  "(expected train, interactive or inference)");
}

TEST(UtilisationProfile, BusySecondsAndWindowMeans) {
  UtilisationProfile idle_after{UtilisationShape::kIdleAfter, 80, 600, 0, 0};
  EXPECT_EQ(idle_after.busy_seconds(300), 300);
  EXPECT_EQ(idle_after.busy_seconds(3600), 600);
  EXPECT_DOUBLE_EQ(idle_after.mean_pct(900, 600), 40);  // 300 of the last 600 s busy at 80%
  EXPECT_DOUBLE_EQ(idle_after.mean_pct(1200, 600), 0);
  UtilisationProfile warmup{UtilisationShape::kWarmup, 90, 1200, 0, 0};
  EXPECT_EQ(warmup.busy_seconds(1000), 0);
  EXPECT_EQ(warmup.busy_seconds(1500), 300);
  EXPECT_DOUBLE_EQ(warmup.mean_pct(0, 300), 0);  // it starts idle
  UtilisationProfile bursty{UtilisationShape::kBursty, 60, 0, 900, 3600};
  EXPECT_EQ(bursty.busy_seconds(3600 * 2 + 600), 900 * 2 + 600);
  EXPECT_EQ(bursty.busy_seconds(3600 * 2 + 1800), 900 * 3);
  EXPECT_DOUBLE_EQ(bursty.mean_pct(3600 + 300, 300), 60);
}

// ----- Quantities -----

TEST(Quantity, CpuMillicores) {
  EXPECT_EQ(parse_cpu_milli("2"), 2000);
  EXPECT_EQ(parse_cpu_milli("0"), 0);
  EXPECT_EQ(parse_cpu_milli("500m"), 500);
  EXPECT_EQ(parse_cpu_milli("1.5"), 1500);
  EXPECT_EQ(parse_cpu_milli(".5"), 500);
  EXPECT_EQ(parse_cpu_milli("2."), 2000);
  EXPECT_EQ(parse_cpu_milli("+3"), 3000);
  EXPECT_EQ(parse_cpu_milli("0.0001"), 1);  // rounds up to the next millicore
  EXPECT_EQ(parse_cpu_milli("0.5m"), 1);
  EXPECT_EQ(parse_cpu_milli("1k"), 1'000'000);
  EXPECT_EQ(parse_cpu_milli("1Ki"), 1'024'000);
  EXPECT_EQ(parse_cpu_milli("007"), 7000);
  EXPECT_EQ(parse_cpu_milli("1.000000000000000000001"), 1001);  // digits past the kept precision still round up
  // The API server's grammar throughout (wire/quantity.h): exponents and the small decimal suffixes.
  EXPECT_EQ(parse_cpu_milli("1e3"), 1'000'000);
  EXPECT_EQ(parse_cpu_milli("1E-3"), 1);
  EXPECT_EQ(parse_cpu_milli("250000u"), 250);
}

TEST(Quantity, MemoryBytes) {
  EXPECT_EQ(parse_memory_bytes("1024"), 1024);
  EXPECT_EQ(parse_memory_bytes("64Gi"), 64 * kGiB);
  EXPECT_EQ(parse_memory_bytes("512Mi"), 512 * kMiB);
  EXPECT_EQ(parse_memory_bytes("1Ki"), 1024);
  EXPECT_EQ(parse_memory_bytes("1k"), 1000);
  EXPECT_EQ(parse_memory_bytes("1M"), 1'000'000);
  EXPECT_EQ(parse_memory_bytes("1G"), 1'000'000'000);
  EXPECT_EQ(parse_memory_bytes("2T"), 2'000'000'000'000);
  EXPECT_EQ(parse_memory_bytes("1Ti"), int64_t{1} << 40);
  EXPECT_EQ(parse_memory_bytes("1P"), 1'000'000'000'000'000);
  EXPECT_EQ(parse_memory_bytes("1Pi"), int64_t{1} << 50);
  EXPECT_EQ(parse_memory_bytes("1E"), 1'000'000'000'000'000'000);
  EXPECT_EQ(parse_memory_bytes("1Ei"), int64_t{1} << 60);
  EXPECT_EQ(parse_memory_bytes("1.5Gi"), 3 * kGiB / 2);
  EXPECT_EQ(parse_memory_bytes("0.5"), 1);    // fractional bytes round up
  EXPECT_EQ(parse_memory_bytes("1500m"), 2);  // 1.5 bytes
  EXPECT_EQ(parse_memory_bytes("1000m"), 1);
  EXPECT_EQ(parse_memory_bytes("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(parse_memory_bytes("9223372036854775807000m"), INT64_MAX);
}

TEST(Quantity, Rejects) {
  for (std::string_view bad : {"",     "-1", "-0.5", "abc",  "1.2.3", ".",   "1 Gi", " 1",  "1Gi ", "1gi", "1K",
                               "1Gib", "1e", "Gi",   "1..0", "0x10",  "1,5", "nan",  "inf", "--1",  "+-1", "1m1"}) {
    EXPECT_FALSE(parse_memory_bytes(bad).has_value()) << "'" << bad << "'";
    EXPECT_FALSE(parse_cpu_milli(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(Quantity, RejectsOverflow) {
  EXPECT_FALSE(parse_memory_bytes("9223372036854775808").has_value());
  EXPECT_FALSE(parse_memory_bytes("8Ei").has_value());
  EXPECT_FALSE(parse_memory_bytes("10E").has_value());
  EXPECT_FALSE(parse_memory_bytes("99999999999999999999999999999999999999999999Ei").has_value());
  EXPECT_FALSE(parse_memory_bytes("9223372036854775807.5").has_value());
  EXPECT_FALSE(parse_cpu_milli("9223372036854775807").has_value());
  EXPECT_FALSE(parse_cpu_milli("10E").has_value());
  EXPECT_EQ(parse_cpu_milli("9223372036854775807m"), INT64_MAX);
  EXPECT_EQ(parse_cpu_milli("9223372036854775.807"), INT64_MAX);
  EXPECT_EQ(parse_memory_bytes("0E"), 0);
  EXPECT_EQ(parse_memory_bytes("0.000000000000000000000000000000001Ei"), 1);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(ScenarioYaml, GpuMemoryOvercommitByNodePool) {
  auto parts = parse(
      "cluster:\n"
      "  gpu_memory_overcommit: {inference: 1.5, default: 1.2}\n"
      "  nodes:\n"
      "    - {name: serve, cpu: 8, memory: 32Gi, gpus: 1, gpu_model: H100, gpu_memory: 80Gi,\n"
      "       labels: {scheduling.tessera.dev/node-pool: inference}}\n"
      "    - {name: train, cpu: 8, memory: 32Gi, gpus: 1, gpu_model: H100, gpu_memory: 80Gi}\n");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  EXPECT_EQ(parts->cluster->nodes[0].gpu_memory_overcommit_milli, 1500);
  EXPECT_EQ(parts->cluster->nodes[1].gpu_memory_overcommit_milli, 1200);
  auto plain = parse("cluster:\n  nodes:\n    - {name: n, cpu: 8, memory: 32Gi}\n");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->cluster->nodes[0].gpu_memory_overcommit_milli, 1000);
  expect_error_at(
      parse("cluster:\n  gpu_memory_overcommit: {inference: 0.5}\n  nodes: [{name: n, cpu: 1, memory: 1Gi}]\n"), 2, 38,
      "cluster.gpu_memory_overcommit.inference", "0.5 is not between 1 and 8");
  expect_error_at(parse("cluster:\n  gpu_memory_overcommit: 1.5\n  nodes: [{name: n, cpu: 1, memory: 1Gi}]\n"), 2, 26,
                  "cluster.gpu_memory_overcommit", "expected a map of node pools to ratios");
}

}  // namespace
}  // namespace tessera
