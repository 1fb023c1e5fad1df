#include "sim/timeline_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>
#include <queue>

#include "engine/cluster_state.h"
#include "engine/invariants.h"
#include "engine/placer.h"
#include "policy/policy_registry.h"
#include "sim/cycle_replay.h"
#include "sim/parallel_runs.h"
#include "sim/pod_type_label.h"
#include "sim/statistics.h"

namespace tessera {

namespace {

struct Departure {
  double time;
  size_t workload;
  bool operator>(const Departure& other) const {
    return time != other.time ? time > other.time : workload > other.workload;
  }
};

class TimelineRun {
 public:
  TimelineRun(const Scenario& scenario, PlacementPolicy& policy, const TimelineOptions& options)
      : scenario_(scenario), options_(options), cluster_(scenario.cluster), placer_(policy) {
    for (const WorkloadSpec& workload : scenario.workloads) {
      std::vector<PodId> ids;
      for (const PodSpec& pod : workload.pods) ids.push_back(cluster_.add_pod(pod));
      pod_ids_.push_back(std::move(ids));
    }
  }

  Result<TimelinePolicyResult> run(std::string_view policy_name) {
    const auto started = std::chrono::steady_clock::now();
    TimelinePolicyResult result;
    result.policy = std::string(policy_name);
    result.workloads = static_cast<int64_t>(scenario_.workloads.size());
    if (scenario_.workloads.empty()) return result;
    start_ = scenario_.workloads.front().arrival_seconds;
    end_ = start_;
    for (const WorkloadSpec& workload : scenario_.workloads) {
      end_ = std::max(end_, workload.arrival_seconds + std::max(0.0, workload.duration_seconds));
    }
    if (options_.horizon_seconds > 0) end_ = std::min(end_, start_ + options_.horizon_seconds);
    const double step = (end_ - start_) / std::max(1, options_.samples - 1);
    double next_sample = start_;
    size_t next_arrival = 0;
    std::vector<double> pending_seconds;
    std::vector<bool> started_workload(scenario_.workloads.size(), false);

    while (next_arrival < scenario_.workloads.size() || !departures_.empty()) {
      const double arrival_time =
          next_arrival < scenario_.workloads.size() ? scenario_.workloads[next_arrival].arrival_seconds : INFINITY;
      const double departure_time = departures_.empty() ? INFINITY : departures_.top().time;
      const double now = std::min(arrival_time, departure_time);
      if (now > end_) break;
      while (next_sample <= now && next_sample <= end_) {
        sample(result, next_sample);
        next_sample += step > 0 ? step : 1;
      }
      bool freed = false;
      while (!departures_.empty() && departures_.top().time <= now) {
        release(departures_.top().workload);
        departures_.pop();
        freed = true;
      }
      std::vector<size_t> arrivals;
      while (next_arrival < scenario_.workloads.size() && scenario_.workloads[next_arrival].arrival_seconds <= now) {
        arrivals.push_back(next_arrival++);
      }
      // After a departure every waiting workload may fit; otherwise only the new arrivals can.
      if (freed) {
        try_pending(now, pending_seconds, started_workload);
      }
      for (size_t workload : arrivals) {
        if (!try_start(workload, now)) {
          pending_.push_back(workload);
        } else {
          pending_seconds.push_back(0);
          started_workload[workload] = true;
        }
      }
      if (options_.check_invariants) {
        auto violations = check_invariants(cluster_);
        for (size_t w = 0; w < pod_ids_.size() && violations.empty(); ++w) {
          violations = check_gang(cluster_, pod_ids_[w], scenario_.workloads[w].min_member);
        }
        if (!violations.empty())
          return Error{fmt::format("invariant violated with {}: {}", policy_name, violations.front())};
      }
    }
    while (next_sample <= end_ + 1e-9) {
      sample(result, next_sample);
      next_sample += step > 0 ? step : 1;
    }
    result.workloads = static_cast<int64_t>(next_arrival);
    for (size_t w = 0; w < next_arrival; ++w) {
      const WorkloadSpec& workload = scenario_.workloads[w];
      TypeCount& count = result.by_type[pod_type_label(workload.pods.front())];
      ++count.arrived;
      if (started_workload[w]) {
        ++result.scheduled;
      } else {
        ++count.failed;
        ++result.never_scheduled;
      }
    }
    result.pending_seconds = quantiles(std::move(pending_seconds));
    double weighted = 0;
    for (const TimelinePoint& point : result.series) weighted += point.gpu_allocated_pct;
    result.mean_gpu_allocated_pct = result.series.empty() ? 0 : weighted / static_cast<double>(result.series.size());
    result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  }

