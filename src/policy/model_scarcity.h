// How scarce each GPU model is for the pods that can run only on it, and what a placement on it
// costs them. The pods constrained to model m ask for a share c_m of the workload's GPU demand; if
// the cluster's free GPUs F were taken in the workload's proportions, they would want c_m * F of m:
//   r_m = c_m * F / F_m          (F_m: the free GPUs of model m, cluster-wide)
// is the share of m's free GPUs its constrained pods are expected to need. Below 1 some of it is
// spare for pods that may run anywhere; at 1 every GPU of m another pod takes is one a constrained
// pod will miss. A placement that takes g milli-GPU of idle devices of model m costs
//   cost = kWeight * g * min(r_m, 1)
// (a fraction costs nothing on a node where a device already in use has room for it: the policy
// fills such remainders, which whole-GPU pods could not use), which the tessera policy subtracts from its per-node
// score (tessera_policy.h). A pod that can run only on m pays the same on every node it may use, so only pods with a
// choice of models are steered: toward the models their constrained pods need least. The figure is cluster-wide — no
// node's state shows it — so the engine adds it outside its per-state verdict cache
// (PlacementPolicy::cluster_term).
// A pod is constrained to models by its allowed models, or by size: a pod asking for more CPU or
// memory than the nodes of its GPU count mostly have (in the trace, 8 GPUs and 120 cores, which
// only the 128-core nodes of one model hold) can run only on the larger nodes, and counts as
// constrained to their models. Without that, pods that fit anywhere take those nodes first and the
// large pods fail with most of the cluster idle (docs/results.md, "Pods only the larger nodes can
// take"). Shapes are told apart by model only: a large pod that fits some nodes of a model counts
// every node of it.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "core/gpu_supply.h"
#include "core/node.h"
#include "core/node_state.h"
#include "core/pod.h"
#include "policy/workload_mix.h"

namespace tessera {

class ModelScarcity {
 public:
  // The cost outweighs the per-node measure's differences (a GPU lost to a constrained pod is
  // lost outright, where the measure's growths are expectations over the types): on the tuning
  // lists of scripts/packing-generalisation.sh the gain rises from 0.25 to 8 and is flat beyond
  // (16, 100); docs/results.md has the figures and the held-out result.
  static constexpr double kWeight = 8;

  explicit ModelScarcity(const WorkloadMix& mix);

  // Whether any pod type of the mix is constrained to GPU models: without one, every cost is 0.
  // A type is constrained by the models it names, or by the cluster's nodes: where the models with
  // a node of its GPU count, CPU and memory hold under half the GPUs of those with a node of its GPU
  // count, it can run only on theirs (and not where CPU runs out before GPUs). Until the shares are
  // worked out with the cluster's supply this is whether any type asks for GPUs at all (any may
  // turn out constrained).
  bool any_constrained() const { return any_constrained_; }
  // Whether placing on the node may cost anything: not where no pod is constrained to its model
  // (cost is 0 there). Inline, so that the many nodes of such models cost no call.
  bool may_cost(const NodeSpec& node) const {
    return any_constrained_ && !node.gpus.empty() && (!shares_ || (*shares_)[node.gpus.front().model] > 0);
  }
  // The cost of placing `pod` on the node (the model of its first device) in `state`, in milli-GPU.
  double cost(const NodeSpec& node, const NodeState& state, const PodSpec& pod, const GpuSupply& supply);
  // r_m for the model, given the cluster's supply; 0 for a model with nothing free.
  double pressure(GpuModelId model, const GpuSupply& supply);
  // c_m: the share of the workload's GPU demand that only model m can serve. Worked out on the
  // first call (GPU-memory requests need the models' device memory) and kept, as an instance
  // serves one cluster.
  double constrained_share(GpuModelId model, const GpuSupply& supply);

 private:
  void work_out_shares(const GpuSupply& supply);

  double cpu_per_gpu_milli_ = 0;  // of the whole mix
  std::vector<PodType> gpu_types_;
  bool any_constrained_ = false;
  std::optional<std::array<double, GpuModelSet::kMaxModels>> shares_;
};

}  // namespace tessera
