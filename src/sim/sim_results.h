// What a replay produces, per policy, for the terminal table, the JSON file and the HTML report.
// docs/sim-json-schema.md documents the JSON rendering of these types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/tie_break.h"

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
  TieBreak tie_break = TieBreak::kLowestIndex;  // how ties between nodes were broken
  std::vector<ArrivalPolicyResult> policies;
  // Per seed: the offline packing of the pods that arrived up to 100%
  // (sim/offline_packing.h), % of capacity; empty when not computed.
  std::vector<double> offline_alloc_pct;
  // Per seed: the CPU and memory those pods ask, % of the cluster's allocatable.
  std::vector<double> offline_arrived_cpu_pct;
  std::vector<double> offline_arrived_memory_pct;
};

// One seed's offline packing and what its pods ask of the cluster.
struct OfflineRun {
  double alloc_pct = 0;
  double arrived_cpu_pct = 0;
  double arrived_memory_pct = 0;
};

// Whether the arrived pods of some seed ask more CPU or memory than the cluster has. Then some
// must fail whatever the placement, and the offline packing, placing the largest GPU requests
// first, chooses which: its figure measures that choice, which an online scheduler serving pods
// as they come cannot make, not the packing.
bool offline_chooses_pods(const ArrivalReport& report);
// The most CPU and memory the arrived pods of a seed ask, % of the cluster's allocatable (0
// without an offline packing).
struct ArrivedAsk {
  double cpu_pct = 0;
  double memory_pct = 0;
};
ArrivedAsk most_asked(const ArrivalReport& report);

// The share of FGD's gap to the offline packing that a policy closes: (policy - fgd) / (offline -
// fgd), nullopt without an offline figure, without an fgd run, where fgd reaches it, or where the
// offline packing chooses which pods to serve.
std::optional<double> fgd_gap_closed(const ArrivalReport& report, const ArrivalPolicyResult& policy);

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

// Cycle replays (scenarios with queues). One queue's state at a sample time of the series grid.
struct QueuePoint {
  double time_seconds = 0;
  double allocated_gpus = 0;   // held by its running workloads (inner queues: their leaves' sum)
  double fair_share_gpus = 0;  // as the last cycle computed it
  double deserved_gpus = 0;    // its deserved quota
  double demand_gpus = 0;      // running plus pending requests, capped by its limit, at the last cycle
  int64_t pending_workloads = 0;
};

// Times a queue was starved: owed GPUs, in that a pending gang of its subtree would fit within the
// deserved quota of every queue from the gang's leaf up to it (FairShares::in_quota: min(deserved,
// demand), cut in proportion when a parent cannot cover its children's deserved quotas). A queue a
// few GPUs short of its quota whose pending gangs are all larger than the gap is not starved. An
// episode starts at the arrival or completion that made the queue starved (seen at the next
// cycle), and ends at the end of the first cycle after which it is owed nothing.
struct StarvationSummary {
  int64_t episodes = 0;
  int64_t resolved = 0;       // episodes that ended within the replay
  double median_seconds = 0;  // time to deserved quota, over resolved episodes
  double max_seconds = 0;
  double median_cycles = 0;  // cycles run from the episode's start to its end, inclusive
  double max_cycles = 0;
  double longest_open_seconds = 0;  // the longest episode still open at the end of the replay
};

struct QueueResult {
  std::string name;
  std::string parent;  // empty for a top-level queue
  int depth = 0;       // 0 for a top-level queue
  bool leaf = false;
  double deserved_gpus = 0;
  double limit_gpus = -1;          // -1: no limit
  std::vector<QueuePoint> series;  // on the grid of TimelinePolicyResult::series
  // Time-weighted over the replay. fairness_gap_pct: the mean |allocated - fair share| divided by
  // the mean fair share, both taken over the time the fair share is positive; 0 when it never is.
  double mean_allocated_gpus = 0;
  double mean_fair_share_gpus = 0;
  double fairness_gap_pct = 0;
  // The same gap split by side: below the fair share (owed) and above it (borrowing); they sum
  // to fairness_gap_pct.
  double gap_below_pct = 0;
  double gap_above_pct = 0;
  StarvationSummary starvation;
  int64_t workloads = 0;  // arrived in its subtree
  int64_t scheduled = 0;  // started at some point
  int64_t completed = 0;
  int64_t evictions = 0;  // whole-workload evictions of its workloads (moves included)
  double lost_gpu_hours = 0;
  Quantiles wait_seconds;  // arrival -> first start, over scheduled workloads
  Quantiles jct_seconds;   // arrival -> completion, over completed workloads
};

// Evictions made by one action of the scheduling cycle.
struct ActionChurn {
  std::string action;             // "allocate", "consolidate", "reclaim", "preempt"
  int64_t starts = 0;             // workloads the action started
  int64_t evictions = 0;          // eviction records: whole workloads plus elastic extras
  int64_t whole_workloads = 0;    // workloads taken off their nodes (moves included): restarts
  int64_t extras = 0;             // elastic extras only; the workload kept running
  int64_t moved = 0;              // whole workloads re-placed in the same cycle (consolidation, reclaim)
  double evicted_gpus = 0;        // GPUs the evicted pods held, summed
  double lost_gpu_hours = 0;      // work since the last checkpoint x GPUs held
  double per_1000_scheduled = 0;  // whole_workloads per 1,000 scheduled workloads
  // Eviction groups: the evictions of one cycle made for one pending workload (the beneficiary).
  int64_t groups = 0;
  // Max over groups of the GPUs taken (evicted, not moved) / the beneficiary's gang GPUs, and of
  // the GPUs moved / the same.
  double max_evicted_to_needed = 0;
  double max_moved_to_needed = 0;
};

