#include "sim/json_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>

#include "topology_report_fixture.h"

namespace tessera {
namespace {

using nlohmann::json;

ArrivalReport small_arrival_report() {
  ArrivalReport report;
  report.scenario = "tiny";
  report.cluster_source = "nodes.csv";
  report.workload_source = "pods.csv";
  report.nodes = 2;
  report.gpus = 16;
  report.workload_pods = 40;
  report.target_pct = 130;
  report.seeds = {1, 2};

  ArrivalPolicyResult policy;
  policy.policy = "fgd";
  policy.alloc_at_100_pct = 93.123456;
  policy.alloc_at_100_pct_stddev = 0.70710678;
  policy.alloc_at_100_pct_min = 92.6234;
  policy.alloc_at_100_pct_max = 93.6236;
  policy.frag_at_100_pct = 4.0004;
  policy.wall_seconds_median = 0.012345678;
  policy.mean_curve = {{0, 0, 0}, {1, 1, 0.5}, {2, 1.99999, 0.25}};
  policy.by_type = {{"1 GPU", {30, 2}}, {"GPU share", {10, 0}}};
  ArrivalRun run;
  run.seed = 1;
  run.curve = {{0, 0, 0}, {50, 50, 2}};  // per-run curves stay out of the JSON
  run.alloc_at_100_pct = 92.6234;
  run.frag_at_100_pct = 4.5;
  run.final_allocated_pct = 95.5;
  run.pods_arrived = 20;
  run.pods_failed = 1;
  run.by_type = {{"1 GPU", {15, 1}}};
  run.wall_seconds = 0.0123;
  policy.runs.push_back(run);
  run.seed = 2;
  run.alloc_at_100_pct = 93.6236;
  run.wall_seconds = 0.0124;
  policy.runs.push_back(run);
  report.policies.push_back(policy);

  policy.policy = "best-fit";
  policy.alloc_at_100_pct = std::nan("");  // must come out as null, not as an invalid token
  policy.frag_at_100_pct = std::numeric_limits<double>::infinity();
  report.policies.push_back(policy);
  return report;
}

TimelineReport small_timeline_report() {
  TimelineReport report;
  report.scenario = "two jobs";
  report.cluster_source = "s.yaml";
  report.workload_source = "s.yaml";
  report.nodes = 1;
  report.gpus = 8;
  report.start_seconds = 100;
  report.end_seconds = 7300;
  report.arrival_speedup = 2;
  report.horizon_seconds = 7200;
  report.workload_pods = 7;
  TimelinePolicyResult policy;
  policy.policy = "tessera";
  policy.series = {{100, 0, 0, 0, 0, 0}, {3700, 50.00049, 25, 12.5, 1, 1}, {7300, 100, 50, 25, 2, 0}};
  policy.mean_gpu_allocated_pct = 55.5556;
  policy.workloads = 3;
  policy.scheduled = 2;
  policy.never_scheduled = 1;
  policy.pending_seconds = {10, 20, 30, 40, 25};
  policy.by_type = {{"8 GPUs", {1, 1}}, {"1 GPU", {2, 0}}};
  policy.wall_seconds = 0.5;
  report.policies.push_back(policy);
  return report;
}

// One policy with topology off and under one rule.
TopologyReport small_topology_report() { return testing::topology_report_of(small_timeline_report().policies); }

void expect_no_nan_or_infinity(const json& value) {
  const std::string text = value.dump();
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find("nan"), std::string::npos);
  EXPECT_EQ(text.find("Infinity"), std::string::npos);
  EXPECT_EQ(text.find("inf"), std::string::npos);
}

TEST(ArrivalReportJson, TopLevelFields) {
  const json out = arrival_report_json(small_arrival_report());
  EXPECT_EQ(out["schema"], "tessera.sim/v1");
  EXPECT_EQ(out["mode"], "arrival");
  EXPECT_EQ(out["scenario"], "tiny");
  EXPECT_EQ(out["cluster"], (json{{"source", "nodes.csv"}, {"nodes", 2}, {"gpus", 16}}));
  EXPECT_EQ(out["workload"], (json{{"source", "pods.csv"}, {"pods", 40}}));
  EXPECT_EQ(out["target_pct"], 130.0);
  EXPECT_EQ(out["seeds"], (json{1, 2}));
  ASSERT_EQ(out["policies"].size(), 2u);
  EXPECT_EQ(out["policies"][0]["policy"], "fgd");
  EXPECT_EQ(out["policies"][1]["policy"], "best-fit");  // requested order, not sorted
}

// The offline packing with what its arrived pods ask of the cluster: over 100% of the CPU, its
// figure is a choice of pods, and no policy gets a share of fgd's gap to it.
ArrivalReport arrival_report_with_offline(double arrived_cpu_pct) {
  ArrivalReport report = small_arrival_report();
  report.offline_alloc_pct = {97.0, 98.0};
  report.policies[1].alloc_at_100_pct = 95.0;
  report.offline_arrived_cpu_pct = {arrived_cpu_pct - 1, arrived_cpu_pct};
  report.offline_arrived_memory_pct = {60.0, 61.5};
  return report;
}

TEST(ArrivalReportJson, OfflinePackingWithWhatItsPodsAsk) {
  const json fits = arrival_report_json(arrival_report_with_offline(95.5));
  EXPECT_EQ(fits["offline"]["alloc_at_100_pct"], 97.5);
  EXPECT_EQ(fits["offline"]["arrived_cpu_pct"], 95.5);
  EXPECT_EQ(fits["offline"]["arrived_memory_pct"], 61.5);
  EXPECT_EQ(fits["offline"]["chooses_pods"], false);
  EXPECT_TRUE(fits["policies"][1]["fgd_gap_closed"].is_number());
  const json chooses = arrival_report_json(arrival_report_with_offline(130.0));
  EXPECT_EQ(chooses["offline"]["chooses_pods"], true);
  EXPECT_TRUE(chooses["policies"][1]["fgd_gap_closed"].is_null());
}

TEST(ArrivalReportJson, PolicyFieldsAreRounded) {
  const json policy = arrival_report_json(small_arrival_report())["policies"][0];
  EXPECT_EQ(policy["alloc_at_100_pct"], 93.123);
  EXPECT_EQ(policy["alloc_at_100_pct_stddev"], 0.707);
  EXPECT_EQ(policy["alloc_at_100_pct_min"], 92.623);
  EXPECT_EQ(policy["alloc_at_100_pct_max"], 93.624);
  EXPECT_EQ(policy["frag_at_100_pct"], 4.0);
  EXPECT_EQ(policy["wall_seconds_median"], 0.0123);
  ASSERT_EQ(policy["curve"].size(), 3u);
  EXPECT_EQ(policy["curve"][1], (json{{"arrived_pct", 1.0}, {"allocated_pct", 1.0}, {"fragmentation_pct", 0.5}}));
  EXPECT_EQ(policy["curve"][2]["allocated_pct"], 2.0);
  EXPECT_EQ(policy["failed_by_type"],
            (json{{"1 GPU", {{"arrived", 30}, {"failed", 2}}}, {"GPU share", {{"arrived", 10}, {"failed", 0}}}}));
}

TEST(ArrivalReportJson, RunsWithoutCurves) {
  const json runs = arrival_report_json(small_arrival_report())["policies"][0]["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], (json{{"seed", 1},
                           {"alloc_at_100_pct", 92.623},
                           {"frag_at_100_pct", 4.5},
                           {"final_allocated_pct", 95.5},
                           {"pods_arrived", 20},
                           {"pods_failed", 1},
                           {"wall_seconds", 0.0123}}));
  EXPECT_EQ(runs[1]["seed"], 2);
  EXPECT_FALSE(runs[0].contains("curve"));
  EXPECT_FALSE(runs[0].contains("by_type"));
}

