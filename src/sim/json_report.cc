#include "sim/json_report.h"

#include <cmath>

namespace tessera {

namespace {

using nlohmann::json;

constexpr int kPercentDecimals = 3;
constexpr int kSecondsDecimals = 3;
// Wall-clock times of one replay are often well under a second; keep tenths of a millisecond.
constexpr int kWallSecondsDecimals = 4;

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

json timeline_policy_json(const TimelinePolicyResult& policy) {
  json series = json::array();
  for (const TimelinePoint& point : policy.series) series.push_back(timeline_point_json(point));
  return {{"policy", policy.policy},
          {"mean_gpu_allocated_pct", percent(policy.mean_gpu_allocated_pct)},
          {"workloads", policy.workloads},
          {"scheduled", policy.scheduled},
          {"never_scheduled", policy.never_scheduled},
          {"pending_seconds", quantiles_json(policy.pending_seconds)},
          {"failed_by_type", failed_by_type_json(policy.by_type)},
          {"wall_seconds", wall_seconds(policy.wall_seconds)},
          {"series", std::move(series)}};
}

}  // namespace

json arrival_report_json(const ArrivalReport& report) {
  json policies = json::array();
  for (const ArrivalPolicyResult& policy : report.policies) policies.push_back(arrival_policy_json(policy));
  return {{"schema", kSimJsonSchema},
          {"mode", "arrival"},
          {"scenario", report.scenario},
          {"cluster", cluster_json(report.cluster_source, report.nodes, report.gpus)},
          {"workload", {{"source", report.workload_source}, {"pods", report.workload_pods}}},
          {"target_pct", percent(report.target_pct)},
          {"seeds", report.seeds},
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
          {"policies", std::move(policies)}};
}

}  // namespace tessera
