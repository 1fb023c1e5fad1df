#include "cli/sim_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli/cycle_flags.h"
#include "cli/gpu_memory_sim.h"
#include "cli/policy_list.h"
#include "policy/policy_registry.h"
#include "sim/arrival_replay.h"
#include "sim/html_report.h"
#include "sim/json_report.h"
#include "sim/scenario_loader.h"
#include "sim/statistics.h"
#include "sim/timeline_replay.h"
#include "sim/topology_experiment.h"

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
  std::string tie_break = "lowest-index";
  bool no_offline = false;
  int samples = 600;
  double arrival_speedup = 1;
  double horizon_seconds = 0;
  double cycle_interval_seconds = 10;
  CycleFlags cycle;
  int threads = 0;
  std::string json_path;
  std::string report_dir = "tessera-report";
  bool no_report = false;
  bool check_invariants = false;
  GpuMemorySimFlags gpu_memory;
  std::string work_limits = "on";  // on, off, or both (one replay each, compared)
  bool start_estimates = false;
  // No wall-clock budget by default: a replay's estimates must not depend on the machine's speed.
  // 10 forward cycles per estimate keep the organisation scenario's whole day to about 2.6 CPU
  // minutes (30 take 6.6; docs/results.md, "Start-time estimates").
  EstimateOptions estimates{.max_steps = 10, .max_wall_seconds = std::numeric_limits<double>::infinity()};
};

void print_arrival_table(const ArrivalReport& report) {
  fmt::print("{} — {} nodes, {} GPUs; {} pods sampled until {:.0f}% of GPU capacity arrived; seeds {}; ties {}\n",
             report.scenario, report.nodes, report.gpus, report.workload_pods, report.target_pct,
             fmt::join(report.seeds, ","), tie_break_description(report.tie_break));
  fmt::print("  cluster:  {}\n  workload: {}\n\n", report.cluster_source, report.workload_source);
  fmt::print("{:<13} {:>17} {:>15} {:>10} {:>12} {:>10} {:>9}\n", "policy", "GPU alloc @100%", "min-max", "frag @100%",
             "failed pods", "time/run", "fgd gap");
  for (const ArrivalPolicyResult& policy : report.policies) {
    int64_t failed = 0;
    for (const auto& [type, count] : policy.by_type) failed += count.failed;
    const std::optional<double> closed = fgd_gap_closed(report, policy);
    fmt::print("{:<13} {:>10.2f}% ±{:<5.2f} {:>6.2f}-{:<6.2f}% {:>9.2f}% {:>12.1f} {:>9.3f}s {:>9}\n", policy.policy,
               policy.alloc_at_100_pct, policy.alloc_at_100_pct_stddev, policy.alloc_at_100_pct_min,
               policy.alloc_at_100_pct_max, policy.frag_at_100_pct,
               static_cast<double>(failed) / static_cast<double>(std::max<size_t>(policy.runs.size(), 1)),
               policy.wall_seconds_median, closed ? fmt::format("{:.0f}%", 100 * *closed) : "-");
  }
  if (!report.offline_alloc_pct.empty()) {
    const auto [low, high] = std::minmax_element(report.offline_alloc_pct.begin(), report.offline_alloc_pct.end());
    fmt::print("{:<13} {:>10.2f}% ±{:<5.2f} {:>6.2f}-{:<6.2f}%\n", "offline", mean(report.offline_alloc_pct),
               stddev(report.offline_alloc_pct), *low, *high);
  }
  fmt::print(
      "\nGPU alloc @100%: allocated GPUs / capacity when arrived GPU requests reach 100% of capacity "
      "(mean ± stddev over seeds).\nfrag @100%: free GPU capacity the workload mix cannot use (FGD), "
      "% of capacity. failed pods: per seed, over the whole run.\n");
  if (!report.offline_alloc_pct.empty()) {
    fmt::print(
        "offline: the same arrived pods packed knowing them all in advance (largest first; fractional pods a device\n"
        "at a time), the ceiling.\n"
        "fgd gap: the share of fgd's distance to the offline packing that the policy closes.\n");
    if (offline_chooses_pods(report)) {
      const ArrivedAsk asked = most_asked(report);
      fmt::print(
          "The arrived pods ask up to {:.0f}% of the cluster's CPU and {:.0f}% of its memory: some must fail whatever\n"
          "the placement, and the offline packing, serving the largest GPU requests first, chooses which. Its figure\n"
          "measures that choice, not the packing, so no share of fgd's gap is given.\n",
          asked.cpu_pct, asked.memory_pct);
    }
  }
}

