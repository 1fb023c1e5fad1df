#include "sim/offline_packing.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "policy/first_fit_policy.h"
#include "policy/tessera_policy.h"
#include "sim/slack_patterns.h"

namespace tessera {

namespace {

// Where the packing finds its placer for each pod or unit it places (by its index in the
// packing's order): one placer for the whole packing, or one re-made as the packing goes.
using PlacerAt = std::function<Placer&(size_t index)>;

// The tessera policy measured against the GPU pods still to place, re-made (with a placer of its
// own, whose caches hold that policy's scores) whenever the packing moves on to a smaller
// whole-GPU request or to the fractions. An offline packing knows what is still to come: measured
// against every arrived pod, an 8-GPU type whose pods are all placed goes on keeping idle nodes
// for pods that never come, and the 1-GPU pods start new nodes to spare them.
class RemainingMixPlacers {
 public:
  // `sizes[i]`: the GPU request of the i-th pod or unit of the packing's order; `pods_from(i)`:
  // the pods from the i-th on.
  RemainingMixPlacers(std::vector<int64_t> sizes, std::function<std::vector<PodSpec>(size_t)> pods_from)
      : sizes_(std::move(sizes)), pods_from_(std::move(pods_from)) {}

  Placer& at(size_t index) {
    if (index >= sizes_.size() && placer_) return *placer_;  // what is left over, after the last
    const int64_t size = index < sizes_.size() ? sizes_[index] : 0;
    const int64_t phase = size >= kMilliPerGpu ? size : 0;  // the fractions are one phase
    if (!placer_ || phase != phase_) {
      placer_.reset();
      policy_ = std::make_unique<TesseraPolicy>(WorkloadMix::from_pods(pods_from_(index)));
      placer_ = std::make_unique<Placer>(*policy_);
      phase_ = phase;
    }
    return *placer_;
  }

