#include "scheduler/victim_index.h"

#include <algorithm>
#include <climits>

#include "scheduler/by_node.h"

namespace tessera {

namespace {

bool victim_order(const VictimIndex::Unit& a, const VictimIndex::Unit& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.unit.whole() != b.unit.whole()) return !a.unit.whole();          // elastic extras first
  if (a.started_at != b.started_at) return a.started_at > b.started_at;  // youngest first
  return a.unit.workload != b.unit.workload ? a.unit.workload > b.unit.workload : a.unit.extra > b.unit.extra;
}

}  // namespace

VictimIndex::VictimIndex(CycleContext& context, std::span<const double> min_runtime)
    : resource_count_(context.meter().resource_count()),
      gpus_(static_cast<size_t>(context.cluster().node_count()), context.tree().size()) {
  const auto node_count = static_cast<size_t>(context.cluster().node_count());
  const WorkloadSet& workloads = context.workloads();
  const ClusterState& cluster = context.cluster();
  whole_unit_of_.assign(workloads.size(), -1);
  all_units_.resize(node_count, context.tree().size());
  units_without_gpus_.resize(node_count, context.tree().size());
  held_without_gpus_.assign(node_count, Resources{});
  members_start_.push_back(0);
  min_priority_ = INT_MAX;
  for (WorkloadId id : workloads.active()) {
    // Pending at the start of the cycle: still waiting, or placed since, and work this cycle just
    // placed is not taken back in the same cycle (below). Told apart without reading the
    // workload, as most of a cycle's workloads are pending.
    if (context.pending_position(id) >= 0) continue;
    const Workload& workload = workloads[id];
    // Work this cycle just placed is not taken back in the same cycle.
    if (!workload.spec.preemptible || !workloads.is_running(id, cluster) || workload.started_at >= context.now() ||
        context.now() - workload.started_at < min_runtime[workload.queue])
      continue;
    whole_unit_of_[static_cast<size_t>(id)] = static_cast<int32_t>(add_unit(context, workload, {id, -1}));
    for (size_t position = static_cast<size_t>(workload.min_member()); position < workload.pods.size(); ++position) {
      if (cluster.binding(workload.pods[position]))
        extras_of_[id].push_back(add_unit(context, workload, {id, workload.pods[position]}));
    }
  }
  if (units_.empty()) min_priority_ = 0;
  node_gpus_.reserve(node_count);
  for (NodeIndex node = 0; node < cluster.node_count(); ++node)
    node_gpus_.push_back(cluster.node_spec(node).gpu_count());
  index_by_node(node_count);
  all_units_.finish();
  units_without_gpus_.finish();
  gpus_.finish();
}

void VictimIndex::index_by_node(size_t node_count) {
  // The pods by node, in the order added: each node's units in index order.
  std::vector<size_t> start;
  std::vector<PlacedPod> placed_by_node = by_node(placed_, node_count, start);
  placed_ = {};
  node_units_.reserve(placed_by_node.size());
  node_units_start_.reserve(node_count + 1);
  held_by_queue_.reserve(placed_by_node.size());
  held_by_queue_start_.reserve(node_count + 1);
  gpus_held_.assign(node_count, 0);
  resources_held_.assign(node_count, Resources{});
  for (size_t node = 0; node < node_count; ++node) {
    const auto begin = placed_by_node.begin() + static_cast<std::ptrdiff_t>(start[node]);
    const auto end = placed_by_node.begin() + static_cast<std::ptrdiff_t>(start[node + 1]);
    // Its units, each once (a unit's pods come together), in victim order.
    const size_t first_unit = node_units_.size();
    node_units_start_.push_back(first_unit);
    for (auto placed = begin; placed != end; ++placed) {
      if (node_units_.size() == first_unit || node_units_.back() != placed->unit) node_units_.push_back(placed->unit);
    }
    std::sort(node_units_.begin() + static_cast<std::ptrdiff_t>(first_unit), node_units_.end(),
              [&](uint32_t a, uint32_t b) { return victim_order(units_[a], units_[b]); });
    // What it holds per queue, by queue.
    held_by_queue_start_.push_back(held_by_queue_.size());
    std::sort(begin, end, [](const PlacedPod& a, const PlacedPod& b) { return a.queue < b.queue; });
    for (auto placed = begin; placed != end; ++placed) {
      if (placed == begin || held_by_queue_.back().queue != placed->queue) {
        QueueHolds& first = held_by_queue_.emplace_back();
        first.queue = placed->queue;
        first.smallest_unit_milli = placed->unit_gpu_milli;
      }
      QueueHolds& sum = held_by_queue_.back();
      sum.smallest_unit_milli = std::min(sum.smallest_unit_milli, placed->unit_gpu_milli);
      sum.gpu_milli += placed->gpu_milli;
      if (placed->unit_gpu_milli > 0) {
        sum.with_gpus += placed->resources;
        sum.smallest_gpu_unit_milli = std::min(sum.smallest_gpu_unit_milli, placed->unit_gpu_milli);
      } else {
        sum.without_gpus += placed->resources;
      }
      gpus_held_[node] += placed->gpu_milli;
      resources_held_[node] += placed->resources;
    }
  }
  node_units_start_.push_back(node_units_.size());
  held_by_queue_start_.push_back(held_by_queue_.size());
  nodes_held_without_gpus_.assign((node_count + 63) / 64, 0);
  for (size_t node = 0; node < node_count; ++node) {
    const Resources& held = held_without_gpus_[node];
    if (held.cpu_milli > 0 || held.memory_bytes > 0) nodes_held_without_gpus_[node / 64] |= uint64_t{1} << (node % 64);
  }
}