// A span of simulated time, short: "40 s", "12.5 min", "3.2 h", "2.1 d".
std::string short_duration(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  if (seconds < 60) return fmt::format("{:.0f} s", seconds);
  if (seconds < 3600) return fmt::format("{:.1f} min", seconds / 60);
  if (seconds < 2 * 86400) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} d", seconds / 86400);
}

// "2.1 h (763)": a time to deserved quota and, in brackets, the cycles it took.
std::string time_and_cycles(const StarvationSummary& starvation, double seconds, double cycles) {
  if (starvation.resolved == 0) return "-";
  return fmt::format("{} ({:.0f})", short_duration(seconds), cycles);
}

void print_queue_row(const QueueResult& queue, int indent) {
  const std::string name = std::string(static_cast<size_t>(2 * indent), ' ') + queue.name;
  const StarvationSummary& starvation = queue.starvation;
  const std::string starved =
      starvation.episodes > starvation.resolved
          ? fmt::format("{} ({} open)", starvation.episodes, starvation.episodes - starvation.resolved)
          : fmt::format("{}", starvation.episodes);
  fmt::print("  {:<18} {:>8.0f} {:>8.1f} {:>8.1f} {:>6} {:>11} {:>12} {:>13} {:>7} {:>9.2f} {:>8} {:>8}\n", name,
             queue.deserved_gpus, queue.mean_allocated_gpus, queue.mean_fair_share_gpus,
             queue.mean_fair_share_gpus > 0 ? fmt::format("{:.1f}%", queue.fairness_gap_pct) : "-", starved,
             time_and_cycles(starvation, starvation.median_seconds, starvation.median_cycles),
             time_and_cycles(starvation, starvation.max_seconds, starvation.max_cycles), queue.evictions,
             queue.lost_gpu_hours, queue.scheduled > 0 ? short_duration(queue.wait_seconds.p50) : "-",
             queue.completed > 0 ? short_duration(queue.jct_seconds.p50) : "-");
}

// Past this many leaf queues the table shows the inner queues and the leaves furthest from their
// fair share; the JSON and the HTML report have them all.
constexpr size_t kMaxLeavesInTable = 20;
constexpr size_t kWorstLeavesShown = 10;