TEST(ArrivalReportJson, NonFiniteNumbersAreNull) {
  const json out = arrival_report_json(small_arrival_report());
  EXPECT_TRUE(out["policies"][1]["alloc_at_100_pct"].is_null());
  EXPECT_TRUE(out["policies"][1]["frag_at_100_pct"].is_null());
  expect_no_nan_or_infinity(out);
}

TEST(ArrivalReportJson, ParsesBackUnchanged) {
  const json out = arrival_report_json(small_arrival_report());
  EXPECT_EQ(json::parse(out.dump(2)), out);
  EXPECT_EQ(json::parse(out.dump()), out);
}

TEST(TimelineReportJson, AllFields) {
  const json out = timeline_report_json(small_timeline_report());
  EXPECT_EQ(out["schema"], "tessera.sim/v1");
  EXPECT_EQ(out["mode"], "timeline");
  EXPECT_EQ(out["scenario"], "two jobs");
  EXPECT_EQ(out["cluster"], (json{{"source", "s.yaml"}, {"nodes", 1}, {"gpus", 8}}));
  EXPECT_EQ(out["workload"], (json{{"source", "s.yaml"}, {"pods", 7}, {"workloads", 3}}));
  EXPECT_EQ(out["start_seconds"], 100.0);
  EXPECT_EQ(out["end_seconds"], 7300.0);
  EXPECT_EQ(out["arrival_speedup"], 2.0);
  EXPECT_EQ(out["horizon_seconds"], 7200.0);
  ASSERT_EQ(out["policies"].size(), 1u);
  const json& policy = out["policies"][0];
  EXPECT_EQ(policy["policy"], "tessera");
  EXPECT_EQ(policy["mean_gpu_allocated_pct"], 55.556);
  EXPECT_EQ(policy["workloads"], 3);
  EXPECT_EQ(policy["scheduled"], 2);
  EXPECT_EQ(policy["never_scheduled"], 1);
  EXPECT_EQ(policy["pending_seconds"],
            (json{{"p50", 10.0}, {"p90", 20.0}, {"p99", 30.0}, {"max", 40.0}, {"mean", 25.0}}));
  EXPECT_EQ(policy["failed_by_type"],
            (json{{"8 GPUs", {{"arrived", 1}, {"failed", 1}}}, {"1 GPU", {{"arrived", 2}, {"failed", 0}}}}));
  EXPECT_EQ(policy["wall_seconds"], 0.5);
  ASSERT_EQ(policy["series"].size(), 3u);
  EXPECT_EQ(policy["series"][1], (json{{"time_seconds", 3700.0},
                                       {"gpu_allocated_pct", 50.0},
                                       {"cpu_allocated_pct", 25.0},
                                       {"memory_allocated_pct", 12.5},
                                       {"running_pods", 1},
                                       {"pending_pods", 1}}));
  EXPECT_EQ(json::parse(out.dump(2)), out);
  expect_no_nan_or_infinity(out);
}

