// The timeline experiment: workloads arrive at their arrival time and leave after their
// duration. Without queues, a workload whose gang does not fit waits and is retried, in arrival
// order, whenever capacity frees (first fit in time: a later small workload may start before an
// earlier large one that still does not fit). A scenario with queues is replayed through the
// scheduling cycle instead (sim/cycle_replay.h).
#pragma once

#include <span>
#include <string>

#include "core/result.h"
#include "scheduler/cycle.h"
#include "scheduler/start_estimates.h"
#include "sim/scenario.h"
#include "sim/sim_results.h"

namespace tessera {

struct TimelineOptions {
  int samples = 600;  // points in each series
  // Arrival times are divided by this (durations kept), to replay a sparse trace at a higher
  // load: the Alibaba pod lists average about 40 pods running at once at their own pace.
  double arrival_speedup = 1;
  // Seconds after the first arrival at which the replay stops (after any speedup); 0 runs until
  // the last workload ends. Workloads arriving later are left out; those still waiting count as
  // never scheduled.
  double horizon_seconds = 0;
  int threads = 0;                // 0: one per core
  bool check_invariants = false;  // verify the safety invariants after every event (slow)
  // Scenarios with queues: simulated seconds between two scheduling cycles (> 0).
  double cycle_interval_seconds = 10;
  // A cycle after which nothing can change until the next arrival, completion or expiring
  // minimum runtime gives the same result as the one before, so it is not run. false runs every
  // cycle (the results are the same; only slower).
  bool skip_idle_cycles = true;
  // Scenarios with queues: the scheduling cycle's options, as `tessera scheduler` takes them
  // (reservations, reclaim moves, time-based fairness...). With time-based fairness on
  // (cycle.fair_share.usage_penalty > 0) every cycle is run, since fair shares drift as the
  // remembered use fades.
  CycleOptions cycle;
  // Scenarios with queues: apply the queues' time and idle-GPU limits (docs/design.md §6) before
  // every cycle. false replays the same scenario as if no queue set any.
  bool work_limits = true;
  // Scenarios with queues: estimate each pending arrival's start (scheduler/start_estimates.h) in
  // the first cycle after it arrives, and measure the estimates against the real starts.
  bool start_estimates = false;
  EstimateOptions estimates;
};

Result<TimelineReport> run_timeline_experiment(const Scenario& scenario, std::span<const std::string> policies,
                                               const TimelineOptions& options);

Result<TimelinePolicyResult> run_timeline_policy(const Scenario& scenario, std::string_view policy,
                                                 const TimelineOptions& options);

}  // namespace tessera