uint32_t VictimIndex::add_unit(CycleContext& context, const Workload& workload, VictimUnit victim) {
  const ClusterState& cluster = context.cluster();
  Unit unit;
  unit.unit = victim;
  unit.queue = workload.queue;
  unit.priority = workload.spec.priority;
  unit.started_at = workload.started_at;
  std::vector<PodId>& pods = unit_pods_;
  context.unit_pods(victim, pods);
  uint8_t holds = 0;
  for (PodId pod : pods) {
    const Binding& binding = *cluster.binding(pod);
    const Resources& request = cluster.pod(pod).request;
    members_.push_back({pod, binding.node, binding.milli_per_device, static_cast<uint32_t>(devices_.size()),
                        static_cast<uint32_t>(binding.devices.size()), binding.burst_milli, request});
    devices_.insert(devices_.end(), binding.devices.begin(), binding.devices.end());
    unit.gpu_milli += binding.gpu_milli();
    if (request.cpu_milli > 0 || request.memory_bytes > 0) holds |= kHoldsCpuOrMemory;
  }
  if (unit.gpu_milli > 0) holds |= kHoldsGpu;
  members_start_.push_back(members_.size());
  context.amount_held(pods, unit_amount_);
  for (size_t resource = 0; resource < resource_count_; ++resource)
    amounts_.push_back(resource_at(unit_amount_, resource));
  const auto index = static_cast<uint32_t>(units_.size());
  for (PodId pod : pods) {
    const Binding& binding = *cluster.binding(pod);
    all_units_.add(workload.queue, binding.node);
    if (unit.gpu_milli == 0) units_without_gpus_.add(workload.queue, binding.node);
    // An extra is also in its workload's whole unit: count its GPUs once (its CPU and memory count
    // with each, as either may be taken alone).
    const int64_t counted_milli = victim.whole() ? binding.gpu_milli() : 0;
    const Resources& request = cluster.pod(pod).request;
    placed_.push_back(
        {binding.node, index, static_cast<uint32_t>(workload.queue), counted_milli, unit.gpu_milli, request});
    if (binding.gpu_milli() == 0) held_without_gpus_[static_cast<size_t>(binding.node)] += request;
    gpus_.add(binding.node, workload.queue, unit.priority, counted_milli, unit.gpu_milli);
  }
  min_priority_ = std::min(min_priority_, unit.priority);
  max_unit_gpu_milli_ = std::max(max_unit_gpu_milli_, unit.gpu_milli);
  tags_.push_back({victim.workload, static_cast<uint32_t>(workload.queue), holds, 0});
  units_.push_back(unit);
  return index;
}

const std::vector<int64_t>& VictimIndex::gpus_held_in(const TopologyDomains& domains, int topology, int level) {
  for (const HeldIn& held : held_in_) {
    if (held.topology == topology && held.level == level) return held.gpu_milli;
  }
  const auto& all = domains.domains(topology, level);
  HeldIn& held = held_in_.emplace_back(HeldIn{topology, level, std::vector<int64_t>(all.size(), 0)});
  for (size_t domain = 0; domain < all.size(); ++domain) {
    for (NodeIndex node : all[domain].nodes) held.gpu_milli[domain] += gpus_held_on(node);
  }
  return held.gpu_milli;
}

