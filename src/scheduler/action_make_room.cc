// consolidate, reclaim and preempt: the actions that make room for pending workloads that fit
// nowhere, each trying the workloads allocate left for want of room, in hierarchical DRF order.
// They differ in who may be a victim (make_room.h does the search):
//   consolidate — any preemptible workload past its preemption minimum runtime, which must be
//                 re-placed elsewhere in the same statement (moved, not lost);
//   reclaim     — preemptible workloads of other queues past their reclaim minimum runtime, as
//                 long as every victim queue keeps its fair share; only for a queue that stays
//                 within its own fair share with the workload added;
//   preempt     — lower-priority preemptible workloads of the same queue past their preemption
//                 minimum runtime.
#include <map>
#include <tuple>

#include "scheduler/actions.h"
#include "scheduler/make_room.h"
#include "scheduler/queue_picker.h"

namespace tessera {

namespace {

// Workloads allocate left pending for want of room (not for a quota), still pending now.
std::vector<WorkloadId> waiting_for_room(CycleContext& context) {
  std::vector<WorkloadId> waiting;
  for (WorkloadId id : context.pending()) {
    const auto& reason = context.reason(id);
    if (reason && reason->code == PendingCode::kUnschedulable && context.workloads().is_pending(id, context.cluster()))
      waiting.push_back(id);
  }
  return waiting;
}

bool past_min_runtime(const CycleContext& context, const Workload& workload, double min_runtime) {
  return context.now() - workload.started_at >= min_runtime;
}

// Runs `attempt` for each waiting workload in queue order. A failure is remembered under `key`
// until the next commit changes the cluster, so equal workloads are not searched twice.
template <typename Key, typename KeyOf, typename Attempt>
void for_each_waiting(CycleContext& context, Action action, KeyOf key_of, Attempt attempt) {
  ActionStats& stats = context.result().actions[static_cast<int>(action)];
  std::map<Key, uint64_t> failed_at_generation;
  QueuePicker picker(context, waiting_for_room(context));
  for (WorkloadId id = picker.next(); id >= 0; id = picker.next()) {
    if (!context.workloads().is_pending(id, context.cluster())) continue;
    const Key key = key_of(id);
    if (auto known = failed_at_generation.find(key);
        known != failed_at_generation.end() && known->second == context.generation())
      continue;
    ++stats.attempts;
    if (!attempt(id)) failed_at_generation[key] = context.generation();
  }
}

}  // namespace

void consolidate(CycleContext& context) {
  const QueueTree& tree = context.tree();
  std::vector<double> min_runtime(tree.size());
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) min_runtime[queue] = preempt_min_runtime(tree, queue);
  for_each_waiting<uint32_t>(
      context, Action::kConsolidate, [&](WorkloadId id) { return context.workloads()[id].gang_shape; },
      [&](WorkloadId id) {
        const Workload& pending = context.workloads()[id];
        context.reason(id)->consolidation_tried = true;
        // Moving work only rearranges free room: if there is not enough of it in all, skip.
        const ClusterTotals& totals = context.cluster().totals();
        if (totals.gpu_capacity_milli - totals.gpu_allocated_milli < context.gang_gpu_milli(id)) return false;
        if (context.ledger().check_allocation(pending.queue, context.gang_request(id), pending.spec.preemptible,
                                              context.key_resources(id)))
          return false;
        RoomRequest request;
        request.pending = id;
        request.action = Action::kConsolidate;
        request.move_victims = true;
        request.eligible = [&](const VictimUnit& unit, const ResourceVector&) {
          const Workload& victim = context.workloads()[unit.workload];
          return past_min_runtime(context, victim, min_runtime[victim.queue]);
        };
        return make_room(context, request);
      });
}

void reclaim(CycleContext& context) {
  const QueueTree& tree = context.tree();
  std::vector<double> min_runtime(tree.size());
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) min_runtime[queue] = reclaim_min_runtime(tree, queue);
  for_each_waiting<std::pair<uint32_t, QueueIndex>>(
      context, Action::kReclaim,
      [&](WorkloadId id) {
        return std::pair{context.workloads()[id].gang_shape, context.workloads()[id].queue};
      },
      [&](WorkloadId id) {
        const Workload& pending = context.workloads()[id];
        const std::vector<ResourceId> keys = context.key_resources(id);
        PendingReason& reason = *context.reason(id);
        if (auto excess = context.ledger().reclaim_blocked(pending.queue, context.gang_request(id), keys)) {
          reason.reclaim_blocked = *excess;
          return false;
        }
        reason.reclaim_blocked.reset();
        reason.reclaim_tried = true;
        if (context.ledger().check_allocation(pending.queue, context.gang_request(id), pending.spec.preemptible, keys))
          return false;
        const ResourceVector& request_amount = context.gang_request(id);
        const std::vector<ResourceVector> before = context.ledger().allocated();
        RoomRequest request;
        request.pending = id;
        request.action = Action::kReclaim;
        request.eligible = [&](const VictimUnit& unit, const ResourceVector& amount) {
          const Workload& victim = context.workloads()[unit.workload];
          return victim.queue != pending.queue && past_min_runtime(context, victim, min_runtime[victim.queue]) &&
                 context.ledger().may_lose(victim.queue, pending.queue, amount, request_amount, before, keys);
        };
        return make_room(context, request);
      });
}

void preempt(CycleContext& context) {
  const QueueTree& tree = context.tree();
  std::vector<double> min_runtime(tree.size());
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) min_runtime[queue] = preempt_min_runtime(tree, queue);
  for_each_waiting<std::tuple<uint32_t, QueueIndex, int>>(
      context, Action::kPreempt,
      [&](WorkloadId id) {
        const Workload& workload = context.workloads()[id];
        return std::tuple{workload.gang_shape, workload.queue, workload.spec.priority};
      },
      [&](WorkloadId id) {
        const Workload& pending = context.workloads()[id];
        if (context.ledger().check_allocation(pending.queue, context.gang_request(id), pending.spec.preemptible,
                                              context.key_resources(id)))
          return false;
        context.reason(id)->preemption_tried = true;
        RoomRequest request;
        request.pending = id;
        request.action = Action::kPreempt;
        request.eligible = [&](const VictimUnit& unit, const ResourceVector&) {
          const Workload& victim = context.workloads()[unit.workload];
          return victim.queue == pending.queue && victim.spec.priority < pending.spec.priority &&
                 past_min_runtime(context, victim, min_runtime[victim.queue]);
        };
        return make_room(context, request);
      });
}

}  // namespace tessera
