// reserve (docs/design.md §4 step 2), the last step of a cycle: a large workload that has waited past a
// threshold for room no action could make, in a queue within its fair share, reserves the nodes
// that would hold its gang were they empty — those cheapest to drain. Nobody else is placed there
// (except backfill that ends before the reservation is due), so the nodes drain as their work
// ends, or sooner by the holder's own reclaim, and the holder starts on them. Reservations last
// across cycles until the holder starts, leaves, or is no longer owed, and keep their nodes, so
// a drain is never started over.
#include <algorithm>
#include <limits>
#include <span>
#include <utility>

#include "engine/pod_shapes.h"
#include "engine/topology_placement.h"
#include "policy/device_choice.h"
#include "scheduler/actions.h"
#include "scheduler/queue_picker.h"

namespace tessera {

namespace {

// Puts the pod on the node's would-be state, as the placer would bind it there.
void take_room(const NodeSpec& spec, NodeState& state, const PodSpec& pod) {
  PlacementChoice choice;
  if (pod.gpu.kind == GpuRequest::Kind::kPortion || pod.gpu.kind == GpuRequest::Kind::kMemory) {
    for (int device = 0; device < spec.gpu_count() && choice.device < 0; ++device) {
      if (device_fits_fraction(spec, state, pod, device)) choice.device = device;
    }
  }
  state.apply(pod, make_binding(NodeView{0, spec, state}, pod, choice));
}

// The first nodes of `order` (skipping those `excluded`) that, emptied, hold every pod of the
// gang, packed first-fit in gang order. Empty if they cannot. A node that cannot take a pod
// shape empty is not looked at again for that shape, so a gang costs one pass over the order.
std::vector<NodeIndex> nodes_holding(const ClusterState& cluster, std::span<const PodId> gang,
                                     std::span<const NodeIndex> order, const std::vector<char>* excluded = nullptr) {
  std::vector<std::pair<NodeIndex, NodeState>> chosen;
  PodShapes shapes;
  std::vector<size_t> cursor;  // per pod shape: where in `order` its search goes on
  for (PodId pod_id : gang) {
    const PodSpec& pod = cluster.pod(pod_id);
    bool placed = false;
    for (auto& [node, state] : chosen) {
      if (check_node(cluster.node_spec(node), state, pod) == Predicate::kFits) {
        take_room(cluster.node_spec(node), state, pod);
        placed = true;
        break;
      }
    }
    const uint32_t shape = shapes.intern(pod);
    if (shape >= cursor.size()) cursor.resize(shape + 1, 0);
    for (size_t& index = cursor[shape]; !placed && index < order.size(); ++index) {
      const NodeIndex node = order[index];
      if ((excluded && (*excluded)[static_cast<size_t>(node)]) ||
          std::any_of(chosen.begin(), chosen.end(), [node](const auto& entry) { return entry.first == node; }))
        continue;
      const NodeSpec& spec = cluster.node_spec(node);
      NodeState state = NodeState::empty(spec);
      if (check_node(spec, state, pod) != Predicate::kFits) continue;
      take_room(spec, state, pod);
      chosen.emplace_back(node, std::move(state));
      placed = true;
    }
    if (!placed) return {};
  }
  std::vector<NodeIndex> nodes;
  for (const auto& entry : chosen) nodes.push_back(entry.first);
  return nodes;
}

// Per node: the GPUs (milli) held there by work that must end by itself before the node is free
// — non-preemptible work, and work of queues at or below their fair share, which reclaim may not
// take. The rest, the holder's reclaim may evict.
std::vector<int64_t> gpus_that_must_end(CycleContext& context) {
  const ClusterState& cluster = context.cluster();
  std::vector<int64_t> stuck(static_cast<size_t>(cluster.node_count()), 0);
  const WorkloadSet& workloads = context.workloads();
  const std::optional<ResourceId> gpu = context.tree().resources().find(kGpuResource);
  for (WorkloadId id : workloads.active()) {
    if (context.still_pending(id)) continue;  // holds nothing, told without reading the workload
    const Workload& workload = workloads[id];
    const double excess = gpu ? resource_at(context.ledger().allocated(workload.queue), *gpu) -
                                    context.shares().share(workload.queue, *gpu)
                              : 0.0;
    if (workload.spec.preemptible && excess > 0) continue;
    for (PodId pod : workload.pods) {
      if (const auto& binding = cluster.binding(pod)) stuck[static_cast<size_t>(binding->node)] += binding->gpu_milli();
    }
  }
  return stuck;
}

// Every node, cheapest to drain first: fewest GPUs held by work that must end by itself, then
// fewest GPUs in use, then least CPU in use, then index.
std::vector<NodeIndex> drain_order(CycleContext& context) {
  const ClusterState& cluster = context.cluster();
  const std::vector<int64_t> stuck = gpus_that_must_end(context);
  struct Candidate {
    int64_t gpu_stuck;
    int64_t gpu_used;
    int64_t cpu_used;
    NodeIndex node;
    auto operator<=>(const Candidate&) const = default;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(static_cast<size_t>(cluster.node_count()));
  for (NodeIndex node = 0; node < cluster.node_count(); ++node) {
    const NodeState& state = cluster.node_state(node);
    candidates.push_back({stuck[static_cast<size_t>(node)], state.gpu_used_total(),
                          cluster.node_spec(node).allocatable.cpu_milli - state.free.cpu_milli, node});
  }
  std::sort(candidates.begin(), candidates.end());
  std::vector<NodeIndex> order;
  order.reserve(candidates.size());
  for (const Candidate& candidate : candidates) order.push_back(candidate.node);
  return order;
}

// `order` split by the domains of one level: each domain's nodes, cheapest to drain first, and
// the most GPUs (milli) one of them has. Made once per cycle for each level asked.
struct DomainOrders {
  int topology = -1;
  int level = -1;
  std::vector<std::vector<NodeIndex>> nodes;  // per domain
  std::vector<int64_t> largest_node_milli;    // per domain
};

DomainOrders split_by_domain(const ClusterState& cluster, int topology, int level, std::span<const NodeIndex> order) {
  const TopologyDomains& domains = cluster.topology();
  const size_t count = domains.domains(topology, level).size();
  DomainOrders orders{topology, level, std::vector<std::vector<NodeIndex>>(count), std::vector<int64_t>(count, 0)};
  for (NodeIndex node : order) {
    const int32_t domain = domains.domain_of(topology, level, node);
    if (domain < 0) continue;
    orders.nodes[static_cast<size_t>(domain)].push_back(node);
    int64_t& largest = orders.largest_node_milli[static_cast<size_t>(domain)];
    largest = std::max(largest, int64_t{cluster.node_spec(node).gpu_count()} * kMilliPerGpu);
  }
  return orders;
}

// docs/topology.md: for a gang that must run within one domain of a level, the nodes of the one
// domain that holds it at the least drain cost (the sum of its chosen nodes' places in the drain
// order, `rank`), ties to the lower domain. Whatever nodes a domain chooses cost at least its
// first nodes not excluded, as many as its largest nodes would need for the gang's GPUs: the
// domains are looked into cheapest bound first, and none whose bound cannot beat the best.
std::vector<NodeIndex> nodes_in_one_domain(const ClusterState& cluster, std::span<const PodId> gang,
                                           const DomainOrders& orders, std::span<const size_t> rank,
                                           const std::vector<char>& excluded) {
  const int64_t need = nominal_gpu_milli(cluster, gang);
  struct Bounded {
    size_t bound;
    size_t domain;
    auto operator<=>(const Bounded&) const = default;
  };
  std::vector<Bounded> bounded;
  for (size_t domain = 0; domain < orders.nodes.size(); ++domain) {
    const int64_t largest = orders.largest_node_milli[domain];
    if (need > 0 && largest == 0) continue;
    const auto fewest = static_cast<size_t>(need > 0 ? std::max<int64_t>(1, (need + largest - 1) / largest) : 1);
    size_t bound = 0;
    size_t counted = 0;
    for (auto node = orders.nodes[domain].begin(); node != orders.nodes[domain].end() && counted < fewest; ++node) {
      if (excluded[static_cast<size_t>(*node)]) continue;
      bound += rank[static_cast<size_t>(*node)];
      ++counted;
    }
    if (counted == fewest) bounded.push_back({bound, domain});  // else too few nodes left to hold it
  }
  std::sort(bounded.begin(), bounded.end());
  std::vector<NodeIndex> best;
  size_t best_cost = 0;
  size_t best_domain = 0;
  for (const Bounded& entry : bounded) {
    if (!best.empty() && std::pair{entry.bound, entry.domain} > std::pair{best_cost, best_domain}) break;
    std::vector<NodeIndex> nodes = nodes_holding(cluster, gang, orders.nodes[entry.domain], &excluded);
    if (nodes.empty()) continue;
    size_t cost = 0;
    for (NodeIndex node : nodes) cost += rank[static_cast<size_t>(node)];
    if (best.empty() || std::pair{cost, entry.domain} < std::pair{best_cost, best_domain}) {
      best = std::move(nodes);
      best_cost = cost;
      best_domain = entry.domain;
    }
  }
  return best;
}

}  // namespace

// When each reservation's nodes are expected free: the latest end, by time limit, of the work on
// them (kNeverDue if some has no limit; now if nothing runs there).
void set_due_times(CycleContext& context, std::vector<Reservation>& reservations) {
  if (reservations.empty()) return;
  const ClusterState& cluster = context.cluster();
  std::vector<int32_t> reservation_on(static_cast<size_t>(cluster.node_count()), -1);
  for (size_t index = 0; index < reservations.size(); ++index) {
    reservations[index].due = context.now();
    for (NodeIndex node : reservations[index].nodes)
      reservation_on[static_cast<size_t>(node)] = static_cast<int32_t>(index);
  }
  const WorkloadSet& workloads = context.workloads();
  for (WorkloadId id : workloads.active()) {
    if (context.still_pending(id)) continue;  // holds no node
    const Workload& workload = workloads[id];
    const double limit = workload.spec.time_limit_seconds;
    const double end = limit > 0 ? workload.started_at + limit : kNeverDue;
    for (PodId pod : workload.pods) {
      const auto& binding = cluster.binding(pod);
      if (!binding) continue;
      const int32_t index = reservation_on[static_cast<size_t>(binding->node)];
      if (index >= 0)
        reservations[static_cast<size_t>(index)].due = std::max(reservations[static_cast<size_t>(index)].due, end);
    }
  }
}

void reserve(CycleContext& context) {
  const ReservationOptions& options = context.options().reservations;
  const ClusterState& cluster = context.cluster();
  const QueueTree& tree = context.tree();
  // Per leaf queue: the gangs of the reservations kept or made so far.
  std::vector<ResourceVector> promised(tree.size(), ResourceVector(tree.resource_count(), 0.0));
  std::vector<char> reserved(static_cast<size_t>(cluster.node_count()), 0);
  size_t reserved_count = 0;
  const auto max_nodes = static_cast<size_t>(options.max_reserved_node_fraction * cluster.node_count());

  // The cap on reserved nodes, past which the first reservation may still go: a gang larger
  // than the cap would otherwise never get one.
  auto room_for = [&](size_t nodes) { return reserved_count == 0 || reserved_count + nodes <= max_nodes; };
  // A workload may hold a reservation while it waits for room (not for quota) and its queue,
  // counting the gangs of earlier reservations, holds no more than its fair share.
  auto owed = [&](WorkloadId id) {
    if (!options.enabled || !context.still_pending(id) || !context.unschedulable(id) || !context.quota_allows(id))
      return false;
    const QueueIndex queue = context.pending_key(id).queue;
    return context.ledger().within_fair_share(queue, promised[queue], context.key_resources(id));
  };
  auto keep = [&](Reservation reservation, std::vector<Reservation>& into) {
    const std::span<const double> request = context.gang_request(reservation.workload);
    ResourceVector& set_aside = promised[context.workloads()[reservation.workload].queue];
    for (ResourceId r = 0; r < request.size(); ++r) set_aside[r] += request[r];
    for (NodeIndex node : reservation.nodes) reserved[static_cast<size_t>(node)] = 1;
    reserved_count += reservation.nodes.size();
    into.push_back(std::move(reservation));
  };

  // The reservations in force keep their nodes while they are owed and those nodes still hold
  // the gang; the most deserving queues first.
  std::vector<Reservation> kept;
  std::vector<WorkloadId> holders;
  for (const Reservation& reservation : context.reservations()) holders.push_back(reservation.workload);
  QueuePicker held(context, holders);
  for (WorkloadId id = held.next(); id >= 0; id = held.next()) {
    const Reservation& reservation = context.reservations()[static_cast<size_t>(context.reservation_of(id))];
    if (!owed(id) || !room_for(reservation.nodes.size())) continue;
    if (nodes_holding(cluster, context.workloads()[id].gang(), reservation.nodes).empty()) continue;
    keep(reservation, kept);
  }

  // New reservations for workloads that waited long enough, in queue order, while room is left.
  std::vector<WorkloadId> waiting;
  for (WorkloadId id : context.pending()) {
    const Workload& workload = context.workloads()[id];
    if (context.reservation_of(id) < 0 && context.now() - workload.submitted_at >= options.min_wait_seconds &&
        static_cast<double>(context.gang_gpu_milli(id)) >= options.min_gpus * kMilliPerGpu)
      waiting.push_back(id);
  }
  QueuePicker picker(context, waiting);
  std::vector<NodeIndex> order;  // computed once, when a first candidate is owed
  std::vector<size_t> rank;      // per node: its place in `order`
  std::vector<DomainOrders> by_level;
  auto orders_of = [&](int topology, int level) -> const DomainOrders& {
    for (const DomainOrders& orders : by_level) {
      if (orders.topology == topology && orders.level == level) return orders;
    }
    return by_level.emplace_back(split_by_domain(cluster, topology, level, order));
  };
  for (WorkloadId id = picker.next(); id >= 0 && options.enabled && room_for(1); id = picker.next()) {
    if (!owed(id) || context.topology_unresolvable(id)) continue;
    const std::span<const PodId> gang = context.workloads()[id].gang();
    if (order.empty()) {
      order = drain_order(context);
      rank.resize(order.size());
      for (size_t position = 0; position < order.size(); ++position)
        rank[static_cast<size_t>(order[position])] = position;
    }
    const GangTopology* topology = context.gang_topology(id);
    std::vector<NodeIndex> nodes =
        topology && topology->whole.required >= 0
            ? nodes_in_one_domain(cluster, gang, orders_of(topology->topology, topology->whole.required), rank,
                                  reserved)
            : nodes_holding(cluster, gang, order, &reserved);
    if (nodes.empty() || !room_for(nodes.size())) continue;
    std::sort(nodes.begin(), nodes.end());
    keep({id, std::move(nodes), context.now(), kNeverDue}, kept);
    ++context.result().reservations_made;
  }

  set_due_times(context, kept);
  for (const Reservation& reservation : kept) {
    PendingReason& reason = *context.reason(reservation.workload);
    reason.reserved_nodes = static_cast<int>(reservation.nodes.size());
    reason.reserved_seconds = context.now() - reservation.since;
  }
  context.set_reservations(std::move(kept));
}

}  // namespace tessera