 private:
  bool try_start(size_t workload, double now) {
    const WorkloadSpec& spec = scenario_.workloads[workload];
    const auto& ids = pod_ids_[workload];
    const size_t gang = static_cast<size_t>(std::clamp<int>(spec.min_member, 1, static_cast<int>(ids.size())));
    Statement statement(cluster_);
    if (!placer_.place_gang(statement, std::span<const PodId>(ids.data(), gang))) return false;
    // Elastic extras above min_member start with the gang if they fit then, each on its own; they
    // are not retried later (growing elastic workloads belongs to the scheduling cycle).
    for (size_t extra = gang; extra < ids.size(); ++extra)
      placer_.place_gang(statement, std::span<const PodId>(&ids[extra], 1));
    statement.commit();
    if (spec.duration_seconds >= 0) departures_.push({now + spec.duration_seconds, workload});
    return true;
  }

  void release(size_t workload) {
    for (PodId pod : pod_ids_[workload]) {
      if (cluster_.binding(pod)) freed_nodes_.push_back(cluster_.unbind(pod).node);
    }
  }

  // Only nodes that just freed capacity can make a waiting workload fit now, so a waiting
  // workload none of whose pods fits any of them is not worth a full placement attempt.
  bool may_fit_freed_nodes(size_t workload) const {
    for (NodeIndex node : freed_nodes_) {
      for (PodId pod : pod_ids_[workload]) {
        if (check_node(cluster_.node_spec(node), cluster_.node_state(node), cluster_.pod(pod)) == Predicate::kFits)
          return true;
      }
    }
    return false;
  }

