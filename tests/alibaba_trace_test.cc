#include "sim/alibaba_trace.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

constexpr std::string_view kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";
constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time\n";

std::string read_data_file(const std::string& relative_path) {
  std::ifstream file(std::string(TESSERA_DATA_DIR) + "/" + relative_path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Every error reads "SOURCE:LINE: column 'FIELD': ...".
template <typename T>
void expect_error_at(const Result<T>& result, std::string_view source, int line, std::string_view column,
                     std::string_view detail = "") {
  ASSERT_FALSE(result.ok()) << "expected an error at " << source << ":" << line << " column " << column;
  const std::string& message = result.error().message;
  const std::string prefix =
      std::string(source) + ":" + std::to_string(line) + ": column '" + std::string(column) + "': ";
  EXPECT_TRUE(message.starts_with(prefix)) << "message: " << message << "\nexpected prefix: " << prefix;
  EXPECT_NE(message.find(detail), std::string::npos) << "message: " << message << "\nexpected to contain: " << detail;
}

ClusterSpec two_model_cluster() {
  auto cluster =
      parse_alibaba_nodes(std::string(kNodeHeader) + "n0,64000,262144,2,P100\nn1,32000,131072,4,T4\n", "nodes.csv");
  EXPECT_TRUE(cluster.ok()) << cluster.error().message;
  return *cluster;
}

std::string pod_row(std::string_view name, std::string_view num_gpu, std::string_view gpu_milli,
                    std::string_view gpu_spec = "", std::string_view creation = "10",
                    std::string_view deletion = "110") {
  std::ostringstream row;
  row << name << ",4000,8192," << num_gpu << "," << gpu_milli << "," << gpu_spec << ",LS,Running," << creation << ","
      << deletion << "," << creation << "\n";
  return row.str();
}

// ----- Node list -----

TEST(AlibabaNodes, MapsNodesDevicesAndLabels) {
  auto cluster = parse_alibaba_nodes(std::string(kNodeHeader) +
                                         "gpu-a,64000,262144,2,P100\n"
                                         "cpu-a,32000,131072,0,\n"
                                         "gpu-b,96000,786432,8,V100M32\n"
                                         "gpu-c,8000,1024,1,Mystery\n",
                                     "nodes.csv");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  ASSERT_EQ(cluster->nodes.size(), 4U);
  const NodeSpec& gpu_a = cluster->nodes[0];
  EXPECT_EQ(gpu_a.name, "gpu-a");
  EXPECT_EQ(gpu_a.allocatable.cpu_milli, 64000);
  EXPECT_EQ(gpu_a.allocatable.memory_bytes, 262144 * kMiB);
  ASSERT_EQ(gpu_a.gpu_count(), 2);
  EXPECT_EQ(cluster->models.name(gpu_a.gpus[0].model), "P100");
  EXPECT_EQ(gpu_a.gpus[1].memory_bytes, 16 * kGiB);
  EXPECT_EQ(gpu_a.labels.at("tessera.dev/gpu-model"), "P100");
  EXPECT_TRUE(gpu_a.schedulable);

  const NodeSpec& cpu_a = cluster->nodes[1];
  EXPECT_EQ(cpu_a.gpu_count(), 0);
  EXPECT_TRUE(cpu_a.labels.empty());

  EXPECT_EQ(cluster->models.name(cluster->nodes[2].gpus[0].model), "V100M32");
  EXPECT_EQ(cluster->nodes[2].gpus[0].memory_bytes, 32 * kGiB);
  // Unknown models define the catalog too; their memory is unknown.
  EXPECT_EQ(cluster->models.name(cluster->nodes[3].gpus[0].model), "Mystery");
  EXPECT_EQ(cluster->nodes[3].gpus[0].memory_bytes, 0);
  EXPECT_EQ(cluster->models.size(), 3U);
}

TEST(AlibabaNodes, GpuMemoryPerModel) {
  EXPECT_EQ(alibaba_gpu_memory_bytes("V100M16"), 16 * kGiB);
  EXPECT_EQ(alibaba_gpu_memory_bytes("V100M32"), 32 * kGiB);
  EXPECT_EQ(alibaba_gpu_memory_bytes("P100"), 16 * kGiB);
  EXPECT_EQ(alibaba_gpu_memory_bytes("T4"), 16 * kGiB);
  EXPECT_EQ(alibaba_gpu_memory_bytes("A10"), 24 * kGiB);
  EXPECT_EQ(alibaba_gpu_memory_bytes("G1"), 32 * kGiB);
  EXPECT_EQ(alibaba_gpu_memory_bytes("G2"), 32 * kGiB);
  EXPECT_EQ(alibaba_gpu_memory_bytes("G3"), 32 * kGiB);
}

TEST(AlibabaNodes, ColumnsAreFoundByNameAndExtrasIgnored) {
  auto cluster = parse_alibaba_nodes("model,rack,gpu,sn,memory_mib,cpu_milli\nT4,r1,4,n0,1024,2000\n", "nodes.csv");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  ASSERT_EQ(cluster->nodes.size(), 1U);
  EXPECT_EQ(cluster->nodes[0].name, "n0");
  EXPECT_EQ(cluster->nodes[0].allocatable.cpu_milli, 2000);
  EXPECT_EQ(cluster->nodes[0].gpu_count(), 4);
}

TEST(AlibabaNodes, QuotedFieldsCrlfBlankLinesAndBom) {
  auto cluster = parse_alibaba_nodes(
      "\xEF\xBB\xBFsn,cpu_milli,memory_mib,gpu,model\r\n"
      "\"rack-a,node-1\",1000,1024,1,\"T4\"\r\n"
      "\r\n"
      "\"multi\nline\",1000,1024,0,\r\n"
      "\"say \"\"hi\"\"\",1000,1024,0,",  // no final newline
      "nodes.csv");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  ASSERT_EQ(cluster->nodes.size(), 3U);
  EXPECT_EQ(cluster->nodes[0].name, "rack-a,node-1");
  EXPECT_EQ(cluster->nodes[0].labels.at("tessera.dev/gpu-model"), "T4");
  EXPECT_EQ(cluster->nodes[1].name, "multi\nline");
  EXPECT_EQ(cluster->nodes[2].name, "say \"hi\"");
}

TEST(AlibabaNodes, RealTraceGpuNodes) {
  auto cluster = parse_alibaba_nodes(read_data_file("alibaba-gpu-v2023/openb_node_list_gpu_node.csv"),
                                     "openb_node_list_gpu_node.csv");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  EXPECT_EQ(cluster->nodes.size(), 1213U);
  int gpus = 0;
  for (const NodeSpec& node : cluster->nodes) gpus += node.gpu_count();
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ(cluster->gpu_capacity_milli(), 6212 * 1000);
  for (std::string_view model : {"A10", "G2", "G3", "P100", "T4", "V100M16", "V100M32"}) {
    EXPECT_TRUE(cluster->models.find(model).has_value()) << model;
  }
  EXPECT_EQ(cluster->models.size(), 7U);
}

TEST(AlibabaNodes, RealTraceAllNodes) {
  auto cluster = parse_alibaba_nodes(read_data_file("alibaba-gpu-v2023/openb_node_list_all_node.csv"),
                                     "openb_node_list_all_node.csv");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  EXPECT_EQ(cluster->nodes.size(), 1523U);
}

TEST(AlibabaNodes, EmptyFileOrNoHeader) {
  expect_error_at(parse_alibaba_nodes("", "empty.csv"), "empty.csv", 1, "sn", "empty");
  expect_error_at(parse_alibaba_nodes("\n  \n\r\n", "blank.csv"), "blank.csv", 1, "sn", "empty");
}

TEST(AlibabaNodes, MissingColumn) {
  expect_error_at(parse_alibaba_nodes("sn,cpu_milli,memory_mib,model\nn0,1,1,T4\n", "nodes.csv"), "nodes.csv", 1, "gpu",
                  "missing");
  // A header that is really a data row.
  expect_error_at(parse_alibaba_nodes("n0,64000,262144,2,P100\n", "nodes.csv"), "nodes.csv", 1, "sn", "missing");
}

TEST(AlibabaNodes, DuplicateHeaderColumn) {
  expect_error_at(parse_alibaba_nodes("sn,cpu_milli,memory_mib,gpu,model,gpu\n", "nodes.csv"), "nodes.csv", 1, "gpu",
                  "twice");
}

TEST(AlibabaNodes, WrongNumberOfFields) {
  const std::string header(kNodeHeader);
  expect_error_at(parse_alibaba_nodes(header + "n0,1000,1024,0,\nn1,1000,1024\n", "nodes.csv"), "nodes.csv", 3, "gpu",
                  "3 fields (expected 5");
  expect_error_at(parse_alibaba_nodes(header + "n0,1000,1024,0,,extra\n", "nodes.csv"), "nodes.csv", 2, "#6",
                  "6 fields");
  // An unquoted comma inside a name splits it.
  expect_error_at(parse_alibaba_nodes(header + "rack-a,node-1,1000,1024,0,\n", "nodes.csv"), "nodes.csv", 2, "#6");
}

TEST(AlibabaNodes, BadNumbers) {
  const std::string header(kNodeHeader);
  expect_error_at(parse_alibaba_nodes(header + "n0,lots,1024,0,\n", "n.csv"), "n.csv", 2, "cpu_milli",
                  "'lots' is not a number");
  expect_error_at(parse_alibaba_nodes(header + "n0,1000,1.5,0,\n", "n.csv"), "n.csv", 2, "memory_mib",
                  "'1.5' is not a whole number");
  expect_error_at(parse_alibaba_nodes(header + "n0,1000,1024,-2,\n", "n.csv"), "n.csv", 2, "gpu", "-2 is negative");
  expect_error_at(parse_alibaba_nodes(header + "n0,1000,1024,65,X\n", "n.csv"), "n.csv", 2, "gpu",
                  "65 is out of range");
  expect_error_at(parse_alibaba_nodes(header + "n0,1000,99999999999999999999,0,\n", "n.csv"), "n.csv", 2, "memory_mib",
                  "too large");
  expect_error_at(parse_alibaba_nodes(header + "n0,1000,8796093022208,0,\n", "n.csv"), "n.csv", 2, "memory_mib",
                  "out of range");
  expect_error_at(parse_alibaba_nodes(header + "n0,,1024,0,\n", "n.csv"), "n.csv", 2, "cpu_milli", "is empty");
  expect_error_at(parse_alibaba_nodes(header + "n0,+5,1024,0,\n", "n.csv"), "n.csv", 2, "cpu_milli", "expected");
}

TEST(AlibabaNodes, DuplicateNodeName) {
  expect_error_at(parse_alibaba_nodes(std::string(kNodeHeader) + "n0,1,1,0,\nn1,1,1,0,\nn0,1,1,0,\n", "nodes.csv"),
                  "nodes.csv", 4, "sn", "duplicate node name 'n0' (expected unique names; first on line 2)");
  expect_error_at(parse_alibaba_nodes(std::string(kNodeHeader) + ",1,1,0,\n", "nodes.csv"), "nodes.csv", 2, "sn",
                  "is empty");
}

TEST(AlibabaNodes, ModelRules) {
  const std::string header(kNodeHeader);
  expect_error_at(parse_alibaba_nodes(header + "n0,1,1,2,\n", "nodes.csv"), "nodes.csv", 2, "model",
                  "the node has 2 GPUs");
  expect_error_at(parse_alibaba_nodes(header + "n0,1,1,2,A|B\n", "nodes.csv"), "nodes.csv", 2, "model", "'|'");
  // 64 distinct models are fine, the 65th is not.
  std::string text = header;
  for (int i = 0; i < 65; ++i) {
    const std::string number = std::to_string(i);
    text.append("n").append(number).append(",1,1,1,M").append(number).append("\n");
  }
  expect_error_at(parse_alibaba_nodes(text, "nodes.csv"), "nodes.csv", 66, "model", "at most 64 models");
  text.resize(text.rfind("n64,"));
  EXPECT_TRUE(parse_alibaba_nodes(text, "nodes.csv").ok());
}

TEST(AlibabaNodes, MalformedQuotingNamesTheLineAndColumn) {
  const std::string header(kNodeHeader);
  // A quote inside an unquoted field.
  expect_error_at(parse_alibaba_nodes(header + "n0,1,1,0,\nn\"1,1,1,0,\n", "nodes.csv"), "nodes.csv", 3, "sn",
                  "malformed quoting");
  // Text after a closing quote.
  expect_error_at(parse_alibaba_nodes(header + "n0,\"1\"x,1,0,\n", "nodes.csv"), "nodes.csv", 2, "cpu_milli",
                  "malformed quoting");
  // A quote never closed: reported where its row starts.
  expect_error_at(parse_alibaba_nodes(header + "n0,1,1,0,\nn1,\"1,1,0,\nn2,1,1,0,\n", "nodes.csv"), "nodes.csv", 3,
                  "cpu_milli", "never closed");
}

TEST(AlibabaNodes, LineNumbersCountPhysicalLines) {
  // A quoted name spanning two lines and a blank line come before the bad row on line 6.
  const std::string text = std::string(kNodeHeader) + "\"two\nlines\",1,1,0,\n\nn1,1,1,0,\nn2,x,1,0,\n";
  expect_error_at(parse_alibaba_nodes(text, "nodes.csv"), "nodes.csv", 6, "cpu_milli");
}

// ----- Pod list -----

TEST(AlibabaPods, MapsGpuRequestsAndTimes) {
  const ClusterSpec cluster = two_model_cluster();
  const std::string text = std::string(kPodHeader) + pod_row("whole", "1", "1000", "", "30", "90") +
                           pod_row("portion", "1", "460", "T4", "20", "20") +
                           pod_row("multi", "8", "1000", "P100|T4", "10", "100") +
                           pod_row("cpu-only", "0", "0", "", "20", "50") + pod_row("two", "2", "", "", "0", "5");
  auto workloads = parse_alibaba_pods(text, "pods.csv", cluster);
  ASSERT_TRUE(workloads.ok()) << workloads.error().message;
  ASSERT_EQ(workloads->size(), 5U);
  // Sorted by arrival, ties kept in file order.
  std::vector<std::string> names;
  for (const WorkloadSpec& workload : *workloads) names.push_back(workload.name);
  EXPECT_EQ(names, (std::vector<std::string>{"two", "multi", "portion", "cpu-only", "whole"}));

  const WorkloadSpec& multi = (*workloads)[1];
  ASSERT_EQ(multi.pods.size(), 1U);
  EXPECT_EQ(multi.min_member, 1);
  EXPECT_EQ(multi.kind, WorkloadKind::kTrain);
  EXPECT_TRUE(multi.queue.empty());
  EXPECT_DOUBLE_EQ(multi.arrival_seconds, 10);
  EXPECT_DOUBLE_EQ(multi.duration_seconds, 90);
  EXPECT_EQ(multi.pods[0].name, "multi");
  EXPECT_EQ(multi.pods[0].request, (Resources{4000, 8192 * kMiB}));
  EXPECT_EQ(multi.pods[0].gpu, GpuRequest::whole(8));
  EXPECT_TRUE(multi.pods[0].allowed_models.allows(*cluster.models.find("P100")));
  EXPECT_TRUE(multi.pods[0].allowed_models.allows(*cluster.models.find("T4")));
  EXPECT_FALSE(multi.pods[0].allowed_models.is_any());

  const WorkloadSpec& portion = (*workloads)[2];
  EXPECT_EQ(portion.pods[0].gpu, GpuRequest::portion(460));
  EXPECT_DOUBLE_EQ(portion.duration_seconds, 0);
  EXPECT_TRUE(portion.pods[0].allowed_models.allows(*cluster.models.find("T4")));
  EXPECT_FALSE(portion.pods[0].allowed_models.allows(*cluster.models.find("P100")));

  EXPECT_EQ((*workloads)[0].pods[0].gpu, GpuRequest::whole(2));
  EXPECT_EQ((*workloads)[3].pods[0].gpu, GpuRequest::none());
  EXPECT_EQ((*workloads)[4].pods[0].gpu, GpuRequest::whole(1));
  EXPECT_TRUE((*workloads)[4].pods[0].allowed_models.is_any());
}

TEST(AlibabaPods, OptionalColumnsMayBeAbsent) {
  const ClusterSpec cluster = two_model_cluster();
  auto workloads = parse_alibaba_pods(
      "deletion_time,creation_time,gpu_spec,gpu_milli,num_gpu,memory_mib,cpu_milli,name\n9,1,,250,1,64,100,p\n",
      "pods.csv", cluster);
  ASSERT_TRUE(workloads.ok()) << workloads.error().message;
  ASSERT_EQ(workloads->size(), 1U);
  EXPECT_EQ((*workloads)[0].pods[0].gpu, GpuRequest::portion(250));
  EXPECT_DOUBLE_EQ((*workloads)[0].duration_seconds, 8);
}

TEST(AlibabaPods, TheMultiGpuListsFiveColumnsAreEnough) {
  // The dataset's multi-GPU pod lists have only these: no gpu_spec (any model), no times.
  const ClusterSpec cluster = two_model_cluster();
  const std::string text = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,4000,8192,2,0\np1,1000,1024,1,250\n";
  std::string untimed = "stale";
  auto workloads = parse_alibaba_pods(text, "multi.csv", cluster, &untimed);
  ASSERT_TRUE(workloads.ok()) << workloads.error().message;
  ASSERT_EQ(workloads->size(), 2U);
  EXPECT_EQ((*workloads)[0].pods[0].gpu, GpuRequest::whole(2));
  EXPECT_TRUE((*workloads)[0].pods[0].allowed_models.is_any());
  EXPECT_DOUBLE_EQ((*workloads)[1].arrival_seconds, 0);
  EXPECT_LT((*workloads)[1].duration_seconds, 0);  // runs until the end
  EXPECT_EQ(untimed,
            "multi.csv: column 'creation_time': missing from the header (a timeline replay needs creation_time and "
            "deletion_time; arrival mode needs neither)");
  // Where the times are there, they count and nothing is said.
  auto timed = parse_alibaba_pods(std::string(kPodHeader) + pod_row("p", "1", "500"), "pods.csv", cluster, &untimed);
  ASSERT_TRUE(timed.ok()) << timed.error().message;
  EXPECT_TRUE(untimed.empty()) << untimed;
  // Without `untimed`, the times stay required.
  expect_error_at(parse_alibaba_pods(text, "multi.csv", cluster), "multi.csv", 1, "creation_time", "missing");
}

TEST(AlibabaPods, HeaderErrors) {
  const ClusterSpec cluster = two_model_cluster();
  expect_error_at(parse_alibaba_pods("", "pods.csv", cluster), "pods.csv", 1, "name", "empty");
  expect_error_at(
      parse_alibaba_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time\n", "pods.csv", cluster),
      "pods.csv", 1, "deletion_time", "missing");
}

TEST(AlibabaPods, GpuMilliRules) {
  const ClusterSpec cluster = two_model_cluster();
  const std::string header(kPodHeader);
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "1", "0"), "pods.csv", cluster), "pods.csv", 2, "gpu_milli",
                  "0 is out of range (expected milli-GPUs of the one GPU, a whole number from 1 to 1000)");
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "1", "1001"), "pods.csv", cluster), "pods.csv", 2,
                  "gpu_milli", "1001 is out of range");
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "1", ""), "pods.csv", cluster), "pods.csv", 2, "gpu_milli",
                  "is empty");
  // Ignored for other GPU counts, but still a number when present.
  EXPECT_TRUE(parse_alibaba_pods(header + pod_row("p", "0", "5000"), "pods.csv", cluster).ok());
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "0", "half"), "pods.csv", cluster), "pods.csv", 2,
                  "gpu_milli", "not a number");
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "4", "0.5"), "pods.csv", cluster), "pods.csv", 2,
                  "gpu_milli", "not a whole number");
}