 private:
  std::vector<int64_t> sizes_;
  std::function<std::vector<PodSpec>(size_t)> pods_from_;
  int64_t phase_ = -1;
  std::unique_ptr<TesseraPolicy> policy_;
  std::unique_ptr<Placer> placer_;
};

int64_t packed_gpu_milli(const std::shared_ptr<const ClusterSpec>& cluster, std::span<const PodSpec* const> pods,
                         const PlacerAt& placer_at) {
  ClusterState state(cluster);
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodId id = state.add_pod(*pods[i]);
    if (auto binding = placer_at(i).find(state, *pods[i])) state.bind(id, std::move(*binding));
  }
  return state.totals().gpu_allocated_milli;
}

int64_t packed_gpu_milli(const std::shared_ptr<const ClusterSpec>& cluster, std::span<const PodSpec* const> pods,
                         PlacementPolicy& policy) {
  Placer placer(policy);
  return packed_gpu_milli(cluster, pods, [&placer](size_t) -> Placer& { return placer; });
}

// The order GPU pods are packed in, largest first: by GPU request; within one size, pods held
// to GPU models before the others (which can use what they leave); then by CPU, more first
// (`cpu_order` 1) or less first (-1); then by memory.
std::tuple<int64_t, bool, int64_t, int64_t> packing_key(const PodSpec& pod, int64_t device_memory, int cpu_order) {
  return {pod.gpu.pending_milli(device_memory), !pod.allowed_models.is_any(), cpu_order * pod.request.cpu_milli,
          pod.request.memory_bytes};
}

// A fractional pod that may share a device with others in one pattern: a portion of a device
// (a GPU-memory request's share depends on the device), asking nothing that tells nodes apart
// but its GPU models.
bool joins_patterns(const PodSpec& pod) {
  return pod.gpu.kind == GpuRequest::Kind::kPortion && pod.node_selector.empty() && pod.tolerations.empty();
}

// What the packing places as one: a pod, or a pattern of fractional pods (slack_patterns.h)
// placed as a pod asking their CPU, memory and shares together.
struct PackingUnit {
  PodSpec shape;
  std::vector<const PodSpec*> members;
};

PackingUnit pattern_unit(std::span<const PodSpec* const> group, const SlackPattern& pattern) {
  PackingUnit unit{.shape = *group[pattern.members.front()], .members = {}};
  unit.shape.request = Resources{};
  unit.shape.gpu = GpuRequest::portion(pattern.total_milli);
  for (const size_t member : pattern.members) {
    unit.members.push_back(group[member]);
    unit.shape.request.cpu_milli += group[member]->request.cpu_milli;
    unit.shape.request.memory_bytes += group[member]->request.memory_bytes;
  }
  return unit;
}

struct PatternPacking {
  int64_t gpu_milli = 0;
  size_t cpu_only_placed = 0;
};

// What a pattern packing places, in its order: the CPU-only pods, and the GPU pods and patterns.
struct PatternPlan {
  std::vector<const PodSpec*> cpu_only;
  std::vector<PackingUnit> units;
};

// `pods` in the packing's order. The fractional pods that may share a device are grouped by
// their allowed GPU models into patterns; the patterns and the other GPU pods are ordered by
// their GPU requests (then CPU, as `cpu_order` says).
PatternPlan pattern_plan(const std::shared_ptr<const ClusterSpec>& cluster, std::span<const PodSpec* const> pods,
                         int cpu_order) {
  const int64_t device_memory = cluster->median_device_memory();
  PatternPlan plan;
  std::map<uint64_t, std::vector<const PodSpec*>> groups;  // allowed models -> fractional pods
  for (const PodSpec* pod : pods) {
    if (!pod->gpu.wants_gpu()) {
      plan.cpu_only.push_back(pod);
    } else if (joins_patterns(*pod)) {
      groups[pod->allowed_models.bits()].push_back(pod);
    } else {
      plan.units.push_back({.shape = *pod, .members = {pod}});
    }
  }
  for (const auto& [models, group] : groups) {
    std::vector<int> shares;
    for (const PodSpec* pod : group) shares.push_back(static_cast<int>(pod->gpu.nominal_milli()));
    for (const SlackPattern& pattern : minimum_slack_patterns(shares))
      plan.units.push_back(pattern_unit(group, pattern));
  }
  std::stable_sort(plan.units.begin(), plan.units.end(), [&](const PackingUnit& a, const PackingUnit& b) {
    return packing_key(a.shape, device_memory, cpu_order) > packing_key(b.shape, device_memory, cpu_order);
  });
  return plan;
}

// Places the plan's units in order, each pattern's pods on the device found for the pattern; a
// pattern no node takes leaves its pods to be placed one by one after the others, with any the
// device could not hold. The CPU-only pods come before the GPU pods or, with `cpu_only_last`,
// after them (where CPU is plenty, every one still finds a node and the GPU pods had the first
// pick of each node's CPU). `placer_at(i)` places the i-th unit; the CPU-only pods and those left
// over go to the placer of the first unit and of the place after the last.
PatternPacking pattern_packing(const std::shared_ptr<const ClusterSpec>& cluster, const PatternPlan& plan,
                               bool cpu_only_last, const PlacerAt& placer_at) {
  ClusterState state(cluster);
  auto place = [&](PodId id, Placer& placer) {
    std::optional<Binding> binding = placer.find(state, state.pod(id));
    if (binding) state.bind(id, std::move(*binding));
    return binding.has_value();
  };
  PatternPacking packing;
  auto place_cpu_only = [&](Placer& placer) {
    for (const PodSpec* pod : plan.cpu_only) packing.cpu_only_placed += place(state.add_pod(*pod), placer) ? 1 : 0;
  };
  if (!cpu_only_last) place_cpu_only(placer_at(0));
  std::vector<PodId> left;
  for (size_t i = 0; i < plan.units.size(); ++i) {
    const PackingUnit& unit = plan.units[i];
    Placer& placer = placer_at(i);
    if (unit.members.size() == 1) {  // a pod, or a pattern of one: the same thing
      place(state.add_pod(*unit.members.front()), placer);
      continue;
    }
    const std::optional<Binding> found = placer.find(state, unit.shape);
    for (const PodSpec* member : unit.members) {
      const PodId id = state.add_pod(*member);
      if (!found) {
        left.push_back(id);
        continue;
      }
      const int64_t memory =
          state.node_spec(found->node).gpus[static_cast<size_t>(found->devices.front())].memory_bytes;
      Binding binding = Binding::on_device(found->node, found->devices.front(), member->gpu, memory);
      if (state.fits(id, binding)) {
        state.bind(id, std::move(binding));
      } else {
        left.push_back(id);
      }
    }
  }
  Placer& last = placer_at(plan.units.size());
  for (const PodId id : left) place(id, last);
  if (cpu_only_last) place_cpu_only(last);
  packing.gpu_milli = state.totals().gpu_allocated_milli;
  return packing;
}

// The tessera policy's per-node measure without its cluster-wide term: on some lists the measure
// alone packs pods known in advance better, and the ceiling keeps the better packing.
class PerNodeScoreOnly final : public PlacementPolicy {
 public:
  explicit PerNodeScoreOnly(PlacementPolicy& policy) : policy_(policy) {}
  std::string_view name() const override { return policy_.name(); }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override { return policy_.score(node, pod); }
  void search_begins(const GpuSupply& supply) override { policy_.search_begins(supply); }
  void search_ends() override { policy_.search_ends(); }

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
  // Both pattern packings of one plan and placer; the CPU-only pods last count only where they
  // are served as fully as when they come first.
  auto best_pattern_packing = [&](const PatternPlan& plan, const std::function<PlacerAt()>& make_placer_at) {
    const PatternPacking cpu_only_first = pattern_packing(cluster, plan, false, make_placer_at());
    const PatternPacking cpu_only_last = pattern_packing(cluster, plan, true, make_placer_at());
    best = std::max(best, cpu_only_first.gpu_milli);
    if (cpu_only_last.cpu_only_placed >= cpu_only_first.cpu_only_placed) best = std::max(best, cpu_only_last.gpu_milli);
  };
  for (const int cpu_order : {1, -1}) {  // within one GPU size: more CPU first, then less CPU first
    std::vector<const PodSpec*> order;
    order.reserve(pods.size());
    for (const PodSpec& pod : pods) order.push_back(&pod);
    auto key = [&](const PodSpec* pod) {
      auto order_key = packing_key(*pod, device_memory, cpu_order);
      // CPU-only pods first: a scheduler serves them as they come, so a packing may not leave
      // them out to make room for GPU pods.
      if (std::get<0>(order_key) == 0) std::get<0>(order_key) = std::numeric_limits<int64_t>::max();
      return order_key;
    };
    std::stable_sort(order.begin(), order.end(), [&](const PodSpec* a, const PodSpec* b) { return key(a) > key(b); });
    std::vector<PlacementPolicy*> policies = {&tessera};
    if (tessera.has_cluster_term()) policies.push_back(&tessera_per_node);
    best = std::max(best, packed_gpu_milli(cluster, order, first_fit));
    const PatternPlan plan = pattern_plan(cluster, order, cpu_order);
    for (PlacementPolicy* policy : policies) {
      best = std::max(best, packed_gpu_milli(cluster, order, *policy));
      best_pattern_packing(plan, [&] {
        auto placer = std::make_shared<Placer>(*policy);
        return PlacerAt([placer](size_t) -> Placer& { return *placer; });
      });
    }
    // The tessera policy measured against the pods still to place, pod by pod and in patterns.
    std::vector<int64_t> sizes;
    for (const PodSpec* pod : order) sizes.push_back(pod->gpu.pending_milli(device_memory));  // CPU-only: 0
    RemainingMixPlacers by_pod(sizes, [&](size_t from) {
      std::vector<PodSpec> rest;
      for (size_t i = from; i < order.size(); ++i) rest.push_back(*order[i]);
      return rest;
    });
    best = std::max(best, packed_gpu_milli(cluster, order, [&](size_t i) -> Placer& { return by_pod.at(i); }));
    std::vector<int64_t> unit_sizes;
    for (const PackingUnit& unit : plan.units) unit_sizes.push_back(unit.shape.gpu.pending_milli(device_memory));
    auto units_from = [&](size_t from) {
      std::vector<PodSpec> rest;
      for (size_t i = from; i < plan.units.size(); ++i) {
        for (const PodSpec* member : plan.units[i].members) rest.push_back(*member);
      }
      return rest;
    };
    best_pattern_packing(plan, [&] {
      auto placers = std::make_shared<RemainingMixPlacers>(unit_sizes, units_from);
      return PlacerAt([placers](size_t i) -> Placer& { return placers->at(i); });
    });
  }
  return best;
}

}  // namespace tessera
