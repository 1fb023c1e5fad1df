// The mutable picture of a cluster the engine works on: every node's usage, every known pod and
// where it is bound, and the node groups kept in step with both. A snapshot for one cycle.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/binding.h"
#include "core/cluster.h"
#include "core/gpu_supply.h"
#include "core/node_state.h"
#include "core/pod.h"
#include "engine/node_groups.h"
#include "engine/topology_domains.h"
#include "policy/placement_policy.h"

namespace tessera {

// A node held for one claimant (the scheduler's id of a workload waiting for room) while it
// drains: placements that do not carry the claimant's pass may not use it, unless they end
// before it is due (backfill). Reservations are state of the cycle, not of the node: the
// scheduler sets them at the start of a cycle and clears them at its end.
inline constexpr double kNeverDue = std::numeric_limits<double>::infinity();
struct NodeReservation {
  int32_t holder = -1;     // -1: not reserved
  double due = kNeverDue;  // when the node is expected to be free (running pods' time limits)
};

// What a placement may use of reserved nodes: those of its own holder, and any other that is
// due no sooner than the placement ends (a time-limited workload backfilling drained room). A
// reservation that is never due (something on its nodes has no time limit) takes no backfill:
// nothing could be known to leave in time.
struct PlacementPass {
  int32_t holder = -1;
  double ends_by = kNeverDue;  // finite only for work with a time limit
  bool admits(const NodeReservation& reservation) const {
    return reservation.holder < 0 || reservation.holder == holder ||
           (reservation.due < kNeverDue && ends_by <= reservation.due);
  }
};

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
  // The domains of the cluster's topologies (docs/topology.md).
  const TopologyDomains& topology() const { return topology_; }
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

  // Whether the node has the pod's CPU and memory free, and each of the binding's devices its
  // share: what bind would otherwise overcommit (the placer checks the rest: taints, selectors).
  bool fits(PodId id, const Binding& binding) const;
  // Precondition (asserted in debug builds): the pod is unbound. The binding need not fit: a
  // snapshot records what a cluster shows, overcommitted or not; the engine's own placements
  // go through a statement, which checks.
  void bind(PodId id, Binding binding);
  // Returns the binding the pod had. Precondition (asserted in debug builds): the pod is bound.
  Binding unbind(PodId id);

  const ClusterTotals& totals() const { return totals_; }
  // The cluster's GPUs by model, in step with every binding.
  const GpuSupply& gpu_supply() const { return supply_; }
  // A node's free GPU milli in all (its state's gpu_free_total), kept in one flat array so that
  // searches visiting thousands of nodes need not load each node's devices.
  int64_t gpu_free_milli(NodeIndex node) const { return gpu_free_milli_[static_cast<size_t>(node)]; }
  // The nodes with any GPU free, as bits (word node / 64, bit node % 64): a search for GPUs
  // passes over a full cluster's nodes a word at a time.
  const uint64_t* nodes_with_free_gpus() const { return free_gpu_bits_.data(); }
  // Each domain of a topology level's free GPU milli (gpu_free_milli summed over its nodes),
  // kept in step with the nodes: placement and room-making read it for every gang they try.
  std::span<const int64_t> domain_free_gpu_milli(int topology, int level) const {
    return {domain_free_milli_.data() + topology_.first_slot(topology, level),
            topology_.domains(topology, level).size()};
  }

  // Where the record of nodes that may have gained room stands. Binding only takes room, so a
  // pod that fit no node when the record stood at a mark can fit now only on a node recorded
  // since: one a pod left, or whose reservation changed.
  struct RoomMark {
    uint64_t epoch = 0;
    size_t count = 0;
  };
  RoomMark room_mark() const { return {room_epoch_, room_gained_.size()}; }
  // The nodes recorded since `mark`, in order, some perhaps more than once; nullopt where the
  // record no longer reaches back to it (it is cleared now and then, to stay small).
  std::optional<std::span<const NodeIndex>> room_gained_since(RoomMark mark) const {
    if (mark.epoch != room_epoch_ || mark.count > room_gained_.size()) return std::nullopt;
    return std::span<const NodeIndex>(room_gained_).subspan(mark.count);
  }

  // Reserves the node for a holder, or releases it (holder -1).
  void reserve(NodeIndex node, NodeReservation reservation);
  const NodeReservation& reservation(NodeIndex node) const { return reservations_[static_cast<size_t>(node)]; }
  bool has_reservations() const { return reserved_nodes_ > 0; }

  // A device's kind on its node (model and memory) and usage (portion and burst) in one number:
  // devices with equal codes on nodes of one group are interchangeable. The burst stays below
  // 2^13 (limits reach at most kMaxGpuMemoryOvercommitMilli), the portion below 2^11.
  int32_t device_code(NodeIndex node, int device) const {
    return device_code(device_kind_[static_cast<size_t>(node)][static_cast<size_t>(device)], node_state(node), device);
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
  static int32_t device_code(int16_t kind, const NodeState& state, int device) {
    return int32_t{kind} << 24 | state.device_burst_milli(device) << 11 |
           state.gpu_used_milli[static_cast<size_t>(device)];
  }
  void regroup(NodeIndex node) { groups_.assign(node, key_of(node)); }
  void record_room_gained(NodeIndex node);

  std::shared_ptr<const ClusterSpec> spec_;
  TopologyDomains topology_;
  std::vector<NodeState> states_;
  std::vector<int64_t> gpu_free_milli_;  // per node, in step with states_
  std::vector<uint64_t> free_gpu_bits_;  // in step with gpu_free_milli_
  std::vector<int64_t> domain_free_milli_;  // per TopologyDomains slot, in step with gpu_free_milli_
  void set_gpu_free(NodeIndex node, int64_t milli);
  std::vector<int32_t> node_class_;
  int32_t node_class_count_ = 0;
  std::set<std::string> selector_keys_;
  std::vector<std::vector<int16_t>> device_kind_;  // per node: ordinal of each device's (model, memory)
  std::vector<PodEntry> pods_;
  std::vector<NodeReservation> reservations_;
  int reserved_nodes_ = 0;
  std::vector<NodeIndex> room_gained_;  // see room_mark
  uint64_t room_epoch_ = 0;
  NodeGroups groups_;
  ClusterTotals totals_;
  GpuSupply supply_;
  // Takes the binding's GPUs from the supply (sign 1) or gives them back (-1), the node's state
  // already changed.
  void take_from_supply(const Binding& binding, int sign);
};

}  // namespace tessera
