#include "scheduler/cycle.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <span>

#include "scheduler/actions.h"
#include "scheduler/cycle_context.h"

namespace tessera {

std::string_view action_name(Action action) {
  switch (action) {
    case Action::kAllocate:
      return "allocate";
    case Action::kConsolidate:
      return "consolidate";
    case Action::kReclaim:
      return "reclaim";
    case Action::kPreempt:
      return "preempt";
  }
  return "unknown";
}

namespace {

double inherited(const QueueTree& tree, QueueIndex queue, std::optional<double> QueueSpec::*field) {
  for (; queue != QueueTree::kNoParent; queue = tree.parent(queue)) {
    if (const auto& value = tree.spec(queue).*field) return *value;
  }
  return 0;
}

bool exceeds_a_limit(const QueueTree& tree, const ResourceMeter& meter, const ClusterState& cluster,
                     const Workload& workload) {
  ResourceVector gang(tree.resource_count(), 0.0);
  for (PodId pod : workload.gang()) meter.add_pending(cluster.pod(pod), gang);
  for (QueueIndex queue = workload.queue; queue != QueueTree::kNoParent; queue = tree.parent(queue)) {
    for (ResourceId r = 0; r < gang.size(); ++r) {
      const auto& limit = tree.quota(queue, r).limit;
      if (limit && gang[r] > *limit + 1e-9) return true;
    }
  }
  return false;
}

// The reservations handed in that still stand for a pending workload, each node reserved once.
std::vector<Reservation> valid_reservations(const CycleInputs& inputs) {
  std::vector<Reservation> valid;
  if (inputs.carried == nullptr) return valid;
  std::vector<char> taken(static_cast<size_t>(inputs.cluster.node_count()), 0);
  for (const Reservation& reservation : inputs.carried->reservations) {
    const WorkloadId id = reservation.workload;
    if (id < 0 || static_cast<size_t>(id) >= inputs.workloads.size() || inputs.workloads[id].finished ||
        inputs.workloads[id].pods.empty() || !inputs.workloads.is_pending(id, inputs.cluster))
      continue;
    if (reservation.nodes.empty() ||
        std::any_of(valid.begin(), valid.end(), [id](const Reservation& other) { return other.workload == id; }))
      continue;
    std::vector<char> marked = taken;
    bool nodes_valid = true;
    for (NodeIndex node : reservation.nodes) {
      nodes_valid =
          nodes_valid && node >= 0 && node < inputs.cluster.node_count() && !marked[static_cast<size_t>(node)];
      if (nodes_valid) marked[static_cast<size_t>(node)] = 1;
    }
    if (!nodes_valid) continue;
    taken = std::move(marked);
    valid.push_back(reservation);
  }
  return valid;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

double preempt_min_runtime(const QueueTree& tree, QueueIndex queue) {
  return inherited(tree, queue, &QueueSpec::preempt_min_runtime_seconds);
}

double reclaim_min_runtime(const QueueTree& tree, QueueIndex queue) {
  return inherited(tree, queue, &QueueSpec::reclaim_min_runtime_seconds);
}

namespace {

// What every queue holds and asks for at the start of the cycle, from the snapshot.
struct StartingLoads {
  std::vector<QueueLoad> loads;                 // per queue: demand, allocation, recent usage
  std::vector<ResourceVector> non_preemptible;  // per queue: what its non-preemptible work holds
  std::vector<double> burst;                    // per queue: GPU-memory limits beyond requests, GPUs
};

// Per leaf: whether some queue on its path has a limit (only then can a gang pass one).
std::vector<char> limited_leaves(const QueueTree& tree) {
  std::vector<char> limited(tree.size(), 0);
  for (QueueIndex leaf : tree.leaves()) {
    for (QueueIndex queue = leaf; queue != QueueTree::kNoParent && !limited[leaf]; queue = tree.parent(queue)) {
      for (ResourceId r = 0; r < tree.resource_count(); ++r) limited[leaf] |= tree.quota(queue, r).limit ? 1 : 0;
    }
  }
  return limited;
}

// `recent_usage`: per queue, the remembered use time-based fairness compares; empty: none.
Result<StartingLoads> measure_loads(const CycleInputs& inputs, std::span<const ResourceVector> recent_usage) {
  const QueueTree& tree = inputs.queues;
  const ResourceMeter& meter = inputs.meter;
  const size_t resources = tree.resource_count();
  StartingLoads measured{std::vector<QueueLoad>(tree.size()),
                         std::vector<ResourceVector>(tree.size(), ResourceVector(resources, 0.0)),
                         std::vector<double>(tree.size(), 0.0)};
  for (QueueLoad& load : measured.loads) {
    load.demand.assign(resources, 0.0);
    load.allocated.assign(resources, 0.0);
    if (!recent_usage.empty()) load.recent_usage.assign(resources, 0.0);
  }
  for (QueueIndex queue = 0; queue < tree.size() && queue < recent_usage.size(); ++queue) {
    measured.loads[queue].recent_usage = recent_usage[queue];
  }
  const std::vector<char> limited = limited_leaves(tree);
  for (WorkloadId id : inputs.workloads.active()) {
    const Workload& workload = inputs.workloads[id];
    if (workload.queue >= tree.size() || !tree.is_leaf(workload.queue)) {
      return Error{
          fmt::format("workload '{}' is in queue {}, which is not a leaf queue", workload.spec.name, workload.queue)};
    }
    QueueLoad& load = measured.loads[workload.queue];
    // Requeued by its time limit and still waiting out the delay: it asks for nothing yet.
    if (workload.held_until > inputs.now && inputs.workloads.is_pending(id, inputs.cluster)) continue;
    // A pending workload that alone passes a limit on its queue's path can never run: its
    // request would only take fair share from the queues that can use it.
    if (limited[workload.queue] && inputs.workloads.is_pending(id, inputs.cluster) &&
        exceeds_a_limit(tree, meter, inputs.cluster, workload))
      continue;
    for (PodId pod : workload.pods) {
      const PodSpec& spec = inputs.cluster.pod(pod);
      if (const auto& binding = inputs.cluster.binding(pod)) {
        meter.add_bound(spec, *binding, load.demand);
        meter.add_bound(spec, *binding, load.allocated);
        measured.burst[workload.queue] += static_cast<double>(binding->burst_milli) / kMilliPerGpu;
        if (!workload.spec.preemptible) meter.add_bound(spec, *binding, measured.non_preemptible[workload.queue]);
      } else {
        meter.add_pending(spec, load.demand);
      }
    }
  }
  return measured;
}

// The actions in their order, each timed, then the new reservations.
void run_actions(CycleContext& context, const CycleOptions& options) {
  auto timed = [&](Action action, void (*run)(CycleContext&)) {
    const auto start = std::chrono::steady_clock::now();
    run(context);
    context.result().actions[static_cast<int>(action)].seconds = seconds_since(start);
  };
  timed(Action::kAllocate, allocate);
  if (options.consolidate) timed(Action::kConsolidate, consolidate);
  if (options.reclaim) timed(Action::kReclaim, reclaim);
  if (options.preempt) timed(Action::kPreempt, preempt);
  // Reservations held all through the cycle; new ones are made last, for workloads that no
  // action could serve, and hold from the next cycle's allocate on.
  const auto reserve_start = std::chrono::steady_clock::now();
  reserve(context);
  context.result().reserve_seconds = seconds_since(reserve_start);
}

}  // namespace

Result<CycleResult> run_cycle(CycleInputs inputs, const CycleOptions& options) {
  const auto cycle_start = std::chrono::steady_clock::now();
  if (inputs.meter.resource_count() != inputs.queues.resource_count()) {
    return Error{fmt::format("the resource meter counts {} resources but the queue tree has {}",
                             inputs.meter.resource_count(), inputs.queues.resource_count())};
  }
  // Time-based fairness compares what each queue used lately, brought up to now.
  std::span<const ResourceVector> recent_usage;
  const bool remembers_usage = inputs.carried != nullptr && options.fair_share.usage_penalty > 0;
  if (remembers_usage) {
    fade_into_recent_usage(*inputs.carried, inputs.queues.size(), inputs.now,
                           options.fair_share.usage_half_life_seconds);
    recent_usage = inputs.carried->recent_usage;
  }
  auto measured = measure_loads(inputs, recent_usage);
  if (!measured) return measured.error();
  const auto fair_share_start = std::chrono::steady_clock::now();
  auto shares = compute_fair_shares(inputs.queues, inputs.meter.capacity(), measured->loads, options.fair_share);
  if (!shares) return shares.error();
  const double fair_share_seconds = seconds_since(fair_share_start);

  CycleContext context(inputs, options, std::move(*shares), std::move(measured->loads),
                       std::move(measured->non_preemptible), measured->burst);
  context.result().fair_share_seconds = fair_share_seconds;
  // A reservation's due time is read afresh: what runs on its nodes changed since the last cycle.
  std::vector<Reservation> reservations_in_force = valid_reservations(inputs);
  set_due_times(context, reservations_in_force);
  context.set_reservations(std::move(reservations_in_force));
  run_actions(context, options);
  context.finish_result();
  // The marks are state of this cycle: the caller hands the reservations to the next one.
  std::vector<Reservation> reservations = context.reservations();
  context.set_reservations({});
  CycleResult result = std::move(context.result());
  result.reservations = std::move(reservations);
  result.shares = context.shares();
  if (inputs.carried != nullptr) {
    inputs.carried->reservations = result.reservations;
    if (remembers_usage) inputs.carried->held = result.allocated_after;
  }
  result.total_seconds = seconds_since(cycle_start);
  return result;
}

}  // namespace tessera
