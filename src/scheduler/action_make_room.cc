// consolidate, reclaim and preempt: the actions that make room for pending workloads that fit
// nowhere, each trying the workloads allocate left for want of room, in hierarchical DRF order.
// They differ in who may be a victim (make_room.h does the search):
//   consolidate — any preemptible workload past its preemption minimum runtime, which must be
//                 re-placed elsewhere in the same statement (moved, not lost);
//   reclaim     — preemptible workloads of other queues past their reclaim minimum runtime, as
//                 long as every victim queue keeps its fair share; only for a queue that stays
//                 within its own fair share with the workload added; for a workload that waits
//                 for GPU-memory limit room, also counting limits: a victim queue keeps its share
//                 of the limit room (QueueLedger::loss_allowance's LimitTerms);
//   preempt     — lower-priority preemptible workloads of the same queue past their preemption
//                 minimum runtime.
#include <algorithm>
#include <functional>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "scheduler/actions.h"
#include "scheduler/make_room.h"
#include "scheduler/queue_picker.h"

namespace tessera {

namespace {

// Workloads allocate left pending for want of room (not for a quota), still pending now.
std::vector<WorkloadId> waiting_for_room(CycleContext& context) {
  std::vector<WorkloadId> waiting;
  for (WorkloadId id : context.pending()) {
    if (context.unschedulable(id) && context.still_pending(id)) waiting.push_back(id);
  }
  return waiting;
}

// A failure memo's key: a few small integers (a gang shape, a queue, a priority).
struct MemoKeyHash {
  template <typename... T>
  size_t operator()(const std::tuple<T...>& key) const {
    return std::apply(
        [](const auto&... part) {
          size_t hash = 0;
          ((hash = hash * 0x9E3779B97F4A7C15ULL + std::hash<std::decay_t<decltype(part)>>{}(part)), ...);
          return hash;
        },
        key);
  }
};

// Runs `attempt` for each waiting workload in queue order. A failure is remembered under `key`
// while `generation` stays the same, so equal workloads are not searched twice for nothing. The
// memo is asked once for each of up to 100,000 workloads: a hash table, not a tree.
template <typename Key, typename KeyOf, typename Generation, typename Attempt>
void for_each_waiting(CycleContext& context, Action action, KeyOf key_of, Generation generation, Attempt attempt) {
  ActionStats& stats = context.result().actions[static_cast<int>(action)];
  struct Failure {
    uint64_t generation;
    WorkloadId workload;  // the one that failed; an equal workload skipped gets its findings
  };
  std::unordered_map<Key, Failure, MemoKeyHash> failures;
  QueuePicker picker(context, waiting_for_room(context));
  for (WorkloadId id = picker.next(); id >= 0; id = picker.next()) {
    if (!context.still_pending(id)) continue;
    const Key key = key_of(id);
    // A workload that may use reserved nodes can succeed where an equal one failed.
    const bool plain = context.plain_pass(id);
    if (auto known = failures.find(key); plain && known != failures.end() && known->second.generation == generation()) {
      const PendingReason& failed = *context.reason(known->second.workload);
      PendingReason& reason = *context.reason(id);
      reason.reclaim_blocked = failed.reclaim_blocked;
      reason.consolidation_tried |= failed.consolidation_tried;
      reason.reclaim_tried |= failed.reclaim_tried;
      reason.preemption_tried |= failed.preemption_tried;
      reason.reclaim_room = failed.reclaim_room;
      reason.preemption_room = failed.preemption_room;
      continue;
    }
    ++stats.attempts;
    if (!attempt(id) && plain) failures[key] = {generation(), id};
  }
}

// The most GPU (milli) one pod of the workload's gang asks for.
int64_t largest_pod_gpu_milli(CycleContext& context, WorkloadId id) {
  int64_t largest = 0;
  for (PodId pod : context.workloads()[id].gang()) {
    largest = std::max(largest, context.cluster().pod(pod).gpu.pending_milli(context.typical_device_memory()));
  }
  return largest;
}

// Whether some node had room for the workload's GPU-memory requests but not for their limits
// (Predicate::kGpuMemoryLimit): only then can counting limits find a victim requests did not.
bool waits_for_limit_room(CycleContext& context, WorkloadId id) {
  const PendingReason* reason = context.reason(id);
  return reason && reason->nodes.nodes_by_predicate[static_cast<size_t>(Predicate::kGpuMemoryLimit)] > 0;
}

// A queue setting resolved for every queue of the tree (minimum runtimes, inherited).
std::vector<double> per_queue(const QueueTree& tree, double (*setting)(const QueueTree&, QueueIndex)) {
  std::vector<double> values(tree.size());
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) values[queue] = setting(tree, queue);
  return values;
}

}  // namespace

void consolidate(CycleContext& context) {
  const QueueTree& tree = context.tree();
  // Built for the first attempt that searches: those turned down before change nothing, so it
  // indexes what it would have at the start, and often no attempt gets that far.
  std::optional<VictimIndex> victims;
  // Moves rearrange the cluster: any commit may open room for a gang that failed before.
  for_each_waiting<std::tuple<uint32_t>>(
      context, Action::kConsolidate, [&](WorkloadId id) { return std::tuple{context.pending_key(id).gang_shape}; },
      [&] { return context.generation(); },
      [&](WorkloadId id) {
        context.reason(id)->consolidation_tried = true;
        // Moving work only rearranges free room: if there is not enough of it in all, skip.
        const ClusterTotals& totals = context.cluster().totals();
        if (totals.gpu_capacity_milli - totals.gpu_allocated_milli < context.gang_gpu_milli(id)) return false;
        if (!context.quota_allows(id)) return false;
        RoomRequest request;
        request.pending = id;
        request.action = Action::kConsolidate;
        request.victims = VictimRule::kAny;  // any unit the index holds may move
        request.move_victims = true;
        if (!victims) victims.emplace(context, per_queue(tree, preempt_min_runtime));
        return make_room(context, *victims, request);
      });
}

