// How good the start-time estimates are in a replay: each workload still pending after the first
// cycle that saw it gets the estimate made then (scheduler/start_estimates.h), and its first
// real start is compared with it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "scheduler/start_estimates.h"
#include "sim/sim_results.h"

namespace tessera {

class EstimateAccuracy {
 public:
  explicit EstimateAccuracy(EstimateOptions options) : options_(options) {}

  // After a cycle at inputs.now: estimates the pending workloads no earlier cycle saw pending,
  // when there are any (one forward run serves them all).
  Status estimate_arrivals(const EstimateInputs& inputs, const CycleOptions& cycle);
  // A workload's first real start.
  void started(WorkloadId id, double now);

  EstimateSummary summary() const;

 private:
  EstimateOptions options_;
  std::vector<char> seen_;        // per WorkloadId: a cycle has seen it (pending or started)
  std::vector<double> estimate_;  // per WorkloadId: the estimated start; < 0 for none
  std::vector<double> errors_;    // |estimate - start|
  std::vector<double> wall_seconds_;
  std::vector<double> steps_;
  std::map<std::string, int64_t> stops_;
  int64_t estimated_ = 0;
  int64_t unreached_ = 0;
  int64_t late_ = 0;
  int64_t early_ = 0;
};

}  // namespace tessera
