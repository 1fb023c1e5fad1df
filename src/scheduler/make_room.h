// Making room for one pending workload by evicting (or moving) running work, the part shared by
// consolidate, reclaim and preempt. For each pod of the gang that fits nowhere, nodes that could
// take it are tried: a node's eligible victims are taken lowest priority first (elastic extras
// before whole workloads, youngest first) until the pod would fit, and the node whose victims
// cost least — lowest top priority, then fewest GPUs, then fewest pods — is chosen. As in the
// Kubernetes scheduler's preemption, a bounded number of candidate nodes (100) is compared,
// starting where the last search stopped; the scan also stops at a node that cannot be beaten:
// victims of the lowest priority running, no more GPUs than the pod needs (one, for a fraction).
// Once the gang is placed, every victim whose old place is still free is put back (so none is
// evicted in vain), moved victims are re-placed, and the statement commits; if anything fails,
// nothing happened. Victims are whole workloads or single elastic extras (never part of a gang),
// preemptible, past the action's minimum runtime, and not started in this cycle.
#pragma once

#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "scheduler/cycle_context.h"

namespace tessera {

// The running work one action may evict, indexed by node and kept for the whole action: built
// once, with units marked gone as commits evict them.
class VictimIndex {
 public:
  struct Unit {
    VictimUnit unit;
    QueueIndex queue = 0;
    int priority = 0;
    double started_at = 0;
    int64_t gpu_milli = 0;            // held by the whole unit, on every node
    ResourceVector amount;            // what it holds, per queue resource
    std::vector<PodId> pods;          // its bound pods,
    std::vector<Binding> bindings;    // where each runs,
    std::vector<Resources> requests;  // and what each asks of CPU and memory
  };

  // Units of workloads younger than their queue's `min_runtime` (per queue index) are left out:
  // the action may not take them whatever else holds.
  VictimIndex(CycleContext& context, std::span<const double> min_runtime);

  const std::vector<uint32_t>& on_node(NodeIndex node) const { return by_node_[static_cast<size_t>(node)]; }
  // Per node and leaf queue with units there: the GPUs (milli) they hold on the node, and the
  // GPUs of the smallest of those units (on all its nodes). As indexed: gone units still count,
  // so these bound from above what eviction can free.
  struct QueueGpus {
    QueueIndex queue = 0;
    int64_t gpu_milli = 0;
    int64_t smallest_unit_milli = 0;
  };
  std::span<const QueueGpus> gpus_by_queue_on(NodeIndex node) const {
    const auto index = static_cast<size_t>(node);
    return {gpus_by_queue_.data() + gpus_by_queue_start_[index],
            gpus_by_queue_start_[index + 1] - gpus_by_queue_start_[index]};
  }
  // The nodes where a leaf queue's units run, in node order.
  const std::vector<NodeIndex>& nodes_of(QueueIndex leaf) const { return nodes_of_queue_[leaf]; }
  const Unit& unit(uint32_t index) const { return units_[index]; }
  // Evicted (or changed) by a commit of this action. Kept apart from the units, with their
  // queues, so a search can pass over units it may not take without loading them.
  bool gone(uint32_t index) const { return gone_[index] != 0; }
  QueueIndex queue_of(uint32_t index) const { return unit_queue_[index]; }
  // What a unit holds, as bits: kHoldsGpu, kHoldsCpuOrMemory.
  static constexpr uint8_t kHoldsGpu = 1, kHoldsCpuOrMemory = 2;
  uint8_t holds(uint32_t index) const { return unit_holds_[index]; }
  // The lowest priority of any unit: a node whose victims are all of it is as cheap as it gets.
  int min_priority() const { return min_priority_; }
  // Marks gone every unit touched by the evictions: the unit itself and, for an extra, its
  // workload's whole unit (whose pods changed).
  void forget(const std::vector<Eviction>& evictions, size_t first);
  // Where the next scan starts, so consecutive searches spread over the cluster.
  NodeIndex& next_start() { return next_start_; }

 private:
  std::vector<Unit> units_;
  std::vector<char> gone_;
  std::vector<uint32_t> unit_queue_;
  std::vector<uint8_t> unit_holds_;
  std::vector<std::vector<uint32_t>> by_node_;
  std::vector<std::vector<NodeIndex>> nodes_of_queue_;
  // One flat array, node after node (scanned for every node a search visits).
  std::vector<QueueGpus> gpus_by_queue_;
  std::vector<size_t> gpus_by_queue_start_;  // per node, and one past the last
  std::vector<int32_t> whole_unit_of_;       // per workload: index of its whole unit, or -1
  std::unordered_map<WorkloadId, std::vector<uint32_t>> extras_of_;
  int min_priority_ = 0;
  NodeIndex next_start_ = 0;
};

// Whether a unit may be taken; called with the ledger as it stands.
using VictimFilter = std::function<bool(const VictimIndex::Unit& unit)>;

struct RoomRequest {
  WorkloadId pending = -1;
  Action action = Action::kReclaim;
  VictimFilter eligible;  // empty: every unit of the index (the action's minimum runtime is applied there)
  // For filters that precompute from the ledger: the caller calls it before make_room, and
  // make_room again after each round of evictions (only evictions change what queues may lose).
  std::function<void()> refresh;
  // When set, only nodes running units of leaf queues it accepts are searched: reclaim takes
  // only from queues above their share, preemption only from the workload's own queue.
  std::function<bool(QueueIndex leaf)> victim_queue;
  // When not empty, per queue index: the most GPU milli the queue may give up (reclaim keeps
  // victim queues at their fair share); kept current by `refresh`.
  std::vector<int64_t> give_cap_milli;
  // When not empty: per queue index × key (queue * give_keys.size() + k), what each queue may
  // still lose of each key resource. The victims chosen on one node are counted together
  // against it (the filter sees one unit at a time).
  std::vector<double> give_allowance;
  std::vector<ResourceId> give_keys;
  bool move_victims = false;  // consolidation: victims must be re-placed in the same statement
};

// True when the workload now runs (the statement committed through the context).
bool make_room(CycleContext& context, VictimIndex& victims, const RoomRequest& request);

}  // namespace tessera
