// When each pending workload will start (Slurm's `squeue --start`): the scheduler's own cycle run
// forward from the live snapshot in simulated time, on copies of the cluster state, workloads
// and carried state. Running work ends at its expected end — its time limit, or an expected
// runtime where one is declared — and nothing new arrives. The run is bounded (simulated steps,
// wall time, horizon): workloads it does not reach get no estimate, and the result says why.
//
// 1. A cycle at `now` (what the next real cycle would do with nothing changed).
// 2. Advance to the next expected end (ends within `resolution_seconds` of it together), finish
//    what ends there, and run a cycle; repeat.
// 3. A pending workload's estimate is the simulated time of the cycle that first started it, and
//    its cause the work that made room: the queue whose work ended (or was evicted) in that
//    step with the most GPUs, and whether that queue held more than its fair share (borrowed).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "policy/placement_policy.h"
#include "scheduler/cycle.h"

namespace tessera {

struct EstimateOptions {
  int max_steps = 200;                 // simulated cycles at most (the first, at `now`, included)
  double max_wall_seconds = 1.0;       // the estimator's own time budget per call
  double horizon_seconds = 7 * 86400;  // no estimate further out than this
  // Ends this close together are taken in one step: fewer cycles, estimates off by at most this.
  double resolution_seconds = 60;
};

// What made room for a workload in the forward run.
enum class EstimateCause : uint8_t {
  kNextCycle,  // it starts in the cycle at `now`, with nothing changed
  kWorkEnds,   // running work reaches its expected end
  kEvictions,  // the forward cycle evicted work for it (reclaim, preemption, consolidation)
};

struct StartEstimate {
  WorkloadId workload = -1;
  double start = 0;  // simulated time of the cycle that starts it
  Action action = Action::kAllocate;
  EstimateCause cause = EstimateCause::kNextCycle;
  QueueIndex cause_queue = QueueTree::kNoParent;  // whose work ended or was evicted (most GPUs)
  double cause_gpus = 0;                          // GPUs that queue's work released in that step
  bool cause_borrowed = false;                    // that queue held more than its fair share then
  // Of that queue's work that made room, the names of the (at most two) workloads that held the
  // most GPUs, most first, and how many workloads made room in all.
  std::vector<std::string> cause_workloads = {};
  int cause_workload_count = 0;
};

enum class EstimateStop : uint8_t {
  kAllEstimated,  // every pending workload got an estimate
  kNoMoreEnds,    // nothing running has an expected end left: the rest waits on unknown ends
  kStepCap,       // max_steps reached
  kWallCap,       // max_wall_seconds spent
  kHorizon,       // the next end lies beyond horizon_seconds
};
std::string_view estimate_stop_name(EstimateStop stop);

struct StartEstimates {
  std::vector<StartEstimate> estimates;  // in the order the forward run started them
  std::vector<WorkloadId> unreached;     // pending at `now` and given no estimate
  EstimateStop stop = EstimateStop::kAllEstimated;
  int steps = 0;  // cycles run
  double seconds = 0;
};

struct EstimateInputs {
  const ClusterState& cluster;
  PlacementPolicy& policy;  // the placement policy of the live placer (a fresh placer serves the copy)
  const WorkloadSet& workloads;
  const QueueTree& queues;
  const ResourceMeter& meter;
  double now = 0;
  const CarriedState* carried = nullptr;
  // Per WorkloadId: how long one run lasts (seconds from its start), or a negative number or
  // infinity where nothing is declared (such work is not expected to end).
  std::span<const double> expected_runtime;
};

// Fails only where a forward cycle fails (inputs a real cycle would refuse too).
Result<StartEstimates> estimate_starts(const EstimateInputs& inputs, const CycleOptions& cycle,
                                       const EstimateOptions& options = {});

// The run time to expect of a workload: its time limit where it has one, else `declared` (an
// expected-runtime annotation, a scenario's duration) where that is positive; else infinity.
double expected_runtime_of(const WorkloadSpec& spec, double declared);

// What makes room: "in the next cycle", "when 16 GPUs of queue ml-research's borrowed work end
// (ml/pretrain)", "by reclaiming 8 GPUs of queue b's borrowed work (b/sweep-3 and 2 more)".
// Stable from cycle to cycle while the forward run finds the same cause, so a status that
// carries it changes only when it does.
std::string describe_cause(const StartEstimate& estimate, const QueueTree& tree);
// The cause with the wait counted from `now`: "when 16 GPUs of queue ml-research's borrowed
// work end (ml/pretrain), ~35 min"; "in the next cycle" alone where it starts then.
std::string describe(const StartEstimate& estimate, const QueueTree& tree, double now);
// The wait in words: "in the next cycle" (under a second), else "~35 min".
std::string describe_wait(double seconds);

}  // namespace tessera
