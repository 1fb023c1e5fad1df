// The placement policy interface: given a node the pod fits on, how good is it, and which device
// would the pod take there? The engine asks only about feasible nodes, keeps the highest score
// (then the highest preference) and breaks ties by the lowest node index, so a policy is a pure
// scoring rule.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string_view>

#include "core/gpu_supply.h"
#include "core/node.h"
#include "core/node_state.h"
#include "core/pod.h"

namespace tessera {

struct NodeView {
  NodeIndex index;
  const NodeSpec& spec;
  const NodeState& state;
};

// How many parts of a score a policy may hand back for its cluster term to weigh (PlacementChoice::parts).
inline constexpr size_t kScoreParts = 4;

struct PlacementChoice {
  double score = 0;
  int device = -1;  // the device for a fractional pod; -1 otherwise
  // Among choices of equal score the higher preference wins, before the engine's own tie-break
  // (the node order, or a random one): the policy's rule for its ties. Like the score, of the
  // node's spec and state alone. 0 unless the policy says.
  float preference = 0;
  // Parts of the score's growth that the policy's cluster term weighs by what is left
  // cluster-wide: the engine keeps them with the score in its per-state cache and hands them
  // back, so the term need not look into the node's state again. Zero unless the policy says.
  std::array<float, kScoreParts> parts{};
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // Scores a node the pod fits on. Must depend only on the node's spec and state (not on its
  // index), so nodes in identical states can be scored once.
  virtual PlacementChoice score(const NodeView& node, const PodSpec& pod) = 0;
  // A term the engine adds to a node's score outside its per-state cache, asked afresh at every
  // placement: it may depend on the cluster's GPUs by model, which every placement anywhere
  // changes. Like the score, not on the node's index. 0 unless the policy weighs what is left
  // cluster-wide (has_cluster_term; the engine skips the call otherwise). `choice` is what the
  // score chose on this node: the device for a fraction (-1 otherwise) and the parts.
  virtual double cluster_term(const NodeView& /*node*/, const PodSpec& /*pod*/, const GpuSupply& /*supply*/,
                              const PlacementChoice& /*choice*/) {
    return 0;
  }
  virtual bool has_cluster_term() const { return false; }
  // Whether the term can be other than 0 for this pod (the engine skips the call where not).
  virtual bool has_cluster_term(const PodSpec& /*pod*/) const { return has_cluster_term(); }
  // The engine brackets each search for a pod's node with these: between them the pod and the
  // cluster stay as they are, so a policy may reuse what its cluster term works out for one node
  // on the next. Asked outside a search, the term is worked out afresh. `supply` is the cluster's
  // as the search begins, before any node is scored.
  virtual void search_begins(const GpuSupply& /*supply*/) {}
  virtual void search_ends() {}
  // True for a policy whose rule is the order of the nodes (its scores all tie, and the lowest
  // index wins): a random tie-break must leave it alone.
  virtual bool ranks_by_node_order() const { return false; }
};

using PlacementPolicyPtr = std::unique_ptr<PlacementPolicy>;

}  // namespace tessera
