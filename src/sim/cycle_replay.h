// The timeline experiment on a scenario with queues (docs/design.md §4, §9): the scheduling cycle
// (scheduler/cycle.h) runs every cycle interval of simulated time over one cluster state, placer
// and workload set kept for the whole replay.
//
// Between cycles only arrivals and completions happen: a workload arrives into its leaf queue and
// waits for the next cycle; a running workload completes, exactly when its accumulated run time
// reaches its duration, and frees its room for the next cycle. Run time accrues only while its
// gang runs. An evicted workload returns to its queue and keeps only the progress up to its last
// checkpoint; a workload that consolidation moves restarts in its new place with the same loss;
// elastic extras taken away lose nothing.
//
// Per queue it records allocation against fair share over time, starvation episodes (how long a
// queue with pending work waits for its deserved quota), evictions and the GPU-hours they cost,
// and wait and completion times; for the cluster, utilisation and churn by action.
#pragma once

#include <string_view>

#include "core/result.h"
#include "sim/scenario.h"
#include "sim/sim_results.h"
#include "sim/timeline_replay.h"

namespace tessera {

// Fails on a workload whose queue is not a leaf of the scenario's queue tree, on an invalid tree
// or cycle interval, and, with options.check_invariants, on the first violated invariant, naming
// the time of the cycle after which it was found.
Result<TimelinePolicyResult> run_cycle_replay(const Scenario& scenario, std::string_view policy,
                                              const TimelineOptions& options);

// The progress an evicted workload keeps of `run_seconds`: what its last checkpoint saved, that
// is run_seconds rounded down to a multiple of the interval; nothing without checkpoints.
double checkpointed_progress(double run_seconds, double checkpoint_interval_seconds);

}  // namespace tessera
