// The limits step of the cycle (docs/scheduling-cycle.md "Limits"), and what it carries from one
// cycle to the next: per workload, by name, the rules in force, its LimitClock, and when a
// workload requeued by its limit may run again. Each caller of run_cycle — the simulator, the
// Kubernetes adapter — holds one, calls review() before each cycle, carries out the verdicts, and
// marks held workloads (Workload::held_until) from held_until() when it builds the cycle's inputs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/cluster_state.h"
#include "policy/fair_share.h"
#include "scheduler/work_limits.h"
#include "scheduler/workload_set.h"

namespace tessera {

// The highest GPU utilisation (percent) among a running workload's GPUs, each averaged over
// `window_seconds`; nullopt when unknown (no telemetry, or the source is down).
using UtilisationReader = std::function<std::optional<double>(WorkloadId workload, double window_seconds)>;

struct LimitOutcome {
  WorkloadId workload = -1;
  LimitVerdict verdict;
  std::string message;  // describe_verdict's sentence
};

class LimitLedger {
 public:
  // Brings the clock of every running workload up to `now` (run time since the last review, idle
  // time from `read`), judges it, and returns the verdicts that call for something: notices,
  // withdrawn notices, expiries. The caller carries out expiries before the cycle runs: kStop ends
  // the workload, kRequeue evicts it (it may run again at held_until), kPreemptible marks it
  // preemptible (made_preemptible() says so from then on). Workloads gone from `workloads` are
  // forgotten (a requeued one once its delay is over); one not running keeps its clock, and its
  // next run starts a new current run. A stopped workload, and a requeued one within its delay,
  // get no verdicts while their pods end.
  std::vector<LimitOutcome> review(const WorkloadSet& workloads, const ClusterState& cluster, const QueueTree& tree,
                                   double now, const UtilisationReader& read);

  // When a workload requeued by its limit may run again; nullopt: it is not held.
  std::optional<double> held_until(const std::string& workload) const;
  // Whether its limit made it preemptible.
  bool made_preemptible(const std::string& workload) const;
  // Its clock and limits as of the last review; nullptr: not seen.
  const LimitClock* clock(const std::string& workload) const;
  const WorkLimits* limits(const std::string& workload) const;
  // Whether any workload has limits: without any, the step has nothing to do.
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    WorkLimits limits;
    LimitClock clock;
    double seen_at = 0;    // the last review that saw it running
    bool running = false;  // as of the last review
    double held_until = 0;
    bool held = false;
    bool stopped = false;  // its limit stopped it: no further verdicts
  };
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace tessera