void print_queue_summary(const TimelinePolicyResult& policy, double start_seconds) {
  const CycleReplayResult& cycle = *policy.cycle;
  fmt::print("\n{}: queues (GPUs, time averages); ended after {} ({}); {} cycles, {} run, {:.2f} ms per cycle run\n",
             policy.policy, short_duration(cycle.end_seconds - start_seconds), cycle.end_reason, cycle.cycles,
             cycle.cycles_run, 1000 * cycle.cycle_wall_seconds.mean);
  fmt::print("  {:<18} {:>8} {:>8} {:>8} {:>6} {:>11} {:>12} {:>13} {:>7} {:>9} {:>8} {:>8}\n", "queue", "deserved",
             "alloc", "fair", "gap", "starved", "deserved p50", "deserved max", "evicted", "lost GPUh", "wait p50",
             "JCT p50");
  size_t leaves = 0;
  for (const QueueResult& queue : cycle.queues) leaves += queue.leaf ? 1 : 0;
  if (leaves < kMaxLeavesInTable) {
    for (const QueueResult& queue : cycle.queues) print_queue_row(queue, queue.depth);
  } else {
    std::vector<const QueueResult*> worst;
    for (const QueueResult& queue : cycle.queues) {
      if (!queue.leaf) {
        print_queue_row(queue, queue.depth);
      } else if (queue.mean_fair_share_gpus > 0) {
        worst.push_back(&queue);
      }
    }
    std::stable_sort(worst.begin(), worst.end(), [](const QueueResult* a, const QueueResult* b) {
      return a->fairness_gap_pct > b->fairness_gap_pct;
    });
    if (worst.size() > kWorstLeavesShown) worst.resize(kWorstLeavesShown);
    fmt::print("  {} leaf queues; the {} furthest from their fair share:\n", leaves, worst.size());
    for (const QueueResult* queue : worst) print_queue_row(*queue, 1);
  }
  const ChurnSummary& churn = cycle.churn;
  std::vector<std::string> by_action;
  for (const ActionChurn& action : churn.by_action) {
    if (action.evictions == 0) continue;
    std::string text = fmt::format("{} {}", action.action, action.whole_workloads);
    if (action.moved > 0) text += fmt::format(" ({} moved)", action.moved);
    if (action.extras > 0) text += fmt::format(" +{} extras", action.extras);
    by_action.push_back(std::move(text));
  }
  fmt::print(
      "  churn: {} workloads evicted{}, {:.1f} per 1,000 scheduled, {:.2f} GPU-hours lost; max evicted / needed GPUs "
      "{}, moved / needed {}\n",
      churn.whole_workloads, by_action.empty() ? "" : fmt::format(" ({})", fmt::join(by_action, ", ")),
      churn.per_1000_scheduled, churn.lost_gpu_hours,
      churn.groups > 0 ? fmt::format("{:.2f}", churn.max_evicted_to_needed) : "-",
      churn.groups > 0 ? fmt::format("{:.2f}", churn.max_moved_to_needed) : "-");
  fmt::print("  reservations: {} made, {:.1f} node-hours held\n", cycle.reservations_made, cycle.reserved_node_hours);
  fmt::print("  completed {} of {}; JCT p50 {}, p90 {}; {} still pending\n", cycle.completed, policy.workloads,
             cycle.completed > 0 ? short_duration(cycle.jct_seconds.p50) : "-",
             cycle.completed > 0 ? short_duration(cycle.jct_seconds.p90) : "-", [&] {
               int64_t pending = 0;
               for (const auto& [code, count] : cycle.pending_by_code) pending += count;
               return pending;
             }());
}

void print_limit_summary(const TimelinePolicyResult& policy) {
  const LimitSummary& limits = policy.cycle->limits;
  if (!limits.enabled) {
    fmt::print("  time and idle limits: off; {:.1f} of {:.1f} GPU-hours held idle; train wait p50 {}, p90 {}\n",
               limits.idle_gpu_hours, limits.gpu_hours, short_duration(limits.train_wait_seconds.p50),
               short_duration(limits.train_wait_seconds.p90));
    return;
  }
  fmt::print(
      "  time and idle limits: {} notices ({} withdrawn), {} stopped, {} requeued, {} made preemptible ({} by the idle "
      "limit, {} false positives); {:.1f} of {:.1f} GPU-hours held idle; train wait p50 {}, p90 {}\n",
      limits.notices, limits.withdrawn, limits.stopped, limits.requeued, limits.made_preemptible, limits.by_idle_limit,
      limits.false_positives, limits.idle_gpu_hours, limits.gpu_hours, short_duration(limits.train_wait_seconds.p50),
      short_duration(limits.train_wait_seconds.p90));
  for (const std::string& example : limits.examples) fmt::print("    {}\n", example);
}

void print_estimate_summary(const TimelinePolicyResult& policy) {
  const EstimateSummary& estimates = policy.cycle->estimates;
  if (!estimates.enabled) return;
  fmt::print(
      "  start estimates: {} pending arrivals estimated, {} unreached; {} started: |error| p50 {}, p90 {}, max {} ({} "
      "later, {} earlier than estimated by over a minute); estimator per cycle p50 {:.1f} ms, max {:.1f} ms, {:.0f} "
      "steps p50, over {} cycles\n",
      estimates.estimated, estimates.unreached, estimates.compared, short_duration(estimates.abs_error_seconds.p50),
      short_duration(estimates.abs_error_seconds.p90), short_duration(estimates.abs_error_seconds.max), estimates.late,
      estimates.early, estimates.wall_seconds.p50 * 1000, estimates.wall_seconds.max * 1000, estimates.steps.p50,
      estimates.calls);
}