void reclaim(CycleContext& context) {
  const QueueTree& tree = context.tree();
  VictimIndex victims(context, per_queue(tree, reclaim_min_runtime));
  // What the queues held when an attempt began, as loss_allowance reads it: only the reclaiming
  // leaf's ancestors, copied at each attempt (the other entries are left as they were: a copy
  // of the whole ledger per attempt cost more than the rest of the attempt's bookkeeping).
  std::vector<ResourceVector> before(tree.size());
  // A reclaim only takes from queues above their share and fills the room it frees, so after it
  // another queue's failed reclaim can succeed only if room was left free.
  for_each_waiting<std::tuple<uint32_t, uint32_t>>(
      context, Action::kReclaim,
      [&](WorkloadId id) {
        const CycleContext::PendingKey& key = context.pending_key(id);
        return std::tuple{key.gang_shape, key.queue};
      },
      [&] { return context.freed_generation(); },
      [&](WorkloadId id) {
        const QueueIndex pending_queue = context.pending_key(id).queue;
        const std::span<const ResourceId> keys = context.key_resources(id);
        PendingReason& reason = *context.reason(id);
        if (auto excess = context.ledger().reclaim_blocked(pending_queue, context.gang_request(id), keys)) {
          reason.reclaim_blocked = *excess;
          return false;
        }
        reason.reclaim_blocked.reset();
        reason.reclaim_tried = true;
        if (!context.quota_allows(id)) return false;
        const std::span<const double> request_amount = context.gang_request(id);
        for (QueueIndex queue = tree.parent(pending_queue); queue != QueueTree::kNoParent; queue = tree.parent(queue))
          before[queue] = context.ledger().allocated()[queue];
        const size_t key_count = keys.size();
        RoomRequest request;
        request.pending = id;
        request.action = Action::kReclaim;
        request.give_cap_milli.assign(tree.size(), 0);
        request.give_keys = keys;
        std::vector<double>& allowance = request.give_allowance;
        request.refresh = [&] {
          context.ledger().loss_allowance(pending_queue, request_amount, before, keys, allowance,
                                          request.limits ? &*request.limits : nullptr);
          // keys[0] is gpu for a GPU workload; a CPU-only one needs no GPU, so no cap is read.
          for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
            const double gpus = allowance[queue * key_count];
            request.give_cap_milli[queue] =
                gpus <= 0 ? 0 : static_cast<int64_t>(std::min(gpus * kMilliPerGpu + 1, 1e15));
          }
        };
        request.victims = VictimRule::kOtherQueues;  // reads give_allowance, which refresh keeps current
        // Fail fast when even every free GPU plus all that other queues may lose cannot hold it.
        request.refresh();
        const double needed_gpus = static_cast<double>(context.gang_gpu_milli(id)) / kMilliPerGpu;
        if (needed_gpus > 0) {
          const ClusterTotals& totals = context.cluster().totals();
          double reachable = static_cast<double>(totals.gpu_capacity_milli - totals.gpu_allocated_milli) / kMilliPerGpu;
          for (QueueIndex leaf : tree.leaves()) {
            if (leaf != pending_queue) reachable += std::max(0.0, allowance[leaf * key_count]);
          }
          if (reachable + 1e-9 < needed_gpus) {
            explain_no_room_by_topology(context, victims, request);
            return false;
          }
        }
        if (make_room(context, victims, request)) return true;
        // Refused for limit room: queues at their share of requests may hold more than their
        // share of the limit room, and what their limits hold above it may go.
        if (waits_for_limit_room(context, id)) {
          request.limits = QueueLedger::LimitTerms{context.meter().gpu(), context.meter().limit_overcommit()};
          request.refresh();
          if (make_room(context, victims, request)) return true;
          request.limits.reset();
        }
        // The victims' room may be scattered while a pod needs it whole: move work of queues at
        // their share out of the way (into room the rule frees elsewhere) and try again. A pod of
        // one GPU or less needs no gathering: any GPU the rule frees would have done.
        if (!context.options().reclaim_moves || largest_pod_gpu_milli(context, id) <= kMilliPerGpu) return false;
        request.move_others = true;
        request.refresh();
        return make_room(context, victims, request);
      });
}

void preempt(CycleContext& context) {
  const QueueTree& tree = context.tree();
  VictimIndex victims(context, per_queue(tree, preempt_min_runtime));
  for_each_waiting<std::tuple<uint32_t, uint32_t, int>>(
      context, Action::kPreempt,
      [&](WorkloadId id) {
        const CycleContext::PendingKey& key = context.pending_key(id);
        return std::tuple{key.gang_shape, key.queue, key.priority};
      },
      [&] { return context.freed_generation(); },
      [&](WorkloadId id) {
        if (!context.quota_allows(id)) return false;
        context.reason(id)->preemption_tried = true;
        RoomRequest request;
        request.pending = id;
        request.action = Action::kPreempt;
        request.victims = VictimRule::kOwnQueueLowerPriority;
        return make_room(context, victims, request);
      });
}

}  // namespace tessera
