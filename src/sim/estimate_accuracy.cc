#include "sim/estimate_accuracy.h"

#include <cmath>

#include "sim/statistics.h"

namespace tessera {

namespace {

// Starts this close to the estimate count as neither early nor late: the estimate's resolution.
constexpr double kOnTimeSeconds = 60;

}  // namespace

Status EstimateAccuracy::estimate_arrivals(const EstimateInputs& inputs, const CycleOptions& cycle) {
  const size_t count = inputs.workloads.size();
  if (seen_.size() < count) {
    seen_.resize(count, 0);
    estimate_.resize(count, -1);
  }
  std::vector<WorkloadId> arrivals;
  for (WorkloadId id : inputs.workloads.active()) {
    const size_t index = static_cast<size_t>(id);
    if (seen_[index]) continue;
    seen_[index] = 1;
    if (inputs.workloads.is_pending(id, inputs.cluster)) arrivals.push_back(id);
  }
  if (arrivals.empty()) return Ok{};
  auto estimates = estimate_starts(inputs, cycle, options_);
  if (!estimates) return estimates.error();
  wall_seconds_.push_back(estimates->seconds);
  steps_.push_back(estimates->steps);
  ++stops_[std::string(estimate_stop_name(estimates->stop))];
  std::vector<char> arrived(count, 0);
  for (WorkloadId id : arrivals) arrived[static_cast<size_t>(id)] = 1;
  for (const StartEstimate& estimate : estimates->estimates) {
    const size_t index = static_cast<size_t>(estimate.workload);
    if (index < count && arrived[index]) estimate_[index] = estimate.start;
  }
  for (WorkloadId id : arrivals) {
    if (estimate_[static_cast<size_t>(id)] >= 0) {
      ++estimated_;
    } else {
      ++unreached_;
    }
  }
  return Ok{};
}

void EstimateAccuracy::started(WorkloadId id, double now) {
  const size_t index = static_cast<size_t>(id);
  if (index >= estimate_.size() || estimate_[index] < 0) return;
  const double error = now - estimate_[index];
  errors_.push_back(std::abs(error));
  if (error > kOnTimeSeconds) ++late_;
  if (error < -kOnTimeSeconds) ++early_;
  estimate_[index] = -1;  // only the first start counts
}

EstimateSummary EstimateAccuracy::summary() const {
  EstimateSummary summary;
  summary.enabled = true;
  summary.calls = static_cast<int64_t>(wall_seconds_.size());
  summary.estimated = estimated_;
  summary.unreached = unreached_;
  summary.compared = static_cast<int64_t>(errors_.size());
  summary.abs_error_seconds = quantiles(errors_);
  summary.late = late_;
  summary.early = early_;
  summary.wall_seconds = quantiles(wall_seconds_);
  summary.steps = quantiles(steps_);
  summary.max_steps = options_.max_steps;
  summary.max_wall_seconds = options_.max_wall_seconds;
  summary.stops = stops_;
  return summary;
}

}  // namespace tessera
