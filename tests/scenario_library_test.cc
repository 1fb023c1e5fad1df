// The scenario library (scenarios/*.yaml) and how the loader combines files with queues.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "policy/fair_share.h"
#include "sim/cycle_replay.h"
#include "sim/json_report.h"
#include "sim/scenario_loader.h"
#include "sim/timeline_replay.h"

namespace tessera {
namespace {

std::vector<std::filesystem::path> library_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(TESSERA_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<Scenario> load_file(const std::filesystem::path& path) {
  ScenarioRequest request;
  request.cluster = path.string();
  return load_scenario(request);
}

TEST(ScenarioLibrary, EveryFileLoadsWithQueuesAndLeafWorkloads) {
  const std::vector<std::filesystem::path> files = library_files();
  EXPECT_GE(files.size(), 4U);
  for (const std::filesystem::path& path : files) {
    SCOPED_TRACE(path.string());
    auto scenario = load_file(path);
    ASSERT_TRUE(scenario.ok()) << scenario.error().message;
    EXPECT_FALSE(scenario->cluster->nodes.empty());
    EXPECT_FALSE(scenario->workloads.empty());
    ASSERT_FALSE(scenario->queues.empty());
    auto tree = QueueTree::build(scenario->queues, scenario->resources);
    ASSERT_TRUE(tree.ok()) << tree.error().message;
    for (const WorkloadSpec& workload : scenario->workloads) {
      auto queue = tree->find(workload.queue);
      ASSERT_TRUE(queue.has_value()) << workload.name << " is in " << workload.queue;
      EXPECT_TRUE(tree->is_leaf(*queue)) << workload.name << " is in " << workload.queue;
    }
    EXPECT_TRUE(std::is_sorted(
        scenario->workloads.begin(), scenario->workloads.end(),
        [](const WorkloadSpec& a, const WorkloadSpec& b) { return a.arrival_seconds < b.arrival_seconds; }));
  }
}

TEST(ScenarioLibrary, FilesSayHowToRunThem) {
  for (const std::filesystem::path& path : library_files()) {
    std::ifstream file(path);
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const std::string command = "tessera sim --mode timeline --scenario scenarios/" + path.filename().string();
    EXPECT_NE(text.find(command), std::string::npos) << path << " should mention: " << command;
  }
}

TEST(ScenarioLibrary, SusanJoeJemma) {
  auto scenario = load_file(std::filesystem::path(TESSERA_SOURCE_DIR) / "scenarios" / "susan-joe-jemma.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  ASSERT_EQ(scenario->queues.size(), 4U);
  EXPECT_EQ(scenario->cluster->gpu_capacity_milli(), 8000);
  EXPECT_EQ(scenario->workloads.front().queue, "susan");
  EXPECT_EQ(scenario->workloads.back().queue, "jemma");
}

TEST(ScenarioLibrary, GangBehindNotebooksStartsOnlyWithReservations) {
  auto scenario = load_file(std::filesystem::path(TESSERA_SOURCE_DIR) / "scenarios" / "gang-behind-notebooks.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  // The gang (2 h of work) finishes last: its completion time is the longest.
  auto gang_completion = [&](bool reservations) {
    TimelineOptions options;
    options.cycle.reservations.enabled = reservations;
    auto result = run_timeline_policy(*scenario, "tessera", options);
    EXPECT_TRUE(result.ok()) << result.error().message;
    return result.ok() && result->cycle ? result->cycle->jct_seconds.max : -1.0;
  };
  // With a reservation the gang waits for 8 nodes to drain (the 1-hour notebooks on them end),
  // not for the six-hour stream of notebooks to end.
  const double reserved = gang_completion(true);
  const double unreserved = gang_completion(false);
  EXPECT_LT(reserved, 7200 + 2 * 3600) << "the gang should start within 2 hours of arriving";
  EXPECT_GT(unreserved, 7200 + 4 * 3600) << "without reservations it waits for the stream to thin out";
}

TEST(ScenarioLibrary, SkippingIdleCyclesChangesNothingWithReservations) {
  // The reservation threshold passing is a reason to run a cycle, as an arrival is.
  auto scenario = load_file(std::filesystem::path(TESSERA_SOURCE_DIR) / "scenarios" / "gang-behind-notebooks.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  auto replay = [&](bool skip) {
    TimelineOptions options;
    options.skip_idle_cycles = skip;
    auto result = run_cycle_replay(*scenario, "tessera", options);
    EXPECT_TRUE(result.ok()) << result.error().message;
    TimelinePolicyResult comparable = std::move(*result);
    comparable.wall_seconds = 0;
    comparable.cycle->cycles_run = 0;
    comparable.cycle->cycle_wall_seconds = {};
    TimelineReport report;
    report.policies.push_back(std::move(comparable));
    return timeline_report_json(report).dump();
  };
  const std::string every = replay(false);
  EXPECT_NE(every.find(R"("reservations":{"made":1)"), std::string::npos);
  EXPECT_EQ(every, replay(true));
}

// A temporary directory removed at the end of the test.
class TempDir {
 public:
  TempDir() : path_(std::filesystem::temp_directory_path() / ("tessera-library-test-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream(file) << text;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

constexpr std::string_view kClusterYaml = R"(cluster:
  nodes: [{name: n, cpu: 8, memory: 64Gi, gpus: 8, gpu_model: H100, gpu_memory: 80Gi}]
queues: [{name: ignored}]
workloads: [{name: x, queue: ignored, pod: {gpus: 1}}]
)";

constexpr std::string_view kWorkloadYaml = R"(queues:
  - {name: team, quota: {gpu/H100: {deserved: 4}}}
workloads: [{name: w, queue: team, pod: {gpus: 1}}]
)";

TEST(ScenarioLoader, QueuesComeFromTheFileThatSuppliesTheWorkloads) {
  TempDir dir;
  const std::string cluster = dir.write("cluster.yaml", std::string(kClusterYaml));
  const std::string workloads = dir.write("workloads.yaml", std::string(kWorkloadYaml));

  // One file with both: its queues.
  auto both =
      load_scenario(ScenarioRequest{.cluster = cluster, .workload = "builtin:default", .workload_given = false});
  ASSERT_TRUE(both.ok()) << both.error().message;
  ASSERT_EQ(both->queues.size(), 1U);
  EXPECT_EQ(both->queues[0].name, "ignored");
  EXPECT_EQ(both->resources.size(), 3U);

  // --cluster A --workload B: B's queues and resources; gpu/H100 is checked against A's models.
  auto combined = load_scenario(ScenarioRequest{.cluster = cluster, .workload = workloads, .workload_given = true});
  ASSERT_TRUE(combined.ok()) << combined.error().message;
  ASSERT_EQ(combined->queues.size(), 1U);
  EXPECT_EQ(combined->queues[0].name, "team");
  EXPECT_EQ(combined->resources.names().back(), "gpu/H100");
  EXPECT_EQ(combined->queues[0].quota.size(), 4U);
  EXPECT_EQ(combined->workloads.size(), 1U);

  // An Alibaba pod list brings no queues.
  auto alibaba =
      load_scenario(ScenarioRequest{.cluster = cluster, .workload = "builtin:default", .workload_given = true});
  ASSERT_TRUE(alibaba.ok()) << alibaba.error().message;
  EXPECT_TRUE(alibaba->queues.empty());
  EXPECT_EQ(alibaba->resources.size(), 3U);

  // A model the --cluster lacks is an error in the workload file.
  const std::string a100 =
      dir.write("a100.yaml",
                "cluster:\n  nodes: [{name: n, cpu: 8, memory: 64Gi, gpus: 8, gpu_model: A100, gpu_memory: 80Gi}]\n");
  auto unknown = load_scenario(ScenarioRequest{.cluster = a100, .workload = workloads, .workload_given = true});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find(workloads + ":2:26: field 'queues[0].quota.gpu/H100': unknown GPU model"),
            std::string::npos)
      << unknown.error().message;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// The limits stop exactly the 80 notebooks left idle, requeue the six 30-hour jobs once each at
// their 24-hour limit, and touch no bursty or warming-up notebook.
TEST(ScenarioLibrary, ResearchNotebooksStopsOnlyTheIdleNotebooks) {
  auto scenario = load_file(std::filesystem::path(TESSERA_SOURCE_DIR) / "scenarios" / "research-notebooks.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  TimelineOptions options;
  options.cycle_interval_seconds = 60;
  auto on = run_timeline_policy(*scenario, "tessera", options);
  ASSERT_TRUE(on.ok()) << on.error().message;
  const LimitSummary& limits = on->cycle->limits;
  EXPECT_EQ(limits.stopped, 80);
  EXPECT_EQ(limits.by_idle_limit, 80);
  EXPECT_EQ(limits.requeued, 6);
  EXPECT_EQ(limits.false_positives, 0);
  EXPECT_EQ(limits.withdrawn, 0);
  options.work_limits = false;
  auto off = run_timeline_policy(*scenario, "tessera", options);
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_LT(limits.idle_gpu_hours, off->cycle->limits.idle_gpu_hours);
  EXPECT_LE(limits.train_wait_seconds.p90, off->cycle->limits.train_wait_seconds.p90);
}

}  // namespace
}  // namespace tessera
