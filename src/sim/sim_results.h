// What a replay produces, per policy, for the terminal table, the JSON file and the HTML report.
// docs/sim-json-schema.md documents the JSON rendering of these types.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera {

// Pod types as reports group them (pod_type_label.h): "CPU only", "GPU share", "1 GPU",
// "2 GPUs", "4 GPUs", "8 GPUs", ...
struct TypeCount {
  int64_t arrived = 0;
  int64_t failed = 0;
};

struct ArrivalPoint {
  double arrived_pct = 0;        // arrived GPU requests, % of cluster GPU capacity
  double allocated_pct = 0;      // allocated GPUs, % of capacity
  double fragmentation_pct = 0;  // FGD fragmentation of the free GPUs, % of capacity
};

// One seed of the arrival experiment.
struct ArrivalRun {
  uint64_t seed = 0;
  std::vector<ArrivalPoint> curve;  // one point per arrived pod (thinned to at most ~2,000)
  double alloc_at_100_pct = 0;      // allocated_pct when arrived_pct first reaches 100
  double frag_at_100_pct = 0;       // fragmentation_pct at the same moment
  double final_allocated_pct = 0;
  int64_t pods_arrived = 0;
  int64_t pods_failed = 0;
  std::map<std::string, TypeCount> by_type;
  double wall_seconds = 0;
};

struct ArrivalPolicyResult {
  std::string policy;
  std::vector<ArrivalRun> runs;
  // Across seeds:
  double alloc_at_100_pct = 0;  // mean
  double alloc_at_100_pct_stddev = 0;
  double alloc_at_100_pct_min = 0;
  double alloc_at_100_pct_max = 0;
  double frag_at_100_pct = 0;                // mean
  std::vector<ArrivalPoint> mean_curve;      // on a grid of arrived_pct (every 1%), mean over seeds
  std::map<std::string, TypeCount> by_type;  // summed over seeds
  double wall_seconds_median = 0;
};

struct ArrivalReport {
  std::string scenario;
  std::string cluster_source;
  std::string workload_source;
  int nodes = 0;
  int64_t gpus = 0;
  int64_t workload_pods = 0;  // pods in the population sampled from
  double target_pct = 0;      // arrivals stop once arrived GPU requests reach this
  std::vector<uint64_t> seeds;
  std::vector<ArrivalPolicyResult> policies;
};

struct TimelinePoint {
  double time_seconds = 0;
  double gpu_allocated_pct = 0;  // allocated GPUs, % of capacity
  double cpu_allocated_pct = 0;
  double memory_allocated_pct = 0;
  int64_t running_pods = 0;
  int64_t pending_pods = 0;
};

struct Quantiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

struct TimelinePolicyResult {
  std::string policy;
  std::vector<TimelinePoint> series;  // sampled on a regular grid of simulated time
  double mean_gpu_allocated_pct = 0;  // time-weighted
  int64_t workloads = 0;
  int64_t scheduled = 0;                     // started at some point
  int64_t never_scheduled = 0;               // still pending at the end, or unplaceable on an empty cluster
  Quantiles pending_seconds;                 // arrival -> start, over scheduled workloads
  std::map<std::string, TypeCount> by_type;  // failed = never scheduled
  double wall_seconds = 0;
};

struct TimelineReport {
  std::string scenario;
  std::string cluster_source;
  std::string workload_source;
  int nodes = 0;
  int64_t gpus = 0;
  double start_seconds = 0;
  double end_seconds = 0;
  double arrival_speedup = 1;  // arrival times were divided by this
  double horizon_seconds = 0;  // the replay stopped this long after the first arrival; 0: it ran to the end
  int64_t workload_pods = 0;   // pods in all workloads of the scenario
  std::vector<TimelinePolicyResult> policies;
};

}  // namespace tessera