TEST(TimelineReportJson, NonFiniteQuantilesAreNull) {
  TimelineReport report = small_timeline_report();
  report.policies[0].pending_seconds = {NAN, NAN, NAN, -INFINITY, NAN};
  report.policies[0].series[0].gpu_allocated_pct = INFINITY;
  const json out = timeline_report_json(report);
  EXPECT_TRUE(out["policies"][0]["pending_seconds"]["p50"].is_null());
  EXPECT_TRUE(out["policies"][0]["pending_seconds"]["max"].is_null());
  EXPECT_TRUE(out["policies"][0]["series"][0]["gpu_allocated_pct"].is_null());
  expect_no_nan_or_infinity(out);
}

TEST(TimelineReportJson, EmptyReport) {
  const json out = timeline_report_json(TimelineReport{});
  EXPECT_TRUE(out["policies"].is_array());
  EXPECT_TRUE(out["policies"].empty());
  EXPECT_TRUE(out["workload"]["workloads"].is_null());
  EXPECT_EQ(json::parse(out.dump()), out);
}

TEST(TopologyReportJson, EachRunWithItsSharesWaitsAndTimeline) {
  const json out = topology_report_json(small_topology_report());
  EXPECT_EQ(out["schema"], "tessera.sim/v1");
  EXPECT_EQ(out["mode"], "topology");
  EXPECT_EQ(out["cluster"], (json{{"source", "racks.yaml"}, {"nodes", 64}, {"gpus", 512}}));
  EXPECT_EQ(out["levels"], (json{"tessera.dev/block", "tessera.dev/rack"}));
  EXPECT_EQ(out["run_time_factors"], (json{1.4, 1.15, 1.0}));
  ASSERT_EQ(out["runs"].size(), 2u);
  const json& on = out["runs"][1];
  EXPECT_EQ(on["policy"], "tessera");
  EXPECT_EQ(on["topology"], "fragmentation");
  EXPECT_EQ(on["multi_node_gangs"], 8);
  EXPECT_EQ(on["within"][1], (json{{"level", "tessera.dev/rack"}, {"gangs", 7}, {"pct", 87.5}}));
  EXPECT_EQ(out["runs"][0]["within"][1]["pct"], 37.5);
  EXPECT_EQ(on["jct_p90_seconds"], 2400.0);  // rounded to 3 decimals
  EXPECT_EQ(on["required_gangs"], 4);
  EXPECT_EQ(on["required_started"], 3);
  EXPECT_EQ(on["required_wait_p50_seconds"], 300.0);
  EXPECT_EQ(on["evictions"], 5);
  EXPECT_EQ(on["timeline"]["policy"], "tessera");
  EXPECT_EQ(json::parse(out.dump(2)), out);
  expect_no_nan_or_infinity(out);
}

