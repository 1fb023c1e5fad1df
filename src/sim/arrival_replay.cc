#include "sim/arrival_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "engine/cluster_state.h"
#include "engine/invariants.h"
#include "engine/placer.h"
#include "policy/fragmentation.h"
#include "policy/policy_registry.h"
#include "sim/offline_packing.h"
#include "sim/parallel_runs.h"
#include "sim/pod_type_label.h"
#include "sim/statistics.h"

namespace tessera {

namespace {

// Keeps the cluster's FGD fragmentation (the reference's definition: kFgdRules against the
// typical pod types) up to date one node at a time.
class FragmentationTracker {
 public:
  FragmentationTracker(const ClusterState& cluster, const WorkloadMix& mix)
      : mix_(mix), per_node_(static_cast<size_t>(cluster.node_count())) {
    for (NodeIndex node = 0; node < cluster.node_count(); ++node) update(cluster, node);
  }
  void update(const ClusterState& cluster, NodeIndex node) {
    double& value = per_node_[static_cast<size_t>(node)];
    total_ -= value;
    value = expected_fragmentation(cluster.node_spec(node), cluster.node_state(node), mix_);
    total_ += value;
  }
  double total() const { return total_; }

 private:
  const WorkloadMix& mix_;
  std::vector<double> per_node_;
  double total_ = 0;
};

// The arrival order of the reference: every pod of the population once, in a seeded random
// order, then pods drawn from it with replacement.
class ArrivalSequence {
 public:
  ArrivalSequence(size_t population, uint64_t seed) : random_(seed), order_(population) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::shuffle(order_.begin(), order_.end(), random_);
  }
  size_t next() {
    const size_t index = arrivals_ < order_.size() ? order_[arrivals_] : static_cast<size_t>(random_() % order_.size());
    ++arrivals_;
    return index;
  }

