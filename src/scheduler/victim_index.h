#pragma once

#include <span>
#include <unordered_map>
#include <vector>

#include "scheduler/cycle_context.h"
#include "scheduler/victim_gpus.h"

namespace tessera {

// The running work one action may evict (consolidate, reclaim, preempt: make_room.h), indexed by
// node and kept for the whole action: built once, with units marked gone as commits evict them.
// A search visits thousands of nodes and units, so what it reads lies in flat arrays: units
// without inner vectors, their bound pods (members) and amounts in one array each.
class VictimIndex {
 public:
  struct Unit {
    VictimUnit unit;
    QueueIndex queue = 0;
    int priority = 0;
    double started_at = 0;
    int64_t gpu_milli = 0;  // held by the whole unit, on every node
  };
  // One bound pod of a unit: where it runs and what it asks of CPU and memory.
  struct Member {
    PodId pod = -1;
    NodeIndex node = -1;
    int32_t milli_per_device = 0;
    uint32_t first_device = 0;  // its devices on the node: devices(member)
    uint32_t device_count = 0;
    int32_t burst_milli = 0;  // its GPU-memory limit beyond the request (Binding::burst_milli)
    Resources request;
  };

  // Units of workloads younger than their queue's `min_runtime` (per queue index) are left out:
  // the action may not take them whatever else holds.
  VictimIndex(CycleContext& context, std::span<const double> min_runtime);

  // A node's units, in victim order.
  std::span<const uint32_t> on_node(NodeIndex node) const {
    const auto index = static_cast<size_t>(node);
    return {node_units_.data() + node_units_start_[index], node_units_start_[index + 1] - node_units_start_[index]};
  }
  // Per node and leaf queue with units there, by queue: the GPUs (milli) they hold on the node,
  // and the GPUs of the smallest of those units (on all its nodes), as indexed (gone units still
  // count); and the CPU and memory the pods of its units not gone hold there, of units that hold
  // GPUs and of the others, with the GPUs of the smallest unit that holds any (as indexed;
  // INT64_MAX: none). An elastic extra's pod counts with the extra and with its whole unit. So
  // these bound from above what eviction can free.
  struct QueueHolds {
    QueueIndex queue = 0;
    int64_t gpu_milli = 0;
    int64_t smallest_unit_milli = 0;
    Resources with_gpus;
    Resources without_gpus;
    int64_t smallest_gpu_unit_milli = INT64_MAX;
  };
  std::span<const QueueHolds> held_by_queue_on(NodeIndex node) const {
    const auto index = static_cast<size_t>(node);
    return {held_by_queue_.data() + held_by_queue_start_[index],
            held_by_queue_start_[index + 1] - held_by_queue_start_[index]};
  }
  // Their GPUs summed over every queue on the node: what evicting all of them could free at most.
  int64_t gpus_held_on(NodeIndex node) const { return gpus_held_[static_cast<size_t>(node)]; }
  // The CPU and memory of the units not gone, summed the same way; and what the pods of any
  // queue's units not gone hold on the node where they hold no GPU there, with the nodes where
  // such pods were indexed, as bits (word node / 64, bit node % 64). An elastic extra's pod counts
  // twice, with its whole unit.
  const Resources& resources_held_on(NodeIndex node) const { return resources_held_[static_cast<size_t>(node)]; }
  const Resources& held_without_gpus_on(NodeIndex node) const { return held_without_gpus_[static_cast<size_t>(node)]; }
  const uint64_t* nodes_held_without_gpus() const { return nodes_held_without_gpus_.data(); }
  // Per domain of a topology level (TopologyDomains): gpus_held_on summed over its nodes. As
  // indexed, so fixed for the index's life: summed once per level asked.
  const std::vector<int64_t>& gpus_held_in(const TopologyDomains& domains, int topology, int level);
  // The nodes where any of the leaf queues has units, as bits (word node / 64, bit node % 64).
  // Kept from the last list of queues and changed by the queues that came or went: consecutive
  // searches ask for much the same.
  const std::vector<uint64_t>& nodes_of_any(const std::vector<QueueIndex>& leaves) { return all_units_.of_any(leaves); }
  // The same of the leaf queues' units that hold no GPU.
  const std::vector<uint64_t>& nodes_without_gpus_of_any(const std::vector<QueueIndex>& leaves) {
    return units_without_gpus_.of_any(leaves);
  }
  // The nodes where a leaf queue's units run, in node order.
  const std::vector<NodeIndex>& nodes_of(QueueIndex leaf) const { return all_units_.of(leaf); }
  const Unit& unit(uint32_t index) const { return units_[index]; }
  // The unit's bound pods (all its pods, on every node) and a member's devices.
  std::span<const Member> members(uint32_t index) const {
    return {members_.data() + members_start_[index], members_start_[index + 1] - members_start_[index]};
  }
  std::span<const int16_t> devices(const Member& member) const {
    return {devices_.data() + member.first_device, member.device_count};
  }
  // The GPU-memory limits of the unit's pods beyond their requests, in GPUs.
  double burst_gpus(uint32_t index) const {
    int64_t milli = 0;
    for (const Member& member : members(index)) milli += member.burst_milli;
    return static_cast<double>(milli) / kMilliPerGpu;
  }
  // What the unit holds of a queue resource (zero past the meter's resources).
  double amount(uint32_t index, ResourceId resource) const {
    return resource < resource_count_ ? amounts_[index * resource_count_ + resource] : 0.0;
  }
  // Evicted (or changed) by a commit of this action. Kept apart from the units, in one small
  // tag per unit with its workload, queue and what it holds, so a search can pass over units it
  // may not take loading one tag.
  bool gone(uint32_t index) const { return tags_[index].gone != 0; }
  QueueIndex queue_of(uint32_t index) const { return tags_[index].queue; }
  WorkloadId workload_of(uint32_t index) const { return tags_[index].workload; }
  // A node's GPU count, read without loading its spec.
  int gpu_count(NodeIndex node) const { return node_gpus_[static_cast<size_t>(node)]; }
  // What a unit holds, as bits: kHoldsGpu, kHoldsCpuOrMemory.
  static constexpr uint8_t kHoldsGpu = 1, kHoldsCpuOrMemory = 2;
  uint8_t holds(uint32_t index) const { return tags_[index].holds; }
  // The lowest priority of any unit: a node whose victims are all of it is as cheap as it gets.
  int min_priority() const { return min_priority_; }
  // The most GPUs (milli) any unit holds, as indexed: no eviction frees more.
  int64_t max_unit_gpu_milli() const { return max_unit_gpu_milli_; }
  // Marks gone every unit touched by the evictions: the unit itself and, for an extra, its
  // workload's whole unit (whose pods changed); takes what they held out of gpus().
  void forget(const std::vector<Eviction>& evictions, size_t first);
  // The GPUs the units not gone hold, per node, queue and priority.
  const VictimGpus& gpus() const { return gpus_; }
  VictimGpus& gpus() { return gpus_; }
  // Where the next scan starts, so consecutive searches spread over the cluster.
  NodeIndex& next_start() { return next_start_; }