TEST(AlibabaPods, NumGpuRange) {
  const ClusterSpec cluster = two_model_cluster();
  const std::string header(kPodHeader);
  EXPECT_TRUE(parse_alibaba_pods(header + pod_row("p", "64", "1000"), "pods.csv", cluster).ok());
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "65", "1000"), "pods.csv", cluster), "pods.csv", 2,
                  "num_gpu", "65 is out of range");
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "-1", "1000"), "pods.csv", cluster), "pods.csv", 2,
                  "num_gpu", "negative");
}

TEST(AlibabaPods, UnknownGpuModel) {
  const ClusterSpec cluster = two_model_cluster();
  const std::string text = std::string(kPodHeader) + pod_row("ok", "1", "1000") + pod_row("p", "1", "1000", "T4|H100");
  expect_error_at(parse_alibaba_pods(text, "pods.csv", cluster), "pods.csv", 3, "gpu_spec",
                  "unknown GPU model 'H100' in gpu_spec; the cluster has: P100, T4");
  expect_error_at(
      parse_alibaba_pods(std::string(kPodHeader) + pod_row("p", "1", "1000", "T4||P100"), "pods.csv", cluster),
      "pods.csv", 2, "gpu_spec", "empty model name");
  expect_error_at(
      parse_alibaba_pods(std::string(kPodHeader) + pod_row("p", "1", "1000", "T4"), "pods.csv", ClusterSpec{}),
      "pods.csv", 2, "gpu_spec", "the cluster has no GPU models");
}

