#include "sim/offline_packing.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "policy/first_fit_policy.h"
#include "policy/tessera_policy.h"

namespace tessera {

namespace {

int64_t packed_gpu_milli(const std::shared_ptr<const ClusterSpec>& cluster, std::span<const PodSpec* const> pods,
                         PlacementPolicy& policy) {
  ClusterState state(cluster);
  Placer placer(policy);
  for (const PodSpec* pod : pods) {
    const PodId id = state.add_pod(*pod);
    if (auto binding = placer.find(state, *pod)) state.bind(id, std::move(*binding));
  }
  return state.totals().gpu_allocated_milli;
}

// The tessera policy's per-node measure without its cluster-wide term: on some lists the measure
// alone packs pods known in advance better, and the ceiling keeps the better packing.
class PerNodeScoreOnly final : public PlacementPolicy {
 public:
  explicit PerNodeScoreOnly(PlacementPolicy& policy) : policy_(policy) {}
  std::string_view name() const override { return policy_.name(); }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override { return policy_.score(node, pod); }

 private:
  PlacementPolicy& policy_;
};

}  // namespace

int64_t offline_packed_gpu_milli(const std::shared_ptr<const ClusterSpec>& cluster, std::span<const PodSpec> pods) {
  const int64_t device_memory = cluster->median_device_memory();
  FirstFitPolicy first_fit;
  TesseraPolicy tessera(WorkloadMix::from_pods(pods));
  PerNodeScoreOnly tessera_per_node(tessera);
  int64_t best = 0;
  for (const int cpu_order : {1, -1}) {  // within one GPU size: more CPU first, then less CPU first
    std::vector<const PodSpec*> order;
    order.reserve(pods.size());
    for (const PodSpec& pod : pods) order.push_back(&pod);
    auto key = [&](const PodSpec* pod) {
      const int64_t gpu = pod->gpu.pending_milli(device_memory);
      // CPU-only pods first: a scheduler serves them as they come, so a packing may not leave
      // them out to make room for GPU pods.
      return std::tuple(gpu == 0 ? std::numeric_limits<int64_t>::max() : gpu, cpu_order * pod->request.cpu_milli,
                        pod->request.memory_bytes);
    };
    std::stable_sort(order.begin(), order.end(), [&](const PodSpec* a, const PodSpec* b) { return key(a) > key(b); });
    best = std::max({best, packed_gpu_milli(cluster, order, first_fit), packed_gpu_milli(cluster, order, tessera)});
    if (tessera.has_cluster_term()) best = std::max(best, packed_gpu_milli(cluster, order, tessera_per_node));
  }
  return best;
}

}  // namespace tessera