 private:
  uint32_t add_unit(CycleContext& context, const Workload& workload, VictimUnit victim);
  // From placed_: node_units_, held_by_queue_ (each node's by queue), gpus_held_ and resources_held_.
  void index_by_node(size_t node_count);
  // Per leaf queue, the nodes of some of its units, and their union over the queues last asked.
  class QueueNodes {
   public:
    void resize(size_t node_count, size_t queue_count) {
      node_count_ = node_count;
      nodes_.resize(queue_count);
    }
    void add(QueueIndex leaf, NodeIndex node) { nodes_[leaf].push_back(node); }
    void finish();  // sorts each queue's nodes, once each
    const std::vector<NodeIndex>& of(QueueIndex leaf) const { return nodes_[leaf]; }
    const std::vector<uint64_t>& of_any(const std::vector<QueueIndex>& leaves);

   private:
    // Adds the queue's nodes to the union, or takes them out.
    void count(QueueIndex leaf, bool in);
    size_t node_count_ = 0;
    std::vector<std::vector<NodeIndex>> nodes_;
    // of_any: per queue, whether it is in the union; per node, how many of its queues are.
    std::vector<char> in_union_, asked_;
    NodeUnion union_;
    std::vector<QueueIndex> union_of_;
  };
  // Marks the unit gone, and takes what it holds out of the CPU and memory counted per node.
  void go(uint32_t index);
  // Whether the unit's GPUs count in gpus_: a whole unit until it goes; an extra, whose pod its
  // whole unit counts, only once that has gone while the extra stays.
  bool counted(uint32_t index) const;
  // Adds (sign 1) or takes out (-1) the unit's GPUs on each of its nodes.
  void count_gpus(uint32_t index, int sign);

  std::vector<Unit> units_;
  struct Tag {
    WorkloadId workload = -1;
    uint32_t queue = 0;
    uint8_t holds = 0;
    uint8_t gone = 0;
  };
  std::vector<Tag> tags_;       // per unit
  std::vector<int> node_gpus_;  // per node
  std::vector<Member> members_;
  std::vector<size_t> members_start_;  // per unit, and one past the last
  std::vector<int16_t> devices_;
  std::vector<double> amounts_;  // per unit × resource
  size_t resource_count_ = 0;
  std::vector<uint32_t> node_units_;      // node after node, each in victim order
  std::vector<size_t> node_units_start_;  // per node, and one past the last
  QueueNodes all_units_;
  QueueNodes units_without_gpus_;
  // One flat array, node after node (scanned for every node a search visits).
  std::vector<QueueHolds> held_by_queue_;
  std::vector<size_t> held_by_queue_start_;   // per node, and one past the last
  std::vector<int64_t> gpus_held_;            // per node
  std::vector<Resources> resources_held_;     // per node
  std::vector<Resources> held_without_gpus_;  // per node
  std::vector<uint64_t> nodes_held_without_gpus_;
  VictimGpus gpus_;
  std::vector<int32_t> whole_unit_of_;  // per workload: index of its whole unit, or -1
  std::unordered_map<WorkloadId, std::vector<uint32_t>> extras_of_;
  std::vector<char> extra_counted_;  // forget's, per extra of one workload
  int min_priority_ = 0;
  int64_t max_unit_gpu_milli_ = 0;
  // What add_unit found of each unit's pods, until index_by_node sorts it by node: one flat list,
  // as a list per node cost an allocation each.
  struct PlacedPod {
    NodeIndex node = 0;
    uint32_t unit = 0;
    uint32_t queue = 0;
    int64_t gpu_milli = 0;       // counted on the node (0 for an extra's pod, counted with its whole unit)
    int64_t unit_gpu_milli = 0;  // the unit's, on all its nodes
    Resources resources;         // the pod's CPU and memory (an extra's pod counts with its whole unit too)
  };
  std::vector<PlacedPod> placed_;
  // add_unit's scratch: the unit's pods and what they hold.
  std::vector<PodId> unit_pods_;
  ResourceVector unit_amount_;
  struct HeldIn {
    int topology = 0;
    int level = 0;
    std::vector<int64_t> gpu_milli;
  };
  std::vector<HeldIn> held_in_;  // gpus_held_in's, per level asked
  NodeIndex next_start_ = 0;
};

}  // namespace tessera
