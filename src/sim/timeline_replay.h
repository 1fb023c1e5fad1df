// The timeline experiment: workloads arrive at their arrival time and leave after their
// duration; a workload whose gang does not fit waits and is retried, in arrival order, whenever
// capacity frees (first fit in time: a later small workload may start before an earlier large
// one that still does not fit).
#pragma once

#include <span>
#include <string>

#include "core/result.h"
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
};

Result<TimelineReport> run_timeline_experiment(const Scenario& scenario, std::span<const std::string> policies,
                                               const TimelineOptions& options);

Result<TimelinePolicyResult> run_timeline_policy(const Scenario& scenario, std::string_view policy,
                                                 const TimelineOptions& options);

}  // namespace tessera
