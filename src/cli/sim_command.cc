#include "cli/sim_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "cli/policy_list.h"
#include "policy/policy_registry.h"
#include "sim/arrival_replay.h"
#include "sim/html_report.h"
#include "sim/json_report.h"
#include "sim/scenario_loader.h"
#include "sim/timeline_replay.h"

namespace tessera {

namespace {

struct SimOptions {
  std::string mode = "arrival";
  ScenarioRequest scenario;
  std::string scenario_file;
  std::string policies = "tessera,fgd,best-fit,dot-product,gpu-packing,first-fit,spread";
  int seeds = 5;
  uint64_t first_seed = 1;
  double target_pct = 130;
  int samples = 600;
  double arrival_speedup = 1;
  double horizon_seconds = 0;
  int threads = 0;
  std::string json_path;
  std::string report_dir = "tessera-report";
  bool no_report = false;
  bool check_invariants = false;
};

void print_arrival_table(const ArrivalReport& report) {
  fmt::print("{} — {} nodes, {} GPUs; {} pods sampled until {:.0f}% of GPU capacity arrived; seeds {}\n",
             report.scenario, report.nodes, report.gpus, report.workload_pods, report.target_pct,
             fmt::join(report.seeds, ","));
  fmt::print("  cluster:  {}\n  workload: {}\n\n", report.cluster_source, report.workload_source);
  fmt::print("{:<12} {:>17} {:>15} {:>10} {:>12} {:>10}\n", "policy", "GPU alloc @100%", "min-max", "frag @100%",
             "failed pods", "time/run");
  for (const ArrivalPolicyResult& policy : report.policies) {
    int64_t failed = 0;
    for (const auto& [type, count] : policy.by_type) failed += count.failed;
    fmt::print("{:<12} {:>10.2f}% ±{:<5.2f} {:>6.2f}-{:<6.2f}% {:>9.2f}% {:>12.1f} {:>9.3f}s\n", policy.policy,
               policy.alloc_at_100_pct, policy.alloc_at_100_pct_stddev, policy.alloc_at_100_pct_min,
               policy.alloc_at_100_pct_max, policy.frag_at_100_pct,
               static_cast<double>(failed) / static_cast<double>(std::max<size_t>(policy.runs.size(), 1)),
               policy.wall_seconds_median);
  }
  fmt::print(
      "\nGPU alloc @100%: allocated GPUs / capacity when arrived GPU requests reach 100% of capacity "
      "(mean ± stddev over seeds).\nfrag @100%: free GPU capacity the workload mix cannot use (FGD), "
      "% of capacity. failed pods: per seed, over the whole run.\n");
}

void print_timeline_table(const TimelineReport& report) {
  fmt::print("{} — {} nodes, {} GPUs; simulated {:.1f} h{}\n", report.scenario, report.nodes, report.gpus,
             (report.end_seconds - report.start_seconds) / 3600.0,
             report.arrival_speedup != 1 ? fmt::format(" (arrivals sped up {}x)", report.arrival_speedup) : "");
  fmt::print("  cluster:  {}\n  workload: {}\n\n", report.cluster_source, report.workload_source);
  fmt::print("{:<12} {:>14} {:>10} {:>10} {:>12} {:>12} {:>12} {:>9}\n", "policy", "mean GPU alloc", "workloads",
             "never ran", "wait p50", "wait p90", "wait p99", "time");
  for (const TimelinePolicyResult& policy : report.policies) {
    fmt::print("{:<12} {:>13.2f}% {:>10} {:>10} {:>11.0f}s {:>11.0f}s {:>11.0f}s {:>8.2f}s\n", policy.policy,
               policy.mean_gpu_allocated_pct, policy.workloads, policy.never_scheduled, policy.pending_seconds.p50,
               policy.pending_seconds.p90, policy.pending_seconds.p99, policy.wall_seconds);
  }
}

int write_outputs(const nlohmann::json& json, const std::string& html, const SimOptions& options) {
  const std::string json_text = json.dump(2) + "\n";
  auto failed = [](const Status& written) {
    if (!written) fmt::print(stderr, "error: {}\n", written.error().message);
    return !written;
  };
  if (!options.json_path.empty()) {
    if (failed(write_file_atomically(options.json_path, json_text))) return 1;
    fmt::print("\nJSON:   {}\n", options.json_path);
  }
  if (!options.no_report) {
    if (failed(write_html_report(options.report_dir, html))) return 1;
    if (failed(write_file_atomically(std::filesystem::path(options.report_dir) / "results.json", json_text))) return 1;
    fmt::print("Report: {}/index.html (and results.json)\n", options.report_dir);
  }
  return 0;
}

int run_sim(SimOptions options) {
  if (!options.scenario_file.empty()) {
    options.scenario.cluster = options.scenario_file;
    options.scenario.workload = options.scenario_file;
    options.scenario.workload_given = false;
  }
  std::vector<std::string> policies = split_policy_list(options.policies);
  auto scenario = load_scenario(options.scenario);
  if (!scenario) {
    fmt::print(stderr, "error: {}\n", scenario.error().message);
    return 2;
  }
  if (options.mode == "arrival") {
    ArrivalOptions arrival;
    arrival.target_pct = options.target_pct;
    arrival.seeds.clear();
    for (int i = 0; i < options.seeds; ++i) arrival.seeds.push_back(options.first_seed + static_cast<uint64_t>(i));
    arrival.threads = options.threads;
    arrival.check_invariants = options.check_invariants;
    auto report = run_arrival_experiment(*scenario, policies, arrival);
    if (!report) {
      fmt::print(stderr, "error: {}\n", report.error().message);
      return 2;
    }
    print_arrival_table(*report);
    return write_outputs(arrival_report_json(*report), options.no_report ? "" : arrival_report_html(*report), options);
  }
  TimelineOptions timeline;
  timeline.samples = options.samples;
  timeline.arrival_speedup = options.arrival_speedup;
  timeline.horizon_seconds = options.horizon_seconds;
  timeline.threads = options.threads;
  timeline.check_invariants = options.check_invariants;
  auto report = run_timeline_experiment(*scenario, policies, timeline);
  if (!report) {
    fmt::print(stderr, "error: {}\n", report.error().message);
    return 2;
  }
  print_timeline_table(*report);
  return write_outputs(timeline_report_json(*report), options.no_report ? "" : timeline_report_html(*report), options);
}

}  // namespace

void add_sim_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<SimOptions>();
  CLI::App* sim =
      app.add_subcommand("sim", "Replay a cluster and a workload through the placement policies and report");
  sim->add_option("--mode", options->mode,
                  "arrival: pods arrive and never leave (the FGD experiment); timeline: pods arrive and leave at their "
                  "trace times")
      ->check(CLI::IsMember({"arrival", "timeline"}))
      ->capture_default_str();
  sim->add_option("--cluster", options->scenario.cluster,
                  "Nodes: builtin:NAME, an Alibaba node-list CSV, or a scenario YAML")
      ->capture_default_str();
  sim->add_option("--workload", options->scenario.workload,
                  "Pods: builtin:NAME, an Alibaba pod-list CSV, or a scenario YAML")
      ->capture_default_str()
      ->each([options](const std::string&) { options->scenario.workload_given = true; });
  sim->add_option("--scenario", options->scenario_file, "A scenario YAML carrying both the cluster and the workloads")
      ->excludes("--cluster")
      ->excludes("--workload");
  sim->add_option("--policy", options->policies,
                  fmt::format("Comma-separated policies to compare: {}", fmt::join(policy_names(), ", ")))
      ->capture_default_str();
  sim->add_option("--seeds", options->seeds, "Arrival mode: number of seeds (runs per policy)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sim->add_option("--first-seed", options->first_seed, "Arrival mode: the first seed; the others follow it")
      ->capture_default_str();
  sim->add_option("--target-pct", options->target_pct,
                  "Arrival mode: stop once arrived GPU requests reach this % of capacity")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  sim->add_option("--samples", options->samples, "Timeline mode: points per time series")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  sim->add_option("--arrival-speedup", options->arrival_speedup,
                  "Timeline mode: divide arrival times by this (durations kept) to replay a trace at a higher load")
      ->check(CLI::Range(1e-6, 1e9))
      ->capture_default_str();
  sim->add_option("--horizon", options->horizon_seconds,
                  "Timeline mode: stop this many seconds after the first arrival (0: when the last workload ends)")
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
  sim->add_option("--json", options->json_path,
                  "Also write the results as JSON to this file (schema: docs/sim-json-schema.md)");
  sim->add_option("--report", options->report_dir, "Directory for the HTML report (index.html) and results.json")
      ->capture_default_str();
  sim->add_flag("--no-report", options->no_report, "Do not write the HTML report");
  sim->add_option("--threads", options->threads, "Worker threads (0: one per core)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  sim->add_flag("--check-invariants", options->check_invariants,
                "Verify the safety invariants after every placement (slow)");
  sim->callback([options, &exit_code] { exit_code = run_sim(*options); });
}

}  // namespace tessera
