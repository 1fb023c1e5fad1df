#include "policy/dot_product_policy.h"

#include "policy/device_choice.h"
#include "policy/node_shares.h"

namespace tessera {

PlacementChoice DotProductPolicy::score(const NodeView& node, const PodSpec& pod) {
  PlacementChoice choice;
  if (pod.gpu.is_fractional()) choice.device = tightest_device(node.spec, node.state, pod);
  auto share = [](double amount, double capacity) { return capacity > 0 ? amount / capacity : 0.0; };
  const double gpu_capacity = static_cast<double>(node.spec.gpu_count()) * kMilliPerGpu;
  double gpu_request = 0;
  if (pod.gpu.kind == GpuRequest::Kind::kWhole) gpu_request = pod.gpu.whole_gpus * double{kMilliPerGpu};
  if (choice.device >= 0)
    gpu_request = pod.gpu.milli_on_device(node.spec.gpus[static_cast<size_t>(choice.device)].memory_bytes);
  const auto free = free_shares(node.spec, node.state);
  choice.score =
      share(static_cast<double>(pod.request.cpu_milli), static_cast<double>(node.spec.allocatable.cpu_milli)) *
          free[0] +
      share(static_cast<double>(pod.request.memory_bytes), static_cast<double>(node.spec.allocatable.memory_bytes)) *
          free[1] +
      share(gpu_request, gpu_capacity) * free[2];
  return choice;
}

}  // namespace tessera