TEST(AlibabaPods, TimeRules) {
  const ClusterSpec cluster = two_model_cluster();
  const std::string header(kPodHeader);
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "0", "0", "", "100", "99"), "pods.csv", cluster), "pods.csv",
                  2, "deletion_time", "99 is before creation_time 100");
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "0", "0", "", "-5", "99"), "pods.csv", cluster), "pods.csv",
                  2, "creation_time", "negative");
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "0", "0", "", "1.5", "99"), "pods.csv", cluster), "pods.csv",
                  2, "creation_time", "not a whole number");
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "0", "0", "", "5", ""), "pods.csv", cluster), "pods.csv", 2,
                  "deletion_time", "is empty");
}

TEST(AlibabaPods, RowShapeAndNames) {
  const ClusterSpec cluster = two_model_cluster();
  const std::string header(kPodHeader);
  expect_error_at(parse_alibaba_pods(header + "p,1,1,0,0,,LS,Running,1,2\n", "pods.csv", cluster), "pods.csv", 2,
                  "scheduled_time", "10 fields (expected 11");
  expect_error_at(parse_alibaba_pods(header + pod_row("p", "0", "0") + pod_row("p", "0", "0"), "pods.csv", cluster),
                  "pods.csv", 3, "name", "duplicate pod name 'p'");
  // A quoted name with a comma is one field.
  auto quoted = parse_alibaba_pods(header + pod_row("\"a,b\"", "0", "0"), "pods.csv", cluster);
  ASSERT_TRUE(quoted.ok()) << quoted.error().message;
  EXPECT_EQ((*quoted)[0].name, "a,b");
}