// Every key the JSON holds is documented in docs/sim-json-schema.md, as `path.to.key` with the
// array and type levels written as in the documentation (`policies[]`, `failed_by_type.<type>`).
void collect_documented_paths(const json& value, const std::string& path, std::set<std::string>& paths) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      // Under failed_by_type the keys are pod types, documented once as <type>.
      const std::string name = path.ends_with("failed_by_type") ? "<type>" : key;
      const std::string child_path = path.empty() ? name : path + "." + name;
      paths.insert(child_path);
      collect_documented_paths(child, child_path, paths);
    }
  } else if (value.is_array()) {
    for (const json& child : value) collect_documented_paths(child, path + "[]", paths);
  }
}

// The documented name of a path: tables list policy fields without the "policies[]." prefix.
std::string documented_name(const std::string& path) {
  const std::string prefix = "policies[].";
  return path.starts_with(prefix) ? path.substr(prefix.size()) : path;
}

TEST(SimJsonSchemaDoc, DocumentsEveryField) {
  std::ifstream file(std::string(TESSERA_DATA_DIR) + "/../docs/sim-json-schema.md");
  ASSERT_TRUE(file) << "docs/sim-json-schema.md is missing";
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  std::set<std::string> paths;
  collect_documented_paths(arrival_report_json(arrival_report_with_offline(90.0)), "", paths);
  collect_documented_paths(timeline_report_json(small_timeline_report()), "", paths);
  // A topology run's `timeline` is a timeline policy's entry, documented as such.
  std::set<std::string> topology_paths;
  collect_documented_paths(topology_report_json(small_topology_report()), "", topology_paths);
  for (const std::string& path : topology_paths) {
    if (!path.starts_with("runs[].timeline.")) paths.insert(path);
  }
  for (const std::string& path : paths) {
    EXPECT_NE(doc.find("| `" + documented_name(path) + "` |"), std::string::npos)
        << "field " << path << " is not documented in docs/sim-json-schema.md";
  }
}

}  // namespace
}  // namespace tessera