// The eviction group with the highest evicted / needed ratio.
struct EvictionGroup {
  double time_seconds = 0;
  std::string action;
  std::string beneficiary;
  std::string queue;
  int64_t victims = 0;
  double evicted_gpus = 0;
  double needed_gpus = 0;
  double ratio = 0;
};

struct ChurnSummary {
  std::vector<ActionChurn> by_action;  // in cycle order: allocate, consolidate, reclaim, preempt
  int64_t evictions = 0;
  int64_t whole_workloads = 0;
  double per_1000_scheduled = 0;  // whole-workload evictions per 1,000 scheduled workloads
  double per_hour = 0;            // whole-workload evictions per hour of simulated time
  double lost_gpu_hours = 0;
  double max_evicted_to_needed = 0;
  double max_moved_to_needed = 0;
  int64_t groups_without_gpu_need = 0;  // groups that evicted GPUs for a beneficiary asking none
  EvictionGroup worst_group;            // meaningful when some group exists
  int64_t groups = 0;
};

struct PendingExample {
  std::string workload;
  std::string queue;
  std::string code;  // pending_code_name: "QueueLimit", "Unschedulable", ...
  std::string message;
  double pending_seconds = 0;  // since its arrival, at the end of the replay
};

// Time limits and idle-GPU limits (docs/design.md §6) over one replay.
struct LimitSummary {
  bool enabled = false;  // the scenario's rules were applied
  int64_t notices = 0;
  int64_t withdrawn = 0;  // idle notices withdrawn when the GPUs were used again
  int64_t stopped = 0;
  int64_t requeued = 0;
  int64_t made_preemptible = 0;
  int64_t by_idle_limit = 0;  // of the stops, requeues and turns to preemptible: by the idle limit
  // Ended, requeued or made preemptible by the idle limit though its GPUs would have been busy
  // again later in its run (a workload warming up on the CPU, a bursty one between bursts).
  int64_t false_positives = 0;
  double gpu_hours = 0;               // held by running work
  double idle_gpu_hours = 0;          // of which while the work's GPUs were idle (under its idle threshold)
  Quantiles train_wait_seconds;       // arrival -> first start, over started train workloads
  std::vector<std::string> examples;  // the first few verdicts, with their time
};

// Start-time estimates (scheduler/start_estimates.h), each made in the first cycle after a
// workload's arrival that left it pending, against when it really started first. The estimator
// reads each run's time limit, else the scenario's duration (as an expected-runtime annotation).
struct EstimateSummary {
  bool enabled = false;
  int64_t calls = 0;      // cycles that estimated (those with new pending arrivals)
  int64_t estimated = 0;  // workloads given an estimate at arrival
  int64_t unreached = 0;  // pending after their first cycle and given none
  int64_t compared = 0;   // of the estimated, those that started (the errors below)
  Quantiles abs_error_seconds;  // |estimated start - actual start|
  int64_t late = 0;             // started later than estimated (by more than a minute)
  int64_t early = 0;            // started earlier than estimated (by more than a minute)
  Quantiles wall_seconds;       // the estimator's wall-clock time per call
  Quantiles steps;              // forward cycles per call
  // The bounds each call ran under, and what stopped the calls (estimate_stop_name: "all
  // estimated", "step cap"...). Without a wall-clock budget the figures repeat run after run.
  int max_steps = 0;
  double max_wall_seconds = 0;  // infinity: none
  std::map<std::string, int64_t> stops;
};

// Where gangs ran in the scenario's measured topology (docs/topology.md).
struct TopologySummary {
  std::vector<std::string> levels;  // of the topology measured, widest first; empty: none
  int64_t multi_node_gangs = 0;     // gangs that started on more than one node (first start)
  std::vector<int64_t> within;      // per level: of those, how many within one domain of it
  int64_t required_gangs = 0;       // workloads with a required level
  int64_t required_started = 0;
  Quantiles required_wait_seconds;  // arrival -> first start, over those started
};

struct CycleReplayResult {
  double cycle_interval_seconds = 0;
  double end_seconds = 0;        // when this replay stopped
  std::string end_reason;        // "finished", "horizon", "stable" (nothing could change any more), "limit"
  int64_t cycles = 0;            // cycle times passed (start, start + interval, ... up to the end)
  int64_t cycles_run = 0;        // of which run: a cycle that cannot change anything is skipped
  Quantiles cycle_wall_seconds;  // wall-clock time of one cycle, over the cycles run
  int64_t completed = 0;
  Quantiles jct_seconds;            // arrival -> completion, over completed workloads
  std::vector<QueueResult> queues;  // every queue, each followed by its subtree (depth first)
  ChurnSummary churn;
  int64_t reservations_made = 0;   // nodes reserved for a workload that waited long for room
  double reserved_node_hours = 0;  // node-hours spent reserved (draining, or held while drained)
  // At the end of the replay: pending workloads by reason code (as the last cycle gave it;
  // "NotYetCycled" for arrivals after it), and examples, longest pending first.
  std::map<std::string, int64_t> pending_by_code;
  std::vector<PendingExample> pending_examples;
  LimitSummary limits;
  TopologySummary topology;
  EstimateSummary estimates;
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
  std::optional<CycleReplayResult> cycle;  // set by the cycle replay (scenarios with queues)
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
  // "events": first-fit in time, retried whenever capacity frees (scenarios without queues);
  // "cycle": the scheduling cycle every cycle_interval_seconds.
  std::string replay = "events";
  double cycle_interval_seconds = 0;  // 0 for "events"
  std::vector<TimelinePolicyResult> policies;
};

}  // namespace tessera