struct PodKindCounts {
  int whole = 0;
  int portion = 0;
  int cpu_only = 0;
};

// Counts pod kinds straight from the text, without the parser: the trace has no quoting.
PodKindCounts count_pod_kinds(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  std::map<std::string, size_t> column;
  {
    std::istringstream header(line);
    std::string name;
    for (size_t i = 0; std::getline(header, name, ','); ++i) column[name] = i;
  }
  PodKindCounts counts;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::istringstream row(line);
    std::string field;
    while (std::getline(row, field, ',')) fields.push_back(field);
    const int num_gpu = std::stoi(fields.at(column.at("num_gpu")));
    const int gpu_milli = std::stoi(fields.at(column.at("gpu_milli")));
    if (num_gpu == 0) {
      ++counts.cpu_only;
    } else if (num_gpu == 1 && gpu_milli < 1000) {
      ++counts.portion;
    } else {
      ++counts.whole;
    }
  }
  return counts;
}

PodKindCounts count_pod_kinds(const std::vector<WorkloadSpec>& workloads) {
  PodKindCounts counts;
  for (const WorkloadSpec& workload : workloads) {
    switch (workload.pods.at(0).gpu.kind) {
      case GpuRequest::Kind::kNone:
        ++counts.cpu_only;
        break;
      case GpuRequest::Kind::kPortion:
        ++counts.portion;
        break;
      case GpuRequest::Kind::kWhole:
        ++counts.whole;
        break;
      case GpuRequest::Kind::kMemory:
        ADD_FAILURE() << "memory request in the Alibaba trace";
        break;
    }
  }
  return counts;
}

