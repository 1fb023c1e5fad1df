// Places pods and gangs with a placement policy: checks feasibility on one representative per
// node group, asks the policy to score the feasible ones, keeps the best (ties: lowest index).
// Verdicts are cached per (group, pod shape): a group's state never changes and a policy's
// score depends only on the node's state, so each pair is judged once. A Placer therefore
// serves one ClusterState for its lifetime.
#pragma once

#include <array>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>

#include "core/binding.h"
#include "engine/cluster_state.h"
#include "engine/pod_shapes.h"
#include "engine/statement.h"
#include "policy/feasibility.h"
#include "policy/placement_policy.h"

namespace tessera {

// How many nodes failed each predicate for a pod that could not be placed (docs/design.md §7).
struct FailureSummary {
  std::array<int, kPredicateCount> nodes_by_predicate{};
  int failed_pod_index = -1;  // within a gang: the first member that found no node
  // Predicate::kGpuMemoryLimit: the pod's GPU memory request and limit (MiB, rounded up), and
  // the lowest and highest overcommit (milli) of the nodes that had room for the request but not
  // the limit. Small: every pending workload's reason holds one.
  int32_t gpu_memory_request_mib = 0;
  int32_t gpu_memory_limit_mib = 0;
  int16_t overcommit_low_milli = 0;
  int16_t overcommit_high_milli = 0;

  // Counts `nodes` nodes of `spec` that failed `predicate` for `pod`.
  void count(Predicate predicate, int nodes, const NodeSpec& spec, const PodSpec& pod);
  // "12 nodes: not enough idle GPUs; 3 nodes: untolerated taint", most frequent first; GPU
  // memory limits as "GPU memory limits: 3 nodes have room for the 20Gi request but not for the
  // 40Gi limit at overcommit 1.5".
  std::string describe() const;
};

class Placer {
 public:
  explicit Placer(PlacementPolicy& policy) : policy_(policy) {}

  // Breaks ties among the best nodes uniformly at random (seeded) instead of by the lowest
  // index, as the FGD paper's simulator does; policies whose rule is the order of the nodes
  // (first-fit) keep it. Experiments use it to run baselines as they were published.
  void break_ties_at_random(uint64_t seed) { random_.emplace(seed); }

  // The best feasible binding for the pod in the cluster as it is, or nullopt. Reserved nodes
  // count only where the pass admits them.
  std::optional<Binding> find(const ClusterState& cluster, const PodSpec& pod, FailureSummary* why = nullptr,
                              const PlacementPass& pass = {});

  // Places every pod of a gang in the statement, or none: on failure the statement is rolled
  // back to where it was and false is returned.
  bool place_gang(Statement& statement, std::span<const PodId> pods, FailureSummary* why = nullptr,
                  const PlacementPass& pass = {});

 private:
  // For a pod whose selector names a label the cluster does not group nodes by (a pod that was
  // never added to it): every node checked and scored on its own, nothing cached.
  std::optional<Binding> find_node_by_node(const ClusterState& cluster, const PodSpec& pod, FailureSummary* why,
                                           const PlacementPass& pass);

  struct Verdict {
    Predicate predicate = Predicate::kFits;
    int32_t device_code = -1;  // the chosen device, as ClusterState::device_code
    double score = 0;
  };

  // Whether a node of `weight` nodes that scores `score` replaces the best so far (nullopt: none
  // yet); ties go to the lowest index, or at random in proportion to the nodes tied.
  bool takes_the_lead(double score, NodeIndex node, int weight, std::optional<double> best_score, NodeIndex best_node);

  PlacementPolicy& policy_;
  std::optional<std::mt19937_64> random_;
  int64_t tied_weight_ = 0;  // nodes tied for the best so far, with random ties
  const ClusterState* cluster_ = nullptr;
  PodShapes shapes_;
  std::unordered_map<uint64_t, Verdict> verdicts_;
};

// The binding a policy choice stands for on that node.
Binding make_binding(const NodeView& node, const PodSpec& pod, const PlacementChoice& choice);

}  // namespace tessera