 private:
  std::mt19937_64 random_;
  std::vector<size_t> order_;
  size_t arrivals_ = 0;
};

// The offline ceiling for one seed: the pods that arrive until their GPU requests reach
// min(target, 100%) of capacity, packed knowing them all (offline_packing.h), as % of capacity;
// and what those pods ask of the cluster's CPU and memory.
OfflineRun offline_run(const Scenario& scenario, const std::vector<PodSpec>& population, uint64_t seed,
                       double target_pct) {
  const double capacity = static_cast<double>(scenario.cluster->gpu_capacity_milli());
  const int64_t device_memory = scenario.cluster->median_device_memory();
  ArrivalSequence sequence(population.size(), seed);
  std::vector<PodSpec> arrived;
  int64_t arrived_milli = 0;
  Resources asked;
  while (100.0 * static_cast<double>(arrived_milli) / capacity < std::min(target_pct, 100.0)) {
    const PodSpec& pod = population[sequence.next()];
    arrived.push_back(pod);
    arrived_milli += pod.gpu.pending_milli(device_memory);
    asked += pod.request;
  }
  Resources allocatable;
  for (const NodeSpec& node : scenario.cluster->nodes) allocatable += node.allocatable;
  auto percent_of = [](int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  return {.alloc_pct = 100.0 * static_cast<double>(offline_packed_gpu_milli(scenario.cluster, arrived)) / capacity,
          .arrived_cpu_pct = percent_of(asked.cpu_milli, allocatable.cpu_milli),
          .arrived_memory_pct = percent_of(asked.memory_bytes, allocatable.memory_bytes)};
}

// The curve's last point at or before `arrived_pct` (allocation only grows with arrivals).
ArrivalPoint point_at(const std::vector<ArrivalPoint>& curve, double arrived_pct) {
  auto it = std::upper_bound(curve.begin(), curve.end(), arrived_pct,
                             [](double x, const ArrivalPoint& p) { return x < p.arrived_pct; });
  if (it == curve.begin()) return ArrivalPoint{arrived_pct, 0, 0};
  ArrivalPoint point = *std::prev(it);
  point.arrived_pct = arrived_pct;
  return point;
}

ArrivalPolicyResult summarize(std::string policy, std::vector<ArrivalRun> runs, double target_pct) {
  ArrivalPolicyResult result;
  result.policy = std::move(policy);
  std::vector<double> alloc, frag, walls;
  for (const ArrivalRun& run : runs) {
    alloc.push_back(run.alloc_at_100_pct);
    frag.push_back(run.frag_at_100_pct);
    walls.push_back(run.wall_seconds);
    for (const auto& [type, count] : run.by_type) {
      result.by_type[type].arrived += count.arrived;
      result.by_type[type].failed += count.failed;
    }
  }
  result.alloc_at_100_pct = mean(alloc);
  result.alloc_at_100_pct_stddev = stddev(alloc);
  result.alloc_at_100_pct_min = alloc.empty() ? 0 : *std::min_element(alloc.begin(), alloc.end());
  result.alloc_at_100_pct_max = alloc.empty() ? 0 : *std::max_element(alloc.begin(), alloc.end());
  result.frag_at_100_pct = mean(frag);
  result.wall_seconds_median = median(walls);
  for (int step = 0; step <= static_cast<int>(std::floor(target_pct)); ++step) {
    ArrivalPoint sum{static_cast<double>(step), 0, 0};
    for (const ArrivalRun& run : runs) {
      ArrivalPoint point = point_at(run.curve, step);
      sum.allocated_pct += point.allocated_pct / static_cast<double>(runs.size());
      sum.fragmentation_pct += point.fragmentation_pct / static_cast<double>(runs.size());
    }
    result.mean_curve.push_back(sum);
  }
  result.runs = std::move(runs);
  return result;
}

}  // namespace

Result<ArrivalRun> run_arrival_seed(const Scenario& scenario, std::string_view policy_name, uint64_t seed,
                                    const ArrivalOptions& options) {
  const std::vector<PodSpec> population = all_pods(scenario);
  if (population.empty()) return Error{fmt::format("workload {} has no pods to sample from", scenario.workload_source)};
  const WorkloadMix mix = WorkloadMix::from_pods(population);
  auto policy = make_policy(policy_name, mix);
  if (!policy) return policy.error();

  const auto started = std::chrono::steady_clock::now();
  ClusterState cluster(scenario.cluster);
  Placer placer(**policy);
  // Its own stream, so the arrivals are the same whichever way ties are broken.
  if (options.tie_break == TieBreak::kRandomOrder) {
    placer.break_ties_in_random_order(seed ^ 0x9e3779b97f4a7c15ULL, cluster.node_count());
  } else if (options.tie_break == TieBreak::kRandomEach) {
    placer.break_ties_at_random(seed ^ 0x9e3779b97f4a7c15ULL);
  }
  const WorkloadMix typical = mix.typical();
  FragmentationTracker fragmentation(cluster, typical);
  const double capacity = static_cast<double>(cluster.totals().gpu_capacity_milli);
  if (capacity <= 0) return Error{fmt::format("cluster {} has no GPUs", scenario.cluster_source)};
  const int64_t device_memory = scenario.cluster->median_device_memory();
  // Arrivals stop at a share of the GPU capacity; a list without GPU requests never gets there.
  const bool any_gpu_request = std::any_of(population.begin(), population.end(), [&](const PodSpec& pod) {
    return pod.gpu.pending_milli(device_memory) > 0;
  });
  if (!any_gpu_request) {
    return Error{fmt::format("workload {} has no pod that requests a GPU: arrival mode adds pods until their GPU "
                             "requests reach {}% of the cluster's GPUs (use a list with GPU pods, or timeline mode)",
                             scenario.workload_source, options.target_pct)};
  }

  ArrivalRun run;
  run.seed = seed;
  int64_t arrived_milli = 0;
  bool reached_100 = false;
  double last_recorded = 0;
  ArrivalSequence sequence(population.size(), seed);
  run.curve.push_back(ArrivalPoint{0, 0, 100.0 * fragmentation.total() / capacity});
  while (100.0 * static_cast<double>(arrived_milli) / capacity < options.target_pct) {
    const PodSpec& sampled = population[sequence.next()];
    const PodId pod = cluster.add_pod(sampled);
    arrived_milli += sampled.gpu.pending_milli(device_memory);
    TypeCount& count = run.by_type[pod_type_label(sampled)];
    ++count.arrived;
    ++run.pods_arrived;
    if (auto binding = placer.find(cluster, sampled)) {
      NodeIndex node = binding->node;
      cluster.bind(pod, std::move(*binding));
      fragmentation.update(cluster, node);
      if (options.check_invariants) {
        auto violations = check_invariants(cluster);
        if (!violations.empty())
          return Error{fmt::format("invariant violated with {}: {}", policy_name, violations.front())};
      }
    } else {
      ++count.failed;
      ++run.pods_failed;
    }
    ArrivalPoint point{100.0 * static_cast<double>(arrived_milli) / capacity,
                       100.0 * static_cast<double>(cluster.totals().gpu_allocated_milli) / capacity,
                       100.0 * fragmentation.total() / capacity};
    if (!reached_100 && point.arrived_pct >= 100) {
      reached_100 = true;
      run.alloc_at_100_pct = point.allocated_pct;
      run.frag_at_100_pct = point.fragmentation_pct;
    }
    if (point.arrived_pct - last_recorded >= 0.05) {
      run.curve.push_back(point);
      last_recorded = point.arrived_pct;
    }
    run.final_allocated_pct = point.allocated_pct;
  }
  if (!reached_100) {  // a target below 100%: report where arrivals stopped
    run.alloc_at_100_pct = run.final_allocated_pct;
    run.frag_at_100_pct = 100.0 * fragmentation.total() / capacity;
  }
  run.curve.push_back(ArrivalPoint{100.0 * static_cast<double>(arrived_milli) / capacity, run.final_allocated_pct,
                                   100.0 * fragmentation.total() / capacity});
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

Result<ArrivalReport> run_arrival_experiment(const Scenario& scenario, std::span<const std::string> policies,
                                             const ArrivalOptions& options) {
  if (policies.empty()) return Error{"no policy to run (expected at least one name in --policy)"};
  if (options.seeds.empty()) return Error{"no seeds to run (expected --seeds >= 1)"};
  if (!(options.target_pct > 0) || options.target_pct > 1000) {
    return Error{fmt::format("target {}% is out of range (expected 0 < target <= 1000)", options.target_pct)};
  }
  for (const std::string& name : policies) {
    if (auto probe = make_policy(name, WorkloadMix()); !probe) return probe.error();
  }
  const size_t seeds = options.seeds.size();
  auto runs = run_in_parallel<Result<ArrivalRun>>(policies.size() * seeds, options.threads, [&](size_t job) {
    return run_arrival_seed(scenario, policies[job / seeds], options.seeds[job % seeds], options);
  });
  for (const auto& run : runs) {
    if (!run) return run.error();
  }
  // Only once the runs succeeded: they refuse a list whose pods never reach the target.
  std::vector<OfflineRun> offline;
  if (options.offline_bound) {
    const std::vector<PodSpec> population = all_pods(scenario);
    offline = run_in_parallel<OfflineRun>(seeds, options.threads, [&](size_t job) {
      return offline_run(scenario, population, options.seeds[job], options.target_pct);
    });
  }

  ArrivalReport report;
  report.scenario = scenario.name;
  report.cluster_source = scenario.cluster_source;
  report.workload_source = scenario.workload_source;
  report.nodes = static_cast<int>(scenario.cluster->nodes.size());
  report.gpus = scenario.cluster->gpu_capacity_milli() / kMilliPerGpu;
  report.workload_pods = pod_count(scenario);
  report.target_pct = options.target_pct;
  report.seeds = options.seeds;
  report.tie_break = options.tie_break;
  for (const OfflineRun& run : offline) {
    report.offline_alloc_pct.push_back(run.alloc_pct);
    report.offline_arrived_cpu_pct.push_back(run.arrived_cpu_pct);
    report.offline_arrived_memory_pct.push_back(run.arrived_memory_pct);
  }
  for (size_t p = 0; p < policies.size(); ++p) {
    std::vector<ArrivalRun> policy_runs;
    for (size_t s = 0; s < seeds; ++s) {
      auto& run = runs[p * seeds + s];
      if (!run) return run.error();
      policy_runs.push_back(std::move(*run));
    }
    report.policies.push_back(summarize(policies[p], std::move(policy_runs), options.target_pct));
  }
  return report;
}

}  // namespace tessera