// The same replay with the limits off and on, policy by policy.
void print_limit_comparison(const TimelineReport& off, const TimelineReport& on) {
  fmt::print("\nTime and idle limits, off -> on:\n");
  fmt::print("  {:<12} {:>22} {:>14} {:>22} {:>22} {:>18} {:>16}\n", "policy", "idle GPU-hours held", "recovered",
             "train wait p50", "train wait p90", "stopped/requeued", "false positives");
  for (size_t i = 0; i < off.policies.size() && i < on.policies.size(); ++i) {
    if (!off.policies[i].cycle || !on.policies[i].cycle) continue;
    const LimitSummary& before = off.policies[i].cycle->limits;
    const LimitSummary& after = on.policies[i].cycle->limits;
    fmt::print("  {:<12} {:>22} {:>14.1f} {:>22} {:>22} {:>18} {:>16}\n", on.policies[i].policy,
               fmt::format("{:.1f} -> {:.1f}", before.idle_gpu_hours, after.idle_gpu_hours),
               before.idle_gpu_hours - after.idle_gpu_hours,
               fmt::format("{} -> {}", short_duration(before.train_wait_seconds.p50),
                           short_duration(after.train_wait_seconds.p50)),
               fmt::format("{} -> {}", short_duration(before.train_wait_seconds.p90),
                           short_duration(after.train_wait_seconds.p90)),
               fmt::format("{}/{}", after.stopped, after.requeued), after.false_positives);
  }
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
  if (report.replay == "cycle") {
    fmt::print(
        "\nThe scheduling cycle ran every {} s of simulated time. alloc, fair: mean GPUs held and due. gap: "
        "mean |alloc - fair| / mean fair.\nstarved: episodes owed GPUs (a pending gang fits within the deserved "
        "quota); deserved p50, max: time (cycles) until owed nothing.\n",
        report.cycle_interval_seconds);
    for (const TimelinePolicyResult& policy : report.policies) {
      if (!policy.cycle) continue;
      print_queue_summary(policy, report.start_seconds);
      print_limit_summary(policy);
      print_estimate_summary(policy);
    }
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
  if (options.mode == "gpu-memory") {
    if (!options.json_path.empty()) {
      fmt::print(stderr, "error: --json: gpu-memory mode prints its tables only (docs/gpu-memory-sim.md)\n");
      return 2;
    }
    return run_gpu_memory_sim(options.gpu_memory, options.seeds, options.first_seed);
  }
  if (!(options.cycle_interval_seconds > 0) || !std::isfinite(options.cycle_interval_seconds)) {
    fmt::print(stderr, "error: --cycle-interval {} is not a positive number of seconds\n",
               options.cycle_interval_seconds);
    return 2;
  }
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
  for (const std::string& warning : scenario->warnings) fmt::print(stderr, "warning: {}\n", warning);
  if (options.mode == "arrival") {
    ArrivalOptions arrival;
    arrival.target_pct = options.target_pct;
    arrival.seeds.clear();
    for (int i = 0; i < options.seeds; ++i) arrival.seeds.push_back(options.first_seed + static_cast<uint64_t>(i));
    arrival.threads = options.threads;
    arrival.check_invariants = options.check_invariants;
    arrival.tie_break = *parse_tie_break(options.tie_break);
    arrival.offline_bound = !options.no_offline;
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
  const bool topology_mode = options.mode == "topology";
  timeline.cycle_interval_seconds = options.cycle_interval_seconds;
  timeline.cycle = options.cycle.options();
  timeline.arrival_speedup = options.arrival_speedup;
  timeline.horizon_seconds = options.horizon_seconds;
  timeline.threads = options.threads;
  timeline.check_invariants = options.check_invariants;
  timeline.work_limits = options.work_limits != "off";
  timeline.start_estimates = options.start_estimates;
  timeline.estimates = options.estimates;
  if (topology_mode) {
    auto report = run_topology_experiment(*scenario, policies, timeline);
    if (!report) {
      fmt::print(stderr, "error: {}\n", report.error().message);
      return 2;
    }
    fmt::print("{}", topology_table(*report));
    return write_outputs(topology_report_json(*report), options.no_report ? "" : topology_report_html(*report),
                         options);
  }
  std::optional<TimelineReport> without_limits;
  if (options.work_limits == "both") {
    TimelineOptions off = timeline;
    off.work_limits = false;
    auto report = run_timeline_experiment(*scenario, policies, off);
    if (!report) {
      fmt::print(stderr, "error: {}\n", report.error().message);
      return 2;
    }
    fmt::print("With the time and idle limits off:\n");
    print_timeline_table(*report);
    fmt::print("\nWith the time and idle limits on:\n");
    without_limits = std::move(*report);
  }
  auto report = run_timeline_experiment(*scenario, policies, timeline);
  if (!report) {
    fmt::print(stderr, "error: {}\n", report.error().message);
    return 2;
  }
  print_timeline_table(*report);
  if (without_limits) print_limit_comparison(*without_limits, *report);
  return write_outputs(timeline_report_json(*report), options.no_report ? "" : timeline_report_html(*report), options);
}

}  // namespace

void add_sim_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<SimOptions>();
  CLI::App* sim =
      app.add_subcommand("sim", "Replay a cluster and a workload through the placement policies and report");
  sim->add_option("--mode", options->mode,
                  "arrival: pods arrive and never leave (the FGD experiment); timeline: pods arrive and leave at their "
                  "trace times; gpu-memory: inference pods asking for GPU memory as request and limit against their "
                  "peak (docs/gpu-memory-sim.md); topology: the timeline of a scenario with a topology, per policy "
                  "with topology off and under each domain rule (docs/topology.md)")
      ->check(CLI::IsMember({"arrival", "timeline", "gpu-memory", "topology"}))
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
  sim->add_option("--seeds", options->seeds,
                  "Arrival mode: number of seeds (runs per policy); gpu-memory mode: seeds to tune on, and as many "
                  "after them to report on")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sim->add_option("--first-seed", options->first_seed, "Arrival mode: the first seed; the others follow it")
      ->capture_default_str();
  sim->add_option("--target-pct", options->target_pct,
                  "Arrival mode: stop once arrived GPU requests reach this % of capacity")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  sim->add_option("--tie-break", options->tie_break,
                  "Arrival mode: how a policy chooses between equally good nodes: lowest-index, random (the "
                  "first in a random order of the nodes drawn once per seed, as the FGD paper's simulator does) "
                  "or random-each (at random afresh each time, as the stock Kubernetes scheduler does); first-fit "
                  "always takes the lowest index")
      ->check(CLI::IsMember({"lowest-index", "random", "random-each"}))
      ->capture_default_str();
  sim->add_flag("--no-offline", options->no_offline,
                "Arrival mode: skip the offline packing of the arrived pods (the ceiling the policies are measured "
                "against)");
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
  sim->add_option("--cycle-interval", options->cycle_interval_seconds,
                  "Timeline mode, scenarios with queues: simulated seconds between two scheduling cycles (> 0)")
      ->capture_default_str();
  add_cycle_flags(*sim, options->cycle, "Timeline mode, scenarios with queues: ", "");
  sim->add_option("--work-limits", options->work_limits,
                  "Timeline mode, scenarios with queues: apply the queues' time and idle-GPU limits (on), replay as if "
                  "none were set (off), or both, compared")
      ->check(CLI::IsMember({"on", "off", "both"}))
      ->capture_default_str();
  sim->add_flag("--estimates", options->start_estimates,
                "Timeline mode, scenarios with queues: estimate each pending arrival's start and measure the "
                "estimates against the real starts");
  sim->add_option("--estimate-steps", options->estimates.max_steps,
                  "With --estimates: forward cycles per estimate at most")
      ->capture_default_str();
  sim->add_option("--estimate-budget", options->estimates.max_wall_seconds,
                  "With --estimates: wall-clock seconds per estimate at most (default none: the step cap alone bounds "
                  "each estimate, so that the figures repeat run after run)");
  sim->add_option("--json", options->json_path,
                  "Also write the results as JSON to this file (schema: docs/sim-json-schema.md)");
  sim->add_option("--report", options->report_dir, "Directory for the HTML report (index.html) and results.json")
      ->capture_default_str();
  sim->add_flag("--no-report", options->no_report, "Do not write the HTML report");
  sim->add_option("--threads", options->threads, "Worker threads (0: one per core)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  sim->add_flag("--check-invariants", options->check_invariants,
                "Verify the safety invariants after every placement, or after every scheduling cycle (slow)");
  add_gpu_memory_flags(*sim, options->gpu_memory);
  sim->callback([options, &exit_code] { exit_code = run_sim(*options); });
}

}  // namespace tessera