  void try_pending(double now, std::vector<double>& pending_seconds, std::vector<bool>& started_workload) {
    std::sort(freed_nodes_.begin(), freed_nodes_.end());
    freed_nodes_.erase(std::unique(freed_nodes_.begin(), freed_nodes_.end()), freed_nodes_.end());
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (may_fit_freed_nodes(*it) && try_start(*it, now)) {
        pending_seconds.push_back(now - scenario_.workloads[*it].arrival_seconds);
        started_workload[*it] = true;
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
    freed_nodes_.clear();
  }

  void sample(TimelinePolicyResult& result, double time) const {
    const ClusterTotals& totals = cluster_.totals();
    auto pct = [](double used, double capacity) { return capacity > 0 ? 100.0 * used / capacity : 0.0; };
    const int64_t running_pods = bound_pods();
    int64_t pending_pods = 0;
    for (size_t workload : pending_) pending_pods += static_cast<int64_t>(pod_ids_[workload].size());
    result.series.push_back(TimelinePoint{
        time, pct(static_cast<double>(totals.gpu_allocated_milli), static_cast<double>(totals.gpu_capacity_milli)),
        pct(static_cast<double>(totals.allocated.cpu_milli), static_cast<double>(totals.capacity.cpu_milli)),
        pct(static_cast<double>(totals.allocated.memory_bytes), static_cast<double>(totals.capacity.memory_bytes)),
        running_pods, pending_pods});
  }

  int64_t bound_pods() const {
    int64_t count = 0;
    for (NodeIndex node = 0; node < cluster_.node_count(); ++node) count += cluster_.node_state(node).pod_count;
    return count;
  }

  const Scenario& scenario_;
  const TimelineOptions& options_;
  ClusterState cluster_;
  Placer placer_;
  std::vector<std::vector<PodId>> pod_ids_;
  std::list<size_t> pending_;
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> departures_;
  std::vector<NodeIndex> freed_nodes_;
  double start_ = 0;
  double end_ = 0;
};

}  // namespace

Result<TimelinePolicyResult> run_timeline_policy(const Scenario& scenario, std::string_view policy_name,
                                                 const TimelineOptions& options) {
  if (!scenario.untimed.empty()) return Error{scenario.untimed};
  if (!scenario.queues.empty()) return run_cycle_replay(scenario, policy_name, options);
  auto policy = make_policy(policy_name, WorkloadMix::from_pods(all_pods(scenario)));
  if (!policy) return policy.error();
  TimelineRun run(scenario, **policy, options);
  return run.run(policy_name);
}

Result<TimelineReport> run_timeline_experiment(const Scenario& original, std::span<const std::string> policies,
                                               const TimelineOptions& options) {
  if (policies.empty()) return Error{"no policy to run (expected at least one name in --policy)"};
  if (!(options.arrival_speedup > 0))
    return Error{fmt::format("arrival speedup {} is not positive (expected > 0)", options.arrival_speedup)};
  Scenario scenario = original;
  if (options.arrival_speedup != 1) {
    for (WorkloadSpec& workload : scenario.workloads) workload.arrival_seconds /= options.arrival_speedup;
  }
  const bool cycle = !scenario.queues.empty();
  if (cycle && !(options.cycle_interval_seconds > 0 && std::isfinite(options.cycle_interval_seconds))) {
    return Error{
        fmt::format("cycle interval {} is not positive (expected > 0 seconds)", options.cycle_interval_seconds)};
  }
  for (const std::string& name : policies) {
    if (auto probe = make_policy(name, WorkloadMix()); !probe) return probe.error();
  }
  auto results = run_in_parallel<Result<TimelinePolicyResult>>(policies.size(), options.threads, [&](size_t job) {
    return run_timeline_policy(scenario, policies[job], options);
  });
  TimelineReport report;
  report.scenario = scenario.name;
  report.cluster_source = scenario.cluster_source;
  report.workload_source = scenario.workload_source;
  report.nodes = static_cast<int>(scenario.cluster->nodes.size());
  report.gpus = scenario.cluster->gpu_capacity_milli() / kMilliPerGpu;
  report.arrival_speedup = options.arrival_speedup;
  report.horizon_seconds = options.horizon_seconds;
  report.workload_pods = pod_count(scenario);
  if (cycle) {
    report.replay = "cycle";
    report.cycle_interval_seconds = options.cycle_interval_seconds;
  }
  if (!scenario.workloads.empty()) {
    report.start_seconds = scenario.workloads.front().arrival_seconds;
    report.end_seconds = report.start_seconds;
    for (const WorkloadSpec& workload : scenario.workloads) {
      report.end_seconds =
          std::max(report.end_seconds, workload.arrival_seconds + std::max(0.0, workload.duration_seconds));
    }
    if (options.horizon_seconds > 0)
      report.end_seconds = std::min(report.end_seconds, report.start_seconds + options.horizon_seconds);
  }
  for (auto& result : results) {
    if (!result) return result.error();
    report.policies.push_back(std::move(*result));
  }
  // The scheduling cycle may run past the planned end (evicted work redone, long waits): the
  // report spans the longest replay.
  if (cycle && !report.policies.empty()) {
    report.end_seconds = report.start_seconds;
    for (const TimelinePolicyResult& policy : report.policies) {
      if (policy.cycle) report.end_seconds = std::max(report.end_seconds, policy.cycle->end_seconds);
    }
  }
  return report;
}

}  // namespace tessera