void VictimIndex::QueueNodes::finish() {
  for (auto& nodes : nodes_) {
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  }
}

const std::vector<uint64_t>& VictimIndex::QueueNodes::of_any(const std::vector<QueueIndex>& leaves) {
  if (union_.bits.empty()) {
    union_.resize(node_count_);
    in_union_.assign(nodes_.size(), 0);
    asked_.assign(nodes_.size(), 0);
  }
  if (leaves == union_of_) return union_.bits;
  for (QueueIndex leaf : leaves) asked_[leaf] = 1;
  for (QueueIndex leaf : union_of_) {
    if (!asked_[leaf]) count(leaf, false);
  }
  for (QueueIndex leaf : leaves) {
    if (!in_union_[leaf]) count(leaf, true);
    asked_[leaf] = 0;
  }
  union_of_ = leaves;
  return union_.bits;
}

void VictimIndex::QueueNodes::count(QueueIndex leaf, bool in) {
  in_union_[leaf] = in ? 1 : 0;
  for (NodeIndex node : nodes_[leaf]) union_.count_node(node, in);
}

void VictimIndex::forget(const std::vector<Eviction>& evictions, size_t first) {
  for (size_t e = first; e < evictions.size(); ++e) {
    const Eviction& eviction = evictions[e];
    if (eviction.workload < 0 || static_cast<size_t>(eviction.workload) >= whole_unit_of_.size()) continue;
    const int32_t whole = whole_unit_of_[static_cast<size_t>(eviction.workload)];
    if (whole < 0) continue;  // not in the index, nor its extras
    auto extras = extras_of_.find(eviction.workload);
    const std::span<const uint32_t> extra_units =
        extras == extras_of_.end() ? std::span<const uint32_t>() : std::span<const uint32_t>(extras->second);
    // What counts in gpus_ before, so that what stops (or starts) counting is taken out (added).
    const auto whole_index = static_cast<uint32_t>(whole);
    const bool whole_counted = counted(whole_index);
    extra_counted_.clear();
    for (uint32_t index : extra_units) extra_counted_.push_back(counted(index) ? 1 : 0);
    // The workload's pods changed, so its whole unit is stale; a whole eviction takes its extras.
    go(whole_index);
    for (uint32_t index : extra_units) {
      if (eviction.whole_workload ||
          std::find(eviction.pods.begin(), eviction.pods.end(), units_[index].unit.extra) != eviction.pods.end())
        go(index);
    }
    if (whole_counted) count_gpus(whole_index, -1);
    for (size_t i = 0; i < extra_units.size(); ++i) {
      const bool now = counted(extra_units[i]);
      if (now != (extra_counted_[i] != 0)) count_gpus(extra_units[i], now ? 1 : -1);
    }
  }
}

void VictimIndex::go(uint32_t index) {
  if (tags_[index].gone != 0) return;
  tags_[index].gone = 1;
  // What add_unit counted of the unit's CPU and memory, taken out.
  const Unit& unit = units_[index];
  for (const Member& member : members(index)) {
    const auto node = static_cast<size_t>(member.node);
    resources_held_[node] -= member.request;
    if (int64_t{member.milli_per_device} * member.device_count == 0) held_without_gpus_[node] -= member.request;
    const auto begin = held_by_queue_.begin() + static_cast<std::ptrdiff_t>(held_by_queue_start_[node]);
    const auto end = held_by_queue_.begin() + static_cast<std::ptrdiff_t>(held_by_queue_start_[node + 1]);
    const auto held = std::find_if(begin, end, [&](const QueueHolds& entry) { return entry.queue == unit.queue; });
    (unit.gpu_milli > 0 ? held->with_gpus : held->without_gpus) -= member.request;
  }
}

bool VictimIndex::counted(uint32_t index) const {
  if (gone(index)) return false;
  const VictimUnit& unit = units_[index].unit;
  return unit.whole() || gone(static_cast<uint32_t>(whole_unit_of_[static_cast<size_t>(unit.workload)]));
}

void VictimIndex::count_gpus(uint32_t index, int sign) {
  const Unit& unit = units_[index];
  for (const Member& member : members(index)) {
    const int64_t milli = int64_t{member.milli_per_device} * member.device_count;
    if (milli != 0) gpus_.change(member.node, unit.queue, unit.priority, sign * milli);
  }
}

}  // namespace tessera