TEST(AlibabaPods, RealTraceDefault) {
  auto cluster = parse_alibaba_nodes(read_data_file("alibaba-gpu-v2023/openb_node_list_gpu_node.csv"), "nodes");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  const std::string text = read_data_file("alibaba-gpu-v2023/openb_pod_list_default.csv");
  auto workloads = parse_alibaba_pods(text, "openb_pod_list_default.csv", *cluster);
  ASSERT_TRUE(workloads.ok()) << workloads.error().message;
  EXPECT_EQ(workloads->size(), 8152U);

  const PodKindCounts expected = count_pod_kinds(text);
  const PodKindCounts parsed = count_pod_kinds(*workloads);
  EXPECT_EQ(expected.whole + expected.portion + expected.cpu_only, 8152);
  EXPECT_EQ(parsed.whole, expected.whole);
  EXPECT_EQ(parsed.portion, expected.portion);
  EXPECT_EQ(parsed.cpu_only, expected.cpu_only);
  EXPECT_TRUE(std::is_sorted(workloads->begin(), workloads->end(), [](const WorkloadSpec& a, const WorkloadSpec& b) {
    return a.arrival_seconds < b.arrival_seconds;
  }));
}

TEST(AlibabaPods, EveryRealPodListParses) {
  auto cluster = parse_alibaba_nodes(read_data_file("alibaba-gpu-v2023/openb_node_list_all_node.csv"), "nodes");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  for (std::string_view name : {"default", "gpushare20", "gpushare40", "gpushare60", "gpushare80", "gpushare100",
                                "cpu0", "cpu050", "cpu100", "cpu200", "cpu250", "cpu300"}) {
    const std::string file = "openb_pod_list_" + std::string(name) + ".csv";
    const std::string text = read_data_file("alibaba-gpu-v2023/" + file);
    auto workloads = parse_alibaba_pods(text, file, *cluster);
    ASSERT_TRUE(workloads.ok()) << workloads.error().message;
    const PodKindCounts expected = count_pod_kinds(text);
    EXPECT_EQ(workloads->size(), static_cast<size_t>(expected.whole + expected.portion + expected.cpu_only)) << file;
  }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Files re-exported through pandas write "nan" for empty fields.
TEST(AlibabaPods, PandasNanMeansEmpty) {
  ClusterSpec cluster = two_model_cluster();
  auto pods = parse_alibaba_pods(std::string(kPodHeader) + pod_row("p0", "1", "500", "nan"), "pods.csv", cluster);
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  EXPECT_TRUE((*pods)[0].pods[0].allowed_models.is_any());
  auto nodes =
      parse_alibaba_nodes(std::string(kNodeHeader) + "n0,32000,262144,0,nan\nn1,32000,262144,2,nan\n", "nodes.csv");
  expect_error_at(nodes, "nodes.csv", 3, "model", "is empty");
}

}  // namespace
}  // namespace tessera
