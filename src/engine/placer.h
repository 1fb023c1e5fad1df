// Places pods and gangs with a placement policy: checks feasibility on one representative per
// node group, asks the policy to score the feasible ones, keeps the best (ties: lowest index).
// Verdicts are cached per (group, pod shape): a group's state never changes and a policy's
// score depends only on the node's state, so each pair is judged once while the group lives. They
// are kept by shape, then by the group's slot, so that a search, which asks about every group for
// one shape, reads them side by side in the order it visits the groups. The policy's cluster-wide
// term (PlacementPolicy::cluster_term) is added afresh at every placement. A Placer therefore
// serves one ClusterState for its lifetime.
#pragma once

#include <array>
#include <memory>
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

// Why a gang with a required topology level did not start (docs/topology.md): the GPUs it needs
// within one domain of the level and the most any domain of it has free.
struct TopologyShortfall {
  std::string level;  // the level as people say it: "rack"
  int64_t need_milli = 0;
  int64_t most_free_milli = -1;  // -1: the gang did not fail for its topology
  std::string domain;            // the domain with the most free ("r7")
  int domains_with_room = 0;     // domains with the GPUs free that still could not hold the gang
  std::string unresolved;        // set: the constraint names what the cluster does not declare
  bool failed() const { return most_free_milli >= 0 || !unresolved.empty(); }
  // "needs 32 GPUs within one rack; the most free in a rack is 24 (rack r7)"
  std::string describe() const;
};

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
  // Set only when the gang failed for its topology: most failures are not, and a cycle keeps one
  // summary per pending workload.
  std::shared_ptr<const TopologyShortfall> topology;

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

  // Breaks ties among the best nodes by a random order of the nodes, drawn once (seeded) and kept
  // for the Placer's lifetime: the FGD paper's simulator renames every node with a random prefix
  // and its scheduler takes the first name among equal scores, so equal choices pile onto the
  // same nodes as with the lowest index, in another order. Policies whose rule is the order of
  // the nodes (first-fit) keep it. Experiments use it to run baselines as they were published.
  void break_ties_in_random_order(uint64_t seed, int node_count);
  // Breaks each tie afresh, uniformly at random (seeded), as the stock Kubernetes scheduler does;
  // first-fit keeps its order here too.
  void break_ties_at_random(uint64_t seed) { random_.emplace(seed); }

  // The best feasible binding for the pod in the cluster as it is, or nullopt. Reserved nodes
  // count only where the pass admits them. A pod of a shape that fit nowhere is not searched for
  // again while only the nodes that gained room since (ClusterState::room_gained_since) need a
  // look, and none of them fits it: in a full cluster most searches are for such pods.
  std::optional<Binding> find(const ClusterState& cluster, const PodSpec& pod, FailureSummary* why = nullptr,
                              const PlacementPass& pass = {});

  // The same, among the given nodes only (a topology domain), ties to the earliest listed.
  std::optional<Binding> find_among(const ClusterState& cluster, const PodSpec& pod, std::span<const NodeIndex> nodes,
                                    FailureSummary* why = nullptr, const PlacementPass& pass = {});

  // Places every pod of a gang in the statement, or none: on failure the statement is rolled
  // back to where it was and false is returned.
  bool place_gang(Statement& statement, std::span<const PodId> pods, FailureSummary* why = nullptr,
                  const PlacementPass& pass = {});
  // The same, every pod among the given nodes.
  bool place_gang_among(Statement& statement, std::span<const PodId> pods, std::span<const NodeIndex> nodes,
                        FailureSummary* why = nullptr, const PlacementPass& pass = {});

 private:
  // For a pod whose selector names a label the cluster does not group nodes by (a pod that was
  // never added to it): every node checked and scored on its own, nothing cached.
  std::optional<Binding> find_node_by_node(const ClusterState& cluster, const PodSpec& pod, FailureSummary* why,
                                           const PlacementPass& pass);

  struct Verdict {
    Predicate predicate = Predicate::kFits;
    // The node scored and its chosen device, so that asking about that node again (the cluster
    // term, for every pod of the shape) needs no search of its devices by code while the device
    // still has that code. (Laid out so that the verdict stays 40 bytes: a search reads many.)
    int16_t scored_device = -1;
    int32_t device_code = -1;  // the chosen device, as ClusterState::device_code
    double score = 0;
    NodeIndex scored_node = -1;
    float preference = 0;                    // PlacementChoice::preference
    std::array<float, kScoreParts> parts{};  // PlacementChoice::parts
  };

  // Clears the caches when they serve another cluster or grew too large.
  void serve(const ClusterState& cluster);
  // Tells the policy a search is under way for as long as it lives (PlacementPolicy::search_begins).
  class Search {
   public:
    Search(PlacementPolicy& policy, const GpuSupply& supply) : policy_(policy) { policy_.search_begins(supply); }
    ~Search() { policy_.search_ends(); }
    Search(const Search&) = delete;
    Search& operator=(const Search&) = delete;

   private:
    PlacementPolicy& policy_;
  };
  // Makes room for the shape's verdicts on every group slot the cluster has: called as a search
  // begins, so that the verdicts it holds on to stay where they are until it ends.
  void prepare_verdicts(const ClusterState& cluster, uint64_t shape);
  // The cached verdict for the pod (of interned `shape`, prepared) on the group's nodes.
  const Verdict& verdict(const ClusterState& cluster, const NodeGroups::Group& group, const PodSpec& pod,
                         uint64_t shape);
  // The node checked and, where the pod fits, scored: a verdict not yet cached.
  Verdict judge(const ClusterState& cluster, NodeIndex node, const PodSpec& pod);
  // The binding a verdict on the node stands for.
  Binding binding_for(const ClusterState& cluster, NodeIndex node, const PodSpec& pod, const Verdict& verdict) const;
  template <typename Find>
  bool place_each(Statement& statement, std::span<const PodId> pods, FailureSummary* why, Find&& find);

  // The policy's cluster-wide term for the node (PlacementPolicy::cluster_term), never cached;
  // `choice` what the score chose there: its device and parts.
  double cluster_term(const ClusterState& cluster, NodeIndex node, const PodSpec& pod, const PlacementChoice& choice);
  // The same for a cached verdict, asked only where the pod has such a term (cluster_term_): the
  // callers test it first, as a call for every node group would cost the policies without one.
  double cluster_term(const ClusterState& cluster, NodeIndex node, const PodSpec& pod, const Verdict& verdict);
  // The node's device a verdict's device code stands for; -1 for none.
  static int device_of(const ClusterState& cluster, NodeIndex node, int32_t device_code);
  // What a search keeps of the best node so far.
  struct Lead {
    double score = 0;
    float preference = 0;
    NodeIndex node = -1;  // -1: none yet
    // Whether a choice of `choice_score` and `choice_preference` ranks above the lead, ties aside
    // (any does while there is none).
    bool outranked_by(double choice_score, float choice_preference) const {
      return node < 0 || choice_score > score || (choice_score == score && choice_preference > preference);
    }
  };
  // Whether a node of `weight` nodes that scores `score` with `preference` replaces the best so
  // far; ties of both go to the lowest index, the first in the random order, or at random in
  // proportion to the nodes tied.
  bool takes_the_lead(double score, float preference, NodeIndex node, int weight, const Lead& best);
  // The group member a tie is settled with: the first in the random order where there is one.
  NodeIndex contender(const NodeGroups::Group& group) const;
  // Whether the pod (of interned `shape`) still fits no node: a search for its shape under the
  // same pass found none, and no node that gained room since fits it. Moves the mark on if so.
  bool still_no_room(const ClusterState& cluster, const PodSpec& pod, uint64_t shape, const PlacementPass& pass);

  // A shape's last search that found no node: under which pass, and when. Where no node was
  // reserved then, the pass made no difference: it holds for every pass (a reservation made
  // since is a change the record holds).
  struct NoRoom {
    int32_t holder = -1;
    double ends_by = kNeverDue;
    bool any_pass = false;
    ClusterState::RoomMark mark;
  };

  PlacementPolicy& policy_;
  bool cluster_term_ = false;  // policy_.has_cluster_term(pod), read once per search
  std::optional<std::mt19937_64> random_;
  std::vector<int32_t> order_;  // each node's place in the random order; empty: none
  int64_t tied_weight_ = 0;     // nodes tied for the best so far, with random ties
  const ClusterState* cluster_ = nullptr;
  PodShapes shapes_;
  // The verdict of the group in each slot (NodeGroups::Group::slot), by shape: [shape][slot]. An
  // entry serves the group whose uid it carries. Once another group has taken the slot, the verdict
  // of a node that fit is set aside by uid in past_verdicts_, for when that state comes back: a
  // placement tried and rolled back, as reclaim and preemption do for each candidate, brings many
  // back (without them the 10,000-node cycle bench scored 14 times as many nodes). A node that did
  // not fit is cheap to check again. A verdict worked out again is the group's representative's at
  // the time: where devices of unlike use tie, a policy that takes the lowest device index (fgd,
  // first-fit) may choose another of them than before, as members order their devices differently.
  struct SlotVerdict {
    uint64_t uid = 0;  // 0: none yet (uids start at 1)
    Verdict verdict;
  };
  std::vector<std::vector<SlotVerdict>> verdicts_by_slot_;
  std::unordered_map<uint64_t, Verdict> past_verdicts_;  // by uid << 20 | shape
  size_t slot_verdicts_ = 0;                             // entries in verdicts_by_slot_, all shapes
  std::unordered_map<uint64_t, NoRoom> no_room_;         // by shape
};

// The binding a policy choice stands for on that node.
Binding make_binding(const NodeView& node, const PodSpec& pod, const PlacementChoice& choice);

}  // namespace tessera
