// allocate: pending workloads in hierarchical DRF order, each gang all or nothing, within its
// queue's limits (and, for non-preemptible work, its deserved quota); then elastic extras of
// running workloads, one pod at a time, where they fit.
#include <algorithm>
#include <unordered_map>

#include "scheduler/actions.h"
#include "scheduler/queue_picker.h"

namespace tessera {

namespace {

// Places the workload's unbound elastic extras in the statement, one pod at a time, as long as
// each fits its queue's limits and some node.
void place_extras(CycleContext& context, Statement& statement, WorkloadId id, std::span<const ResourceId> keys) {
  const Workload& workload = context.workloads()[id];
  const PlacementPass pass = context.pass_for(id);
  for (size_t position = static_cast<size_t>(workload.min_member()); position < workload.pods.size(); ++position) {
    const PodId pod = workload.pods[position];
    if (context.cluster().binding(pod)) continue;
    const ResourceVector request = context.meter().pending(context.cluster().pod(pod));
    if (context.ledger().check_allocation(workload.queue, request, workload.spec.preemptible, keys)) return;
    if (!context.place_gang(statement, std::span<const PodId>(&pod, 1), nullptr, pass)) return;
  }
}

void grow_elastic_workloads(CycleContext& context) {
  WorkloadSet& workloads = context.workloads();
  std::vector<WorkloadId> elastic;
  for (WorkloadId id : workloads.active()) {
    if (context.still_pending(id)) continue;  // runs nothing, told without reading the workload
    const Workload& workload = workloads[id];
    if (static_cast<int>(workload.pods.size()) > workload.min_member() && workloads.is_running(id, context.cluster()))
      elastic.push_back(id);
  }
  QueuePicker picker(context, elastic);
  for (WorkloadId id = picker.next(); id >= 0; id = picker.next()) {
    Statement statement = context.open_statement();
    place_extras(context, statement, id, context.key_resources(id));
    if (!statement.operations().empty()) context.commit(statement, Action::kAllocate, -1);
  }
}

}  // namespace

void allocate(CycleContext& context) {
  WorkloadSet& workloads = context.workloads();
  ActionStats& stats = context.result().actions[static_cast<int>(Action::kAllocate)];
  // Gangs that found no room. The cluster only fills up during allocate, so a gang of the same
  // pods would fail again: it gets the same reason without a second search.
  std::unordered_map<uint32_t, PendingReason> failed_shapes;
  QueuePicker picker(context, context.pending());
  for (WorkloadId id = picker.next(); id >= 0; id = picker.next()) {
    // Most workloads are turned down by their queue or by a gang of the same shape that failed:
    // their compact key decides that without reading the workload.
    const CycleContext::PendingKey& key = context.pending_key(id);
    ++stats.attempts;
    if (auto block = context.quota_block(id)) {
      PendingReason reason;
      reason.code =
          block->rule == QuotaBlock::Rule::kLimit ? PendingCode::kQueueLimit : PendingCode::kNonPreemptibleQuota;
      reason.quota = *block;
      reason.gang_size = workloads[id].min_member();
      context.set_reason(id, std::move(reason));
      continue;
    }
    // A workload that may use reserved nodes can fit where an equal one did not.
    const bool plain = context.plain_pass(id);
    if (auto known = failed_shapes.find(key.gang_shape); plain && known != failed_shapes.end()) {
      context.set_reason(id, known->second);
      continue;
    }
    const Workload& workload = workloads[id];
    Statement statement = context.open_statement();
    PendingReason reason;
    reason.gang_size = workload.min_member();
    if (!context.place_gang(statement, workload.gang(), &reason.nodes, context.pass_for(id))) {
      if (plain) failed_shapes.emplace(workload.gang_shape, reason);
      context.set_reason(id, std::move(reason));
      continue;
    }
    place_extras(context, statement, id, context.key_resources(id));
    context.commit(statement, Action::kAllocate, id);
    context.clear_reason(id);
  }
  grow_elastic_workloads(context);
}

}  // namespace tessera
