#include "policy/best_fit_policy.h"

#include <cmath>

#include "policy/device_choice.h"

namespace tessera {

namespace {

// The normalisation of the reference: the largest node of the cluster it was written for.
constexpr double kReferenceCpuMilli = 128000;
constexpr double kReferenceGpuMilli = 8000;

}  // namespace

PlacementChoice BestFitPolicy::score(const NodeView& node, const PodSpec& pod) {
  PlacementChoice choice;
  if (pod.gpu.is_fractional()) choice.device = tightest_device(node.spec, node.state, pod);
  const NodeState after = state_after(node.spec, node.state, pod, choice.device);
  const double left = 0.5 * static_cast<double>(after.free.cpu_milli) / kReferenceCpuMilli +
                      0.5 * static_cast<double>(after.gpu_free_total()) / kReferenceGpuMilli;
  choice.score = std::trunc(100.0 * (1.0 - left));  // as Go converts it to an integer
  return choice;
}

}  // namespace tessera
