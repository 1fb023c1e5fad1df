#include "sim/topology_experiment.h"

#include <fmt/format.h>

#include "sim/parallel_runs.h"

namespace tessera {

Result<TopologyReport> run_topology_experiment(const Scenario& scenario, std::span<const std::string> policies,
                                               const TimelineOptions& options) {
  if (scenario.queues.empty()) {
    return Error{
        fmt::format("scenario '{}' has no queues (expected a queues section: the topology experiment runs "
                    "the scheduling cycle)",
                    scenario.name)};
  }
  if (scenario.cluster->topologies.empty()) {
    return Error{fmt::format("scenario '{}' has no topology (expected a topology section)", scenario.name)};
  }
  if (policies.empty()) return Error{"no policy to run (expected at least one name in --policy)"};
  struct Variant {
    std::string name;
    bool enabled;
    DomainRule rule;
    bool make_room;
  };
  std::vector<Variant> variants = {{"off", false, DomainRule::kFragmentation, true}};
  for (DomainRule rule : {DomainRule::kFragmentation, DomainRule::kFullest, DomainRule::kBestFit})
    variants.push_back({std::string(domain_rule_name(rule)), true, rule, true});
  variants.push_back({"no-room", true, DomainRule::kFragmentation, false});
  const size_t jobs = policies.size() * variants.size();
  auto results = run_in_parallel<Result<TimelinePolicyResult>>(jobs, options.threads, [&](size_t job) {
    TimelineOptions run = options;
    const Variant& variant = variants[job % variants.size()];
    run.cycle.topology.enabled = variant.enabled;
    run.cycle.topology.rule = variant.rule;
    run.cycle.topology.make_room = variant.make_room;
    return run_timeline_policy(scenario, policies[job / variants.size()], run);
  });
  TopologyReport report;
  report.scenario = scenario.name;
  report.cluster_source = scenario.cluster_source;
  report.workload_source = scenario.workload_source;
  report.nodes = static_cast<int>(scenario.cluster->nodes.size());
  report.gpus = scenario.cluster->gpu_capacity_milli() / kMilliPerGpu;
  report.run_time_factors = scenario.topology_cost.factors;
  for (size_t job = 0; job < jobs; ++job) {
    if (!results[job]) return results[job].error();
    TopologyRun run{policies[job / variants.size()], variants[job % variants.size()].name, std::move(*results[job])};
    if (run.result.cycle) report.levels = run.result.cycle->topology.levels;
    report.runs.push_back(std::move(run));
  }
  return report;
}

double within_share_pct(const TopologySummary& topology, size_t level) {
  return topology.multi_node_gangs > 0
             ? 100.0 * static_cast<double>(topology.within[level]) / static_cast<double>(topology.multi_node_gangs)
             : 0.0;
}

std::string level_noun(const std::string& label) {
  const size_t slash = label.rfind('/');
  return label.substr(slash == std::string::npos ? 0 : slash + 1);
}

std::string topology_table(const TopologyReport& report) {
  std::string text = fmt::format(
      "{} — {} nodes, {} GPUs; topology levels {}; run-time factors {}\n\n", report.scenario, report.nodes, report.gpus,
      fmt::join(report.levels, " > "),
      report.run_time_factors.empty() ? "none" : fmt::format("{}", fmt::join(report.run_time_factors, " / ")));
  std::string header = fmt::format("{:<13} {:<13}", "policy", "topology");
  for (const std::string& level : report.levels) header += fmt::format(" {:>9}", "in 1 " + level_noun(level));
  header += fmt::format(" {:>9} {:>9} {:>9} {:>13} {:>13} {:>8} {:>9}\n", "JCT p50", "JCT p90", "GPU alloc",
                        "req wait p50", "req wait p90", "req run", "evictions");
  text += header;
  for (const TopologyRun& run : report.runs) {
    const CycleReplayResult& cycle = *run.result.cycle;
    const TopologySummary& topology = cycle.topology;
    std::string row = fmt::format("{:<13} {:<13}", run.policy, run.topology);
    for (size_t level = 0; level < topology.within.size(); ++level)
      row += fmt::format(" {:>8.1f}%", within_share_pct(topology, level));
    row += fmt::format(" {:>8.0f}s {:>8.0f}s {:>8.1f}% {:>12.0f}s {:>12.0f}s {:>4}/{:<3} {:>9}\n",
                       cycle.jct_seconds.p50, cycle.jct_seconds.p90, run.result.mean_gpu_allocated_pct,
                       topology.required_wait_seconds.p50, topology.required_wait_seconds.p90,
                       topology.required_started, topology.required_gangs, cycle.churn.whole_workloads);
    text += row;
  }
  text +=
      "\nin 1 LEVEL: multi-node gangs started within one domain of the level; req: gangs with a required level;\n"
      "no-room: fragmentation, without room made by consolidate, reclaim or preempt for required gangs; evictions:\n"
      "whole workloads evicted (moves included)\n";
  return text;
}

}  // namespace tessera
