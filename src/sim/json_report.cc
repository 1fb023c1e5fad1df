#include "sim/json_report.h"

#include <cmath>
#include <optional>

#include "sim/statistics.h"

namespace tessera {

namespace {

using nlohmann::json;

constexpr int kPercentDecimals = 3;
constexpr int kSecondsDecimals = 3;
// Wall-clock times of one replay are often well under a second; keep tenths of a millisecond.
constexpr int kWallSecondsDecimals = 4;
// GPU amounts (and GPU-hours) to a milli-GPU, the finest share a pod can ask for.
constexpr int kGpuDecimals = 3;
constexpr int kRatioDecimals = 3;

// A number rounded to `decimals` places, or null when it is not finite (JSON has no NaN or
// infinity, and nlohmann would write them as null anyway, but silently).
json rounded(double value, int decimals) {
  if (!std::isfinite(value)) return nullptr;
  const double scale = std::pow(10.0, decimals);
  const double result = std::round(value * scale) / scale;
  if (!std::isfinite(result)) return value;  // too large to scale: already far coarser than the rounding
  return result == 0 ? 0.0 : result;         // no "-0.0"
}

json percent(double value) { return rounded(value, kPercentDecimals); }
json seconds(double value) { return rounded(value, kSecondsDecimals); }
json wall_seconds(double value) { return rounded(value, kWallSecondsDecimals); }
json gpu_amount(double value) { return rounded(value, kGpuDecimals); }

json failed_by_type_json(const std::map<std::string, TypeCount>& by_type) {
  json out = json::object();
  for (const auto& [type, count] : by_type) out[type] = {{"arrived", count.arrived}, {"failed", count.failed}};
  return out;
}

json cluster_json(const std::string& source, int nodes, int64_t gpus) {
  return {{"source", source}, {"nodes", nodes}, {"gpus", gpus}};
}

json arrival_point_json(const ArrivalPoint& point) {
  return {{"arrived_pct", percent(point.arrived_pct)},
          {"allocated_pct", percent(point.allocated_pct)},
          {"fragmentation_pct", percent(point.fragmentation_pct)}};
}

json arrival_run_json(const ArrivalRun& run) {
  return {{"seed", run.seed},
          {"alloc_at_100_pct", percent(run.alloc_at_100_pct)},
          {"frag_at_100_pct", percent(run.frag_at_100_pct)},
          {"final_allocated_pct", percent(run.final_allocated_pct)},
          {"pods_arrived", run.pods_arrived},
          {"pods_failed", run.pods_failed},
          {"wall_seconds", wall_seconds(run.wall_seconds)}};
}

json arrival_policy_json(const ArrivalPolicyResult& policy) {
  json curve = json::array();
  for (const ArrivalPoint& point : policy.mean_curve) curve.push_back(arrival_point_json(point));
  // Per-seed curves are left out: with up to ~2,000 points per seed and policy they would make
  // most of the file, and the mean curve is what the report draws.
  json runs = json::array();
  for (const ArrivalRun& run : policy.runs) runs.push_back(arrival_run_json(run));
  return {{"policy", policy.policy},
          {"alloc_at_100_pct", percent(policy.alloc_at_100_pct)},
          {"alloc_at_100_pct_stddev", percent(policy.alloc_at_100_pct_stddev)},
          {"alloc_at_100_pct_min", percent(policy.alloc_at_100_pct_min)},
          {"alloc_at_100_pct_max", percent(policy.alloc_at_100_pct_max)},
          {"frag_at_100_pct", percent(policy.frag_at_100_pct)},
          {"wall_seconds_median", wall_seconds(policy.wall_seconds_median)},
          {"curve", std::move(curve)},
          {"failed_by_type", failed_by_type_json(policy.by_type)},
          {"runs", std::move(runs)}};
}

json timeline_point_json(const TimelinePoint& point) {
  return {{"time_seconds", seconds(point.time_seconds)},
          {"gpu_allocated_pct", percent(point.gpu_allocated_pct)},
          {"cpu_allocated_pct", percent(point.cpu_allocated_pct)},
          {"memory_allocated_pct", percent(point.memory_allocated_pct)},
          {"running_pods", point.running_pods},
          {"pending_pods", point.pending_pods}};
}

json quantiles_json(const Quantiles& quantiles) {
  return {{"p50", seconds(quantiles.p50)},
          {"p90", seconds(quantiles.p90)},
          {"p99", seconds(quantiles.p99)},
          {"max", seconds(quantiles.max)},
          {"mean", seconds(quantiles.mean)}};
}

json wall_quantiles_json(const Quantiles& quantiles) {
  return {{"p50", wall_seconds(quantiles.p50)},
          {"p90", wall_seconds(quantiles.p90)},
          {"p99", wall_seconds(quantiles.p99)},
          {"max", wall_seconds(quantiles.max)},
          {"mean", wall_seconds(quantiles.mean)}};
}

// A queue's series as one array per field (the sample times are those of the cluster series): a
// few dozen queues with hundreds of samples each would otherwise repeat every key thousands of
// times.
json queue_series_json(const std::vector<QueuePoint>& series) {
  json time = json::array(), allocated = json::array(), fair_share = json::array(), deserved = json::array(),
       demand = json::array(), pending = json::array();
  for (const QueuePoint& point : series) {
    time.push_back(seconds(point.time_seconds));
    allocated.push_back(gpu_amount(point.allocated_gpus));
    fair_share.push_back(gpu_amount(point.fair_share_gpus));
    deserved.push_back(gpu_amount(point.deserved_gpus));
    demand.push_back(gpu_amount(point.demand_gpus));
    pending.push_back(point.pending_workloads);
  }
  return {{"time_seconds", std::move(time)},          {"allocated_gpus", std::move(allocated)},
          {"fair_share_gpus", std::move(fair_share)}, {"deserved_gpus", std::move(deserved)},
          {"demand_gpus", std::move(demand)},         {"pending_workloads", std::move(pending)}};
}

json starvation_json(const StarvationSummary& starvation) {
  return {{"episodes", starvation.episodes},
          {"resolved", starvation.resolved},
          {"median_seconds", seconds(starvation.median_seconds)},
          {"max_seconds", seconds(starvation.max_seconds)},
          {"median_cycles", rounded(starvation.median_cycles, 1)},
          {"max_cycles", rounded(starvation.max_cycles, 1)},
          {"longest_open_seconds", seconds(starvation.longest_open_seconds)}};
}

json queue_json(const QueueResult& queue) {
  return {{"name", queue.name},
          {"parent", queue.parent.empty() ? json(nullptr) : json(queue.parent)},
          {"depth", queue.depth},
          {"leaf", queue.leaf},
          {"deserved_gpus", gpu_amount(queue.deserved_gpus)},
          {"limit_gpus", queue.limit_gpus < 0 ? json(nullptr) : gpu_amount(queue.limit_gpus)},
          {"mean_allocated_gpus", gpu_amount(queue.mean_allocated_gpus)},
          {"mean_fair_share_gpus", gpu_amount(queue.mean_fair_share_gpus)},
          {"fairness_gap_pct", percent(queue.fairness_gap_pct)},
          {"gap_below_pct", percent(queue.gap_below_pct)},
          {"gap_above_pct", percent(queue.gap_above_pct)},
          {"starvation", starvation_json(queue.starvation)},
          {"workloads", queue.workloads},
          {"scheduled", queue.scheduled},
          {"completed", queue.completed},
          {"evictions", queue.evictions},
          {"lost_gpu_hours", gpu_amount(queue.lost_gpu_hours)},
          {"wait_seconds", quantiles_json(queue.wait_seconds)},
          {"jct_seconds", quantiles_json(queue.jct_seconds)},
          {"series", queue_series_json(queue.series)}};
}

json action_churn_json(const ActionChurn& action) {
  return {{"action", action.action},
          {"starts", action.starts},
          {"evictions", action.evictions},
          {"whole_workloads", action.whole_workloads},
          {"extras", action.extras},
          {"moved", action.moved},
          {"evicted_gpus", gpu_amount(action.evicted_gpus)},
          {"lost_gpu_hours", gpu_amount(action.lost_gpu_hours)},
          {"per_1000_scheduled", rounded(action.per_1000_scheduled, kRatioDecimals)},
          {"groups", action.groups},
          {"max_evicted_to_needed", rounded(action.max_evicted_to_needed, kRatioDecimals)},
          {"max_moved_to_needed", rounded(action.max_moved_to_needed, kRatioDecimals)}};
}

json churn_json(const ChurnSummary& churn) {
  json by_action = json::array();
  for (const ActionChurn& action : churn.by_action) by_action.push_back(action_churn_json(action));
  json worst = nullptr;
  if (churn.worst_group.ratio > 0) {
    const EvictionGroup& group = churn.worst_group;
    worst = {{"time_seconds", seconds(group.time_seconds)},
             {"action", group.action},
             {"beneficiary", group.beneficiary},
             {"queue", group.queue},
             {"victims", group.victims},
             {"evicted_gpus", gpu_amount(group.evicted_gpus)},
             {"needed_gpus", gpu_amount(group.needed_gpus)},
             {"ratio", rounded(group.ratio, kRatioDecimals)}};
  }
  return {{"evictions", churn.evictions},
          {"whole_workloads", churn.whole_workloads},
          {"per_1000_scheduled", rounded(churn.per_1000_scheduled, kRatioDecimals)},
          {"per_hour", rounded(churn.per_hour, kRatioDecimals)},
          {"lost_gpu_hours", gpu_amount(churn.lost_gpu_hours)},
          {"groups", churn.groups},
          {"groups_without_gpu_need", churn.groups_without_gpu_need},
          {"max_evicted_to_needed", rounded(churn.max_evicted_to_needed, kRatioDecimals)},
          {"max_moved_to_needed", rounded(churn.max_moved_to_needed, kRatioDecimals)},
          {"worst_group", std::move(worst)},
          {"by_action", std::move(by_action)}};
}

json pending_reasons_json(const CycleReplayResult& cycle) {
  json examples = json::array();
  for (const PendingExample& example : cycle.pending_examples) {
    examples.push_back({{"workload", example.workload},
                        {"queue", example.queue},
                        {"code", example.code},
                        {"message", example.message},
                        {"pending_seconds", seconds(example.pending_seconds)}});
  }
  json by_code = json::object();
  for (const auto& [code, count] : cycle.pending_by_code) by_code[code] = count;
  return {{"by_code", std::move(by_code)}, {"examples", std::move(examples)}};
}

json limits_json(const LimitSummary& limits) {
  return {{"enabled", limits.enabled},
          {"notices", limits.notices},
          {"withdrawn", limits.withdrawn},
          {"stopped", limits.stopped},
          {"requeued", limits.requeued},
          {"made_preemptible", limits.made_preemptible},
          {"by_idle_limit", limits.by_idle_limit},
          {"false_positives", limits.false_positives},
          {"gpu_hours", rounded(limits.gpu_hours, kRatioDecimals)},
          {"idle_gpu_hours", rounded(limits.idle_gpu_hours, kRatioDecimals)},
          {"train_wait_seconds", quantiles_json(limits.train_wait_seconds)},
          {"examples", limits.examples}};
}

// null where the replay made no estimates.
json estimates_json(const EstimateSummary& estimates) {
  if (!estimates.enabled) return nullptr;
  json stops = json::object();
  for (const auto& [stop, calls] : estimates.stops) stops[stop] = calls;
  return {{"calls", estimates.calls},
          {"estimated", estimates.estimated},
          {"unreached", estimates.unreached},
          {"compared", estimates.compared},
          {"abs_error_seconds", quantiles_json(estimates.abs_error_seconds)},
          {"late", estimates.late},
          {"early", estimates.early},
          {"wall_seconds", wall_quantiles_json(estimates.wall_seconds)},
          {"steps", {{"p50", estimates.steps.p50}, {"p90", estimates.steps.p90}, {"max", estimates.steps.max}}},
          {"max_steps", estimates.max_steps},
          {"max_wall_seconds",
           std::isfinite(estimates.max_wall_seconds) ? json(estimates.max_wall_seconds) : json(nullptr)},
          {"stops", std::move(stops)}};
}

// The figures only the scheduling cycle produces, added to the policy object.
void add_cycle_json(const CycleReplayResult& cycle, json& out) {
  json queues = json::array();
  for (const QueueResult& queue : cycle.queues) queues.push_back(queue_json(queue));
  out["end_seconds"] = seconds(cycle.end_seconds);
  out["end_reason"] = cycle.end_reason;
  out["cycles"] = cycle.cycles;
  out["cycles_run"] = cycle.cycles_run;
  out["cycle_wall_seconds"] = wall_quantiles_json(cycle.cycle_wall_seconds);
  out["completed"] = cycle.completed;
  out["jct_seconds"] = quantiles_json(cycle.jct_seconds);
  out["queues"] = std::move(queues);
  out["churn"] = churn_json(cycle.churn);
  out["reservations"] = {{"made", cycle.reservations_made},
                         {"node_hours", rounded(cycle.reserved_node_hours, kRatioDecimals)}};
  out["pending_reasons"] = pending_reasons_json(cycle);
  out["limits"] = limits_json(cycle.limits);
  out["estimates"] = estimates_json(cycle.estimates);
}

json timeline_policy_json(const TimelinePolicyResult& policy) {
  json series = json::array();
  for (const TimelinePoint& point : policy.series) series.push_back(timeline_point_json(point));
  json out = {{"policy", policy.policy},
              {"mean_gpu_allocated_pct", percent(policy.mean_gpu_allocated_pct)},
              {"workloads", policy.workloads},
              {"scheduled", policy.scheduled},
              {"never_scheduled", policy.never_scheduled},
              {"pending_seconds", quantiles_json(policy.pending_seconds)},
              {"failed_by_type", failed_by_type_json(policy.by_type)},
              {"wall_seconds", wall_seconds(policy.wall_seconds)},
              {"series", std::move(series)}};
  if (policy.cycle) add_cycle_json(*policy.cycle, out);
  return out;
}

}  // namespace

json arrival_report_json(const ArrivalReport& report) {
  json policies = json::array();
  for (const ArrivalPolicyResult& policy : report.policies) {
    json entry = arrival_policy_json(policy);
    const std::optional<double> closed = fgd_gap_closed(report, policy);
    entry["fgd_gap_closed"] = closed ? json(std::round(*closed * 1e4) / 1e4) : json(nullptr);
    policies.push_back(std::move(entry));
  }
  json offline = nullptr;
  if (!report.offline_alloc_pct.empty()) {
    json runs = json::array();
    for (double pct : report.offline_alloc_pct) runs.push_back(percent(pct));
    const ArrivedAsk asked = most_asked(report);
    offline = {{"alloc_at_100_pct", percent(mean(report.offline_alloc_pct))},
               {"runs", std::move(runs)},
               {"arrived_cpu_pct", percent(asked.cpu_pct)},
               {"arrived_memory_pct", percent(asked.memory_pct)},
               {"chooses_pods", offline_chooses_pods(report)}};
  }
  return {{"schema", kSimJsonSchema},
          {"mode", "arrival"},
          {"scenario", report.scenario},
          {"cluster", cluster_json(report.cluster_source, report.nodes, report.gpus)},
          {"workload", {{"source", report.workload_source}, {"pods", report.workload_pods}}},
          {"target_pct", percent(report.target_pct)},
          {"seeds", report.seeds},
          {"tie_break", std::string(tie_break_name(report.tie_break))},
          {"offline", std::move(offline)},
          {"policies", std::move(policies)}};
}

json timeline_report_json(const TimelineReport& report) {
  json policies = json::array();
  for (const TimelinePolicyResult& policy : report.policies) policies.push_back(timeline_policy_json(policy));
  json workload = {{"source", report.workload_source}, {"pods", report.workload_pods}};
  workload["workloads"] = report.policies.empty() ? json(nullptr) : json(report.policies.front().workloads);
  return {{"schema", kSimJsonSchema},
          {"mode", "timeline"},
          {"scenario", report.scenario},
          {"cluster", cluster_json(report.cluster_source, report.nodes, report.gpus)},
          {"workload", std::move(workload)},
          {"start_seconds", seconds(report.start_seconds)},
          {"end_seconds", seconds(report.end_seconds)},
          {"arrival_speedup", report.arrival_speedup},
          {"horizon_seconds", seconds(report.horizon_seconds)},
          {"replay", report.replay},
          {"cycle_interval_seconds", report.replay == "cycle" ? seconds(report.cycle_interval_seconds) : json(nullptr)},
          {"policies", std::move(policies)}};
}

json topology_report_json(const TopologyReport& report) {
  json runs = json::array();
  for (const TopologyRun& run : report.runs) {
    const CycleReplayResult& cycle = *run.result.cycle;
    const TopologySummary& topology = cycle.topology;
    json within = json::array();
    for (size_t level = 0; level < topology.within.size(); ++level) {
      within.push_back({{"level", topology.levels[level]},
                        {"gangs", topology.within[level]},
                        {"pct", percent(within_share_pct(topology, level))}});
    }
    runs.push_back({{"policy", run.policy},
                    {"topology", run.topology},
                    {"multi_node_gangs", topology.multi_node_gangs},
                    {"within", std::move(within)},
                    {"jct_p50_seconds", seconds(cycle.jct_seconds.p50)},
                    {"jct_p90_seconds", seconds(cycle.jct_seconds.p90)},
                    {"mean_gpu_allocated_pct", percent(run.result.mean_gpu_allocated_pct)},
                    {"required_gangs", topology.required_gangs},
                    {"required_started", topology.required_started},
                    {"required_wait_p50_seconds", seconds(topology.required_wait_seconds.p50)},
                    {"required_wait_p90_seconds", seconds(topology.required_wait_seconds.p90)},
                    {"evictions", cycle.churn.whole_workloads},
                    {"timeline", timeline_policy_json(run.result)}});
  }
  json levels = json::array();
  for (const std::string& level : report.levels) levels.push_back(level);
  json factors = json::array();
  for (double factor : report.run_time_factors) factors.push_back(factor);
  return {{"schema", kSimJsonSchema},
          {"mode", "topology"},
          {"scenario", report.scenario},
          {"cluster", cluster_json(report.cluster_source, report.nodes, report.gpus)},
          {"workload", {{"source", report.workload_source}}},
          {"levels", std::move(levels)},
          {"run_time_factors", std::move(factors)},
          {"runs", std::move(runs)}};
}

}  // namespace tessera
