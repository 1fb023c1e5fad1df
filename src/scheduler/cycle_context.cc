#include "scheduler/cycle_context.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <map>

namespace tessera {

bool runs_before(const Workload& a, WorkloadId a_id, const Workload& b, WorkloadId b_id) {
  if (a.spec.priority != b.spec.priority) return a.spec.priority > b.spec.priority;
  if (a.submitted_at != b.submitted_at) return a.submitted_at < b.submitted_at;
  return a_id < b_id;
}

namespace {

// What the order by queue and runs_before compares of a workload, copied out of it once: its
// compact key (queue, priority, and for the cycle's pending workloads the rest, carried along),
// its submission time and its id.
struct RunKey {
  CycleContext::PendingKey key;
  double submitted_at;
  WorkloadId id;
};

RunKey run_key(const Workload& workload, WorkloadId id) {
  return {
      {workload.gang_shape, workload.spec.priority, static_cast<uint32_t>(workload.queue), workload.spec.preemptible},
      workload.submitted_at,
      id};
}

// Sorts by queue (bucketed, counting), then each queue's keys by runs_before.
void sort_run_keys(std::vector<RunKey>& keys) {
  std::vector<size_t> start;
  for (const RunKey& run : keys) {
    if (run.key.queue + 2 > start.size()) start.resize(run.key.queue + 2, 0);
    ++start[run.key.queue + 1];
  }
  for (size_t queue = 1; queue < start.size(); ++queue) start[queue] += start[queue - 1];
  std::vector<RunKey> by_queue(keys.size());
  std::vector<size_t> next(start.begin(), start.end());
  for (const RunKey& run : keys) by_queue[next[run.key.queue]++] = run;
  for (size_t queue = 0; queue + 1 < start.size(); ++queue) {
    std::sort(by_queue.begin() + static_cast<std::ptrdiff_t>(start[queue]),
              by_queue.begin() + static_cast<std::ptrdiff_t>(start[queue + 1]), [](const RunKey& a, const RunKey& b) {
                if (a.key.priority != b.key.priority) return a.key.priority > b.key.priority;
                if (a.submitted_at != b.submitted_at) return a.submitted_at < b.submitted_at;
                return a.id < b.id;
              });
  }
  keys = std::move(by_queue);
}

}  // namespace

void sort_by_queue_and_run_order(const WorkloadSet& workloads, std::vector<WorkloadId>& ids) {
  std::vector<RunKey> keys;
  keys.reserve(ids.size());
  for (WorkloadId id : ids) keys.push_back(run_key(workloads[id], id));
  sort_run_keys(keys);
  for (size_t i = 0; i < keys.size(); ++i) ids[i] = keys[i].id;
}

namespace {

// `ids` per queue (`queue_of`), each list in runs_before order: a list whose ids came in order
// (`in_order` of each two in a row) stays as it came, the others are put in order by `sort`.
template <typename QueueOf, typename InOrder, typename Sort>
std::vector<std::vector<WorkloadId>> split_by_queue(std::span<const WorkloadId> ids, size_t queue_count,
                                                    QueueOf queue_of, InOrder in_order, Sort sort) {
  std::vector<std::vector<WorkloadId>> by_queue(queue_count);
  std::vector<char> out_of_order(queue_count, 0);
  for (WorkloadId id : ids) {
    const QueueIndex queue = queue_of(id);
    std::vector<WorkloadId>& list = by_queue[queue];
    if (!list.empty() && !in_order(list.back(), id)) out_of_order[queue] = 1;
    list.push_back(id);
  }
  for (size_t queue = 0; queue < queue_count; ++queue) {
    if (out_of_order[queue]) sort(by_queue[queue]);
  }
  return by_queue;
}

}  // namespace

std::vector<std::vector<WorkloadId>> split_by_queue_in_run_order(const WorkloadSet& workloads,
                                                                 std::span<const WorkloadId> ids, size_t queue_count) {
  return split_by_queue(
      ids, queue_count, [&](WorkloadId id) { return workloads[id].queue; },
      [&](WorkloadId a, WorkloadId b) { return runs_before(workloads[a], a, workloads[b], b); },
      [&](std::vector<WorkloadId>& list) { sort_by_queue_and_run_order(workloads, list); });
}

std::vector<std::vector<WorkloadId>> CycleContext::split_in_run_order(std::span<const WorkloadId> candidates) {
  const bool all_pending =
      std::all_of(candidates.begin(), candidates.end(), [&](WorkloadId id) { return pending_position(id) >= 0; });
  if (!all_pending) return split_by_queue_in_run_order(workloads(), candidates, tree().size());
  // Their places in pending() give the order (it is by queue, then runs_before), and the compact
  // keys the queue: no workload is read.
  auto earlier = [&](WorkloadId a, WorkloadId b) { return pending_position(a) < pending_position(b); };
  return split_by_queue(
      candidates, tree().size(), [&](WorkloadId id) { return pending_key(id).queue; }, earlier,
      [&](std::vector<WorkloadId>& list) { std::sort(list.begin(), list.end(), earlier); });
}

CycleContext::CycleContext(CycleInputs inputs, const CycleOptions& options, FairShares shares,
                           std::vector<QueueLoad> loads, std::vector<ResourceVector> non_preemptible,
                           std::span<const double> burst)
    : inputs_(inputs),
      options_(options),
      shares_(std::move(shares)),
      ledger_(inputs.queues, shares_, loads, non_preemptible, burst),
      pending_position_(inputs.workloads.size(), -1),
      gang_requests_(inputs.workloads.size() * inputs.meter.resource_count(), 0.0),
      gang_request_known_(inputs.workloads.size(), 0),
      key_set_of_(inputs.workloads.size(), kUnknownKeys),
      pending_gpu_milli_(inputs.workloads.size(), -1),
      waiting_(inputs.workloads.size(), 0),
      reservation_of_(inputs.workloads.size(), -1) {
  result_.loads = std::move(loads);
  const ClusterState& cluster = inputs.cluster;
  // Each pending workload is read here, in the order they are stored; afterwards the cycle takes
  // them in queue order, from copies of what it compares.
  std::vector<RunKey> keys;
  for (WorkloadId id : inputs.workloads.active()) {
    const Workload& workload = inputs.workloads[id];
    if (!workload.pods.empty() && workload.held_until <= inputs.now && inputs.workloads.is_pending(id, cluster)) {
      keys.push_back(run_key(workload, id));
      waiting_[static_cast<size_t>(id)] = 1;
      // Now, while its pods were just read in the order they are stored: every action asks for
      // them, in queue order, which reads the pods scattered.
      gang_request(id);
      key_resources(id);
      pending_gpu_milli_[static_cast<size_t>(id)] = sum_gang_gpu_milli(id);
    }
  }
  // Once for the cycle: every action's candidates are taken from it in this order, and the
  // result lists what still waits in it.
  sort_run_keys(keys);
  pending_.reserve(keys.size());
  result_.pending.resize(keys.size());
  reason_codes_.assign(keys.size(), kUntried);
  pending_keys_.reserve(keys.size());
  for (size_t position = 0; position < keys.size(); ++position) {
    const RunKey& run = keys[position];
    pending_.push_back(run.id);
    result_.pending[position].workload = run.id;
    pending_position_[static_cast<size_t>(run.id)] = static_cast<int32_t>(position);
    pending_keys_.push_back(run.key);
  }
}

PendingReason& CycleContext::set_reason(WorkloadId workload, PendingReason reason) {
  const int32_t position = pending_position_[static_cast<size_t>(workload)];
  assert(position >= 0 && "only a workload pending at the start of the cycle has a reason");
  reason_codes_[static_cast<size_t>(position)] = static_cast<uint8_t>(reason.code);
  return result_.pending[static_cast<size_t>(position)].reason = std::move(reason);
}

void CycleContext::clear_reason(WorkloadId workload) {
  const int32_t position = pending_position_[static_cast<size_t>(workload)];
  if (position < 0) return;
  reason_codes_[static_cast<size_t>(position)] = kUntried;
  result_.pending[static_cast<size_t>(position)].reason = PendingReason{};
}

std::span<const double> CycleContext::gang_request(WorkloadId workload) {
  const auto index = static_cast<size_t>(workload);
  const size_t resources = meter().resource_count();
  const std::span<double> total(gang_requests_.data() + index * resources, resources);
  if (!gang_request_known_[index]) {
    const Workload& entry = workloads()[workload];
    for (PodId pod : entry.gang()) meter().add_pending(cluster().pod(pod), total);
    gang_request_known_[index] = 1;
  }
  return total;
}

std::span<const ResourceId> CycleContext::key_resources(WorkloadId workload) {
  uint8_t& index = key_set_of_[static_cast<size_t>(workload)];
  if (index != kUnknownKeys) return key_sets_[index];
  meter().key_resources(gang_request(workload), keys_);
  auto known = std::find(key_sets_.begin(), key_sets_.end(), keys_);
  if (known == key_sets_.end()) known = key_sets_.insert(key_sets_.end(), keys_);
  const auto found = static_cast<size_t>(known - key_sets_.begin());
  if (found < kUnknownKeys) index = static_cast<uint8_t>(found);  // past that, worked out each time
  return *known;
}

std::optional<QuotaBlock> CycleContext::quota_block(WorkloadId workload) {
  const PendingKey& key = pending_key(workload);
  return ledger_.check_allocation(key.queue, gang_request(workload), key.preemptible, key_resources(workload));
}

int64_t CycleContext::gang_gpu_milli(WorkloadId workload) const {
  const int64_t known = pending_gpu_milli_[static_cast<size_t>(workload)];
  return known >= 0 ? known : sum_gang_gpu_milli(workload);
}

int64_t CycleContext::sum_gang_gpu_milli(WorkloadId workload) const {
  int64_t total = 0;
  const Workload& entry = inputs_.workloads[workload];
  for (PodId pod : entry.gang()) total += inputs_.cluster.pod(pod).gpu.pending_milli(typical_device_memory());
  return total;
}

void CycleContext::post(PodId pod, const Binding& binding, bool placed) {
  const WorkloadId owner = workloads().workload_of(pod);
  if (owner < 0) return;  // not a workload's pod: counts against no queue
  const Workload& workload = workloads()[owner];
  const ResourceVector amount = meter().bound(cluster().pod(pod), binding);
  const double burst = static_cast<double>(binding.burst_milli) / kMilliPerGpu;
  if (placed) {
    ledger_.add(workload.queue, amount, workload.spec.preemptible);
    ledger_.add_burst(workload.queue, burst);
  } else {
    ledger_.remove(workload.queue, amount, workload.spec.preemptible);
    ledger_.add_burst(workload.queue, -burst);
  }
}

PlacementPass CycleContext::pass_for(WorkloadId workload) const {
  const double limit = inputs_.workloads[workload].spec.time_limit_seconds;
  return {workload, limit > 0 ? now() + limit : kNeverDue};
}

bool CycleContext::plain_pass(WorkloadId workload) const {
  return !inputs_.cluster.has_reservations() ||
         (reservation_of(workload) < 0 && inputs_.workloads[workload].spec.time_limit_seconds <= 0);
}

void CycleContext::set_reservations(std::vector<Reservation> reservations) {
  for (const Reservation& reservation : reservations_) {
    reservation_of_[static_cast<size_t>(reservation.workload)] = -1;
    for (NodeIndex node : reservation.nodes) cluster().reserve(node, {});
  }
  reservations_ = std::move(reservations);
  for (size_t index = 0; index < reservations_.size(); ++index) {
    const Reservation& reservation = reservations_[index];
    reservation_of_[static_cast<size_t>(reservation.workload)] = static_cast<int32_t>(index);
    for (NodeIndex node : reservation.nodes) cluster().reserve(node, {reservation.workload, reservation.due});
  }
}

void CycleContext::amount_held(std::span<const PodId> pods, ResourceVector& total) const {
  total.assign(inputs_.meter.resource_count(), 0.0);
  for (PodId pod : pods) inputs_.meter.add_bound(inputs_.cluster.pod(pod), *inputs_.cluster.binding(pod), total);
}

void CycleContext::unit_pods(const VictimUnit& unit, std::vector<PodId>& pods) const {
  pods.clear();
  if (!unit.whole()) {
    pods.push_back(unit.extra);
    return;
  }
  for (PodId pod : inputs_.workloads[unit.workload].pods) {
    if (inputs_.cluster.binding(pod)) pods.push_back(pod);
  }
}

void CycleContext::commit(Statement& statement, Action action, WorkloadId beneficiary) {
  assert(statement.listener() == this && "a statement the ledger did not follow");
  struct Change {
    std::optional<Binding> before;
    bool seen = false;
  };
  // What each touched pod held before the statement: the binding its first eviction gave up,
  // or nothing if its first operation was an allocation.
  std::map<PodId, Change> changes;
  for (const Operation& operation : statement.operations()) {
    Change& change = changes[operation.pod];
    if (change.seen) continue;
    change.seen = true;
    if (operation.kind == Operation::Kind::kEvict) change.before = operation.binding;
  }
  statement.commit();
  ++generation_;

  // Net operations: a pod evicted and put back where it was did nothing.
  std::map<WorkloadId, Eviction> evictions;
  std::vector<Operation> allocations;
  int64_t gpu_delta = 0, cpu_delta = 0, memory_delta = 0;
  for (const auto& [pod, change] : changes) {
    const std::optional<Binding>& after = cluster().binding(pod);
    if (change.before == after) continue;
    const Resources& request = cluster().pod(pod).request;
    const int sign = (after ? 1 : 0) - (change.before ? 1 : 0);
    cpu_delta += sign * request.cpu_milli;
    memory_delta += sign * request.memory_bytes;
    gpu_delta += (after ? after->gpu_milli() : 0) - (change.before ? change.before->gpu_milli() : 0);
    const WorkloadId owner = workloads().workload_of(pod);
    if (change.before) {
      result_.operations.push_back({Operation::Kind::kEvict, pod, *change.before});
      Eviction& eviction = evictions[owner];
      eviction.workload = owner;
      eviction.pods.push_back(pod);
      eviction.gpu_milli += change.before->gpu_milli();
      eviction.action = action;
      eviction.beneficiary = beneficiary;
    }
    if (after) {
      allocations.push_back({Operation::Kind::kAllocate, pod, *after});
      if (owner >= 0) waiting_[static_cast<size_t>(owner)] = 0;
    }
  }
  result_.operations.insert(result_.operations.end(), allocations.begin(), allocations.end());
  if (gpu_delta < 0 || cpu_delta < 0 || memory_delta < 0) ++freed_generation_;

  ActionStats& stats = result_.actions[static_cast<int>(action)];
  for (auto& [owner, eviction] : evictions) {
    Workload& workload = workloads()[owner];
    eviction.whole_workload = false;
    eviction.moved = true;
    for (PodId pod : eviction.pods) {
      if (workloads().position_of(pod) < workload.min_member()) eviction.whole_workload = true;
      if (!cluster().binding(pod)) eviction.moved = false;
    }
    // A workload whose gang moved restarts where it now runs.
    if (eviction.whole_workload && eviction.moved) workload.started_at = now();
    ++stats.evictions;
    result_.evictions.push_back(std::move(eviction));
  }
  if (beneficiary >= 0 && workloads().is_running(beneficiary, cluster())) {
    workloads()[beneficiary].started_at = now();
    result_.started.push_back({beneficiary, action});
    ++stats.started;
  }
}

void CycleContext::finish_result() {
  // Those still waiting keep their entries, in order; an entry no action tried holds the
  // default reason.
  size_t kept = 0;
  for (size_t position = 0; position < pending_.size(); ++position) {
    if (!still_pending(pending_[position])) continue;
    if (kept != position) result_.pending[kept] = std::move(result_.pending[position]);
    ++kept;
  }
  result_.pending.erase(result_.pending.begin() + static_cast<std::ptrdiff_t>(kept), result_.pending.end());
  for (const Eviction& eviction : result_.evictions) {
    if (!eviction.whole_workload || eviction.moved || !workloads().is_pending(eviction.workload, cluster())) continue;
    PendingReason reason;
    reason.code = PendingCode::kEvicted;
    reason.gang_size = workloads()[eviction.workload].min_member();
    reason.evicted_by = action_name(eviction.action);
    reason.evicted_for = workloads()[eviction.beneficiary].spec.name;
    result_.pending.push_back({eviction.workload, std::move(reason)});
  }
  result_.allocated_after = ledger_.allocated();
}

}  // namespace tessera
