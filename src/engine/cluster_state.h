// The mutable picture of a cluster the engine works on: every node's usage, every known pod and
// where it is bound, and the node groups kept in step with both. A snapshot for one cycle.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/binding.h"
#include "core/cluster.h"
#include "core/node_state.h"
#include "core/pod.h"
#include "engine/node_groups.h"
#include "policy/placement_policy.h"

namespace tessera {

struct ClusterTotals {
  int64_t gpu_capacity_milli = 0;
  int64_t gpu_allocated_milli = 0;
  Resources capacity;
  Resources allocated;
};

class ClusterState {
 public:
  explicit ClusterState(std::shared_ptr<const ClusterSpec> spec);

  const ClusterSpec& spec() const { return *spec_; }
  int node_count() const { return static_cast<int>(states_.size()); }
  const NodeSpec& node_spec(NodeIndex node) const { return spec_->nodes[static_cast<size_t>(node)]; }
  const NodeState& node_state(NodeIndex node) const { return states_[static_cast<size_t>(node)]; }
  NodeView view(NodeIndex node) const { return {node, node_spec(node), node_state(node)}; }
  const NodeGroups& groups() const { return groups_; }
  // Nodes of one class are equal in everything placement can see but their usage, so the static
  // checks (check_static) of a pod whose selector they distinguish agree on all of them.
  int32_t node_class(NodeIndex node) const { return node_class_[static_cast<size_t>(node)]; }
  int32_t node_class_count() const { return node_class_count_; }

  // Also starts telling nodes apart by any label key the pod's node selector names.
  PodId add_pod(PodSpec pod);
  // Whether nodes are told apart by every label key the pod's selector names; when not, nodes of
  // one group may differ in a label the pod selects on, and each node must be checked alone.
  bool distinguishes_selector_of(const PodSpec& pod) const;
  int pod_count() const { return static_cast<int>(pods_.size()); }
  const PodSpec& pod(PodId id) const { return pods_[static_cast<size_t>(id)].spec; }
  const std::optional<Binding>& binding(PodId id) const { return pods_[static_cast<size_t>(id)].binding; }

  // Precondition: the binding is feasible (the placer or a statement checked it).
  void bind(PodId id, Binding binding);
  // Returns the binding the pod had. Precondition: the pod is bound.
  Binding unbind(PodId id);

  const ClusterTotals& totals() const { return totals_; }
  // A node's free GPU milli in all (its state's gpu_free_total), kept in one flat array so that
  // searches visiting thousands of nodes need not load each node's devices.
  int64_t gpu_free_milli(NodeIndex node) const { return gpu_free_milli_[static_cast<size_t>(node)]; }

  // A device's kind on its node (model and memory) and usage in one number: devices with equal
  // codes on nodes of one group are interchangeable.
  int32_t device_code(NodeIndex node, int device) const {
    return int32_t{device_kind_[static_cast<size_t>(node)][static_cast<size_t>(device)]} << 11 |
           node_state(node).gpu_used_milli[static_cast<size_t>(device)];
  }

 private:
  struct PodEntry {
    PodSpec spec;
    std::optional<Binding> binding;
  };

  // Assigns node classes — nodes equal in capacity, devices, taints, cordon and the labels some
  // pod selects on — and regroups every node. Labels no pod selects on (a hostname) are left out
  // so that they do not make every node a class of its own.
  void classify_nodes();
  NodeStateKey key_of(NodeIndex node) const;
  void regroup(NodeIndex node) { groups_.assign(node, key_of(node)); }

  std::shared_ptr<const ClusterSpec> spec_;
  std::vector<NodeState> states_;
  std::vector<int64_t> gpu_free_milli_;  // per node, in step with states_
  std::vector<int32_t> node_class_;
  int32_t node_class_count_ = 0;
  std::set<std::string> selector_keys_;
  std::vector<std::vector<int16_t>> device_kind_;  // per node: ordinal of each device's (model, memory)
  std::vector<PodEntry> pods_;
  NodeGroups groups_;
  ClusterTotals totals_;
};

}  // namespace tessera
