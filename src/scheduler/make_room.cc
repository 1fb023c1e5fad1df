#include "scheduler/make_room.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "policy/feasibility.h"

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
    : by_node_(static_cast<size_t>(context.cluster().node_count())), nodes_of_queue_(context.tree().size()) {
  std::vector<std::vector<QueueGpus>> gpus_by_queue(by_node_.size());
  const WorkloadSet& workloads = context.workloads();
  const ClusterState& cluster = context.cluster();
  whole_unit_of_.assign(workloads.size(), -1);
  min_priority_ = INT_MAX;
  for (WorkloadId id : workloads.active()) {
    const Workload& workload = workloads[id];
    // Work this cycle just placed is not taken back in the same cycle.
    if (!workload.spec.preemptible || !workloads.is_running(id, cluster) || workload.started_at >= context.now() ||
        context.now() - workload.started_at < min_runtime[workload.queue])
      continue;
    auto add_unit = [&](VictimUnit victim) {
      Unit unit;
      unit.unit = victim;
      unit.queue = workload.queue;
      unit.priority = workload.spec.priority;
      unit.started_at = workload.started_at;
      unit.pods = context.unit_pods(victim);
      unit.amount = context.unit_amount(victim);
      for (PodId pod : unit.pods) {
        unit.bindings.push_back(*cluster.binding(pod));
        unit.requests.push_back(cluster.pod(pod).request);
        unit.gpu_milli += unit.bindings.back().gpu_milli();
      }
      const auto index = static_cast<uint32_t>(units_.size());
      for (PodId pod : unit.pods) {
        const Binding& binding = *cluster.binding(pod);
        auto& list = by_node_[static_cast<size_t>(binding.node)];
        if (list.empty() || list.back() != index) list.push_back(index);
        nodes_of_queue_[workload.queue].push_back(binding.node);
        auto& sums = gpus_by_queue[static_cast<size_t>(binding.node)];
        auto entry =
            std::find_if(sums.begin(), sums.end(), [&](const QueueGpus& sum) { return sum.queue == workload.queue; });
        if (entry == sums.end()) entry = sums.insert(sums.end(), QueueGpus{workload.queue, 0, unit.gpu_milli});
        entry->smallest_unit_milli = std::min(entry->smallest_unit_milli, unit.gpu_milli);
        // An extra is also in its workload's whole unit: count its GPUs once.
        if (victim.whole()) entry->gpu_milli += binding.gpu_milli();
      }
      min_priority_ = std::min(min_priority_, unit.priority);
      gone_.push_back(0);
      unit_queue_.push_back(static_cast<uint32_t>(workload.queue));
      uint8_t holds = unit.gpu_milli > 0 ? kHoldsGpu : 0;
      for (const Resources& request : unit.requests) {
        if (request.cpu_milli > 0 || request.memory_bytes > 0) holds |= kHoldsCpuOrMemory;
      }
      unit_holds_.push_back(holds);
      units_.push_back(std::move(unit));
      return index;
    };
    whole_unit_of_[static_cast<size_t>(id)] = static_cast<int32_t>(add_unit({id, -1}));
    for (size_t position = static_cast<size_t>(workload.min_member()); position < workload.pods.size(); ++position) {
      if (cluster.binding(workload.pods[position])) extras_of_[id].push_back(add_unit({id, workload.pods[position]}));
    }
  }
  for (auto& list : by_node_) {
    std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) { return victim_order(units_[a], units_[b]); });
  }
  if (units_.empty()) min_priority_ = 0;
  for (auto& nodes : nodes_of_queue_) {
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  }
  gpus_by_queue_start_.reserve(gpus_by_queue.size() + 1);
  for (const auto& sums : gpus_by_queue) {
    gpus_by_queue_start_.push_back(gpus_by_queue_.size());
    gpus_by_queue_.insert(gpus_by_queue_.end(), sums.begin(), sums.end());
  }
  gpus_by_queue_start_.push_back(gpus_by_queue_.size());
}

void VictimIndex::forget(const std::vector<Eviction>& evictions, size_t first) {
  for (size_t e = first; e < evictions.size(); ++e) {
    const Eviction& eviction = evictions[e];
    if (eviction.workload < 0 || static_cast<size_t>(eviction.workload) >= whole_unit_of_.size()) continue;
    // The workload's pods changed, so its whole unit is stale; a whole eviction takes its extras.
    if (const int32_t whole = whole_unit_of_[static_cast<size_t>(eviction.workload)]; whole >= 0)
      gone_[static_cast<size_t>(whole)] = 1;
    auto extras = extras_of_.find(eviction.workload);
    if (extras == extras_of_.end()) continue;
    for (uint32_t index : extras->second) {
      if (eviction.whole_workload ||
          std::find(eviction.pods.begin(), eviction.pods.end(), units_[index].unit.extra) != eviction.pods.end())
        gone_[index] = 1;
    }
  }
}

namespace {

struct NodeChoice {
  NodeIndex node = -1;
  int top_priority = 0;
  int64_t gpu_milli = 0;
  int pods = 0;
  std::vector<uint32_t> victims;

  bool better_than(const NodeChoice& other) const {
    if (other.node < 0) return true;
    if (top_priority != other.top_priority) return top_priority < other.top_priority;
    if (gpu_milli != other.gpu_milli) return gpu_milli < other.gpu_milli;
    return pods < other.pods;
  }
};

struct EvictedUnit {
  const VictimIndex::Unit* unit;
  std::vector<std::pair<PodId, Binding>> pods;  // where each pod ran
};

bool binding_fits(const ClusterState& cluster, PodId pod, const Binding& binding) {
  const NodeState& state = cluster.node_state(binding.node);
  const PodSpec& spec = cluster.pod(pod);
  if (state.free.cpu_milli < spec.request.cpu_milli || state.free.memory_bytes < spec.request.memory_bytes)
    return false;
  for (int16_t device : binding.devices) {
    if (state.gpu_used_milli[static_cast<size_t>(device)] + binding.milli_per_device > kMilliPerGpu) return false;
  }
  return true;
}

// Like the Kubernetes scheduler's preemption, the search compares a bounded number of nodes that
// could take the pod and keeps the cheapest: 100 (all of them in a smaller cluster). Comparing
// 10% of 10,000 nodes for each of thousands of reclaims per cycle costs seconds and rarely finds
// a cheaper node.
constexpr int kCandidateNodes = 100;

class RoomSearch {
 public:
  RoomSearch(CycleContext& context, VictimIndex& victims, const RoomRequest& request)
      : context_(context), victims_(victims), request_(request), pass_(context.pass_for(request.pending)) {}

  bool run() {
    ClusterState& cluster = context_.cluster();
    const Workload& pending = context_.workloads()[request_.pending];
    const int64_t needed = context_.gang_gpu_milli(request_.pending);
    const int64_t whole_gpus = (needed + kMilliPerGpu - 1) / kMilliPerGpu;
    const auto budget = static_cast<int64_t>(
        std::floor(context_.options().max_evicted_gpu_ratio * static_cast<double>(whole_gpus * kMilliPerGpu)));
    Statement statement(cluster);
    int64_t evicted_milli = 0;
    std::vector<EvictedUnit> evicted;
    bool evicted_since_refresh = false;  // the caller refreshed before calling
    for (PodId pod : pending.gang()) {
      const PodSpec& spec = cluster.pod(pod);
      if (auto binding = context_.placer().find(cluster, spec, nullptr, pass_)) {
        context_.allocate(statement, pod, std::move(*binding));
        continue;
      }
      if (request_.refresh && evicted_since_refresh) request_.refresh();
      evicted_since_refresh = false;
      NodeChoice choice = best_node(spec, budget - evicted_milli);
      if (choice.node < 0) return give_up(statement);
      for (uint32_t index : choice.victims) {
        const VictimIndex::Unit& unit = victims_.unit(index);
        touched_.push_back(unit.unit.workload);
        EvictedUnit record{&unit, {}};
        for (PodId victim_pod : unit.pods) {
          if (!cluster.binding(victim_pod)) continue;  // taken already with the workload's extra
          record.pods.emplace_back(victim_pod, *cluster.binding(victim_pod));
          context_.evict(statement, victim_pod);
        }
        evicted_milli += unit.gpu_milli;
        evicted.push_back(std::move(record));
        evicted_since_refresh = true;
      }
      auto binding = context_.placer().find(cluster, spec, nullptr, pass_);
      if (!binding) return give_up(statement);
      context_.allocate(statement, pod, std::move(*binding));
    }
    // Put back every victim whose place is still free, the most valuable first (a workload's gang
    // before its extras, which may come back only to a running gang): none is evicted unless the
    // placed gang took its place.
    std::sort(evicted.begin(), evicted.end(), [](const EvictedUnit& a, const EvictedUnit& b) {
      if (a.unit->priority != b.unit->priority) return a.unit->priority > b.unit->priority;
      if (a.unit->unit.whole() != b.unit->unit.whole()) return a.unit->unit.whole();
      return a.unit->started_at < b.unit->started_at;
    });
    for (EvictedUnit& record : evicted) {
      const Statement::Checkpoint checkpoint = statement.checkpoint();
      if (!record.unit->unit.whole() && !context_.workloads().is_running(record.unit->unit.workload, cluster)) {
        if (request_.move_victims) return give_up(statement);  // its gang could not move: nothing happens
        continue;
      }
      bool restored = true;
      std::vector<PodId> unplaced;
      for (const auto& [pod, binding] : record.pods) {
        if (cluster.binding(pod)) continue;  // moved back already, with its workload's gang
        unplaced.push_back(pod);
        if (restored && binding_fits(cluster, pod, binding)) {
          context_.allocate(statement, pod, binding);
        } else {
          restored = false;
        }
      }
      if (!restored) {
        context_.rollback(statement, checkpoint);
        if (request_.move_victims &&
            !context_.place_gang(statement, unplaced, nullptr, context_.pass_for(record.unit->unit.workload)))
          return give_up(statement);
      }
    }
    const size_t first_eviction = context_.result().evictions.size();
    context_.commit(statement, request_.action, request_.pending);
    victims_.forget(context_.result().evictions, first_eviction);
    return true;
  }

 private:
  // Units evicted earlier in this statement stay in the index until it commits; a workload
  // touched once is not a victim twice in one attempt.
  bool touched(WorkloadId workload) const {
    return std::find(touched_.begin(), touched_.end(), workload) != touched_.end();
  }

  // Whether the unit, with the victims of its queue already chosen on this node, stays within
  // what its queue may lose; if so, counts it.
  bool within_allowance(const VictimIndex::Unit& unit) {
    const size_t keys = request_.give_keys.size();
    if (keys == 0) return true;
    if (taken_.size() != request_.give_allowance.size()) taken_.assign(request_.give_allowance.size(), 0);
    const size_t base = unit.queue * keys;
    for (size_t k = 0; k < keys; ++k) {
      const double amount = resource_at(unit.amount, request_.give_keys[k]);
      if (amount > 0 && taken_[base + k] + amount > request_.give_allowance[base + k]) return false;
    }
    for (size_t k = 0; k < keys; ++k) taken_[base + k] += resource_at(unit.amount, request_.give_keys[k]);
    taken_queues_.push_back(unit.queue);
    return true;
  }

  bool give_up(Statement& statement) {
    context_.rollback(statement, 0);
    return false;
  }

  NodeChoice best_node(const PodSpec& pod, int64_t budget) {
    const ClusterState& cluster = context_.cluster();
    const int node_count = cluster.node_count();
    const int64_t need = pod.gpu.pending_milli(context_.typical_device_memory());
    // The resources the queue rules compare for this workload (ResourceMeter::key_resources).
    const uint8_t key_mask =
        context_.gang_gpu_milli(request_.pending) > 0 ? VictimIndex::kHoldsGpu : VictimIndex::kHoldsCpuOrMemory;
    int candidates_left = kCandidateNodes;
    const int whole_gpus = pod.gpu.kind == GpuRequest::Kind::kWhole ? pod.gpu.whole_gpus : 0;
    NodeChoice best;
    NodeChoice choice;
    const NodeIndex start = victims_.next_start() % std::max(1, node_count);
    // The nodes to search, in order from `start` round the cluster.
    // Only the nodes of queues that may give, unless those are a good part of the cluster anyway;
    // either way in order from `start`, round the cluster.
    size_t listed = 0;
    accepted_flag_.assign(context_.tree().size(), request_.victim_queue ? 0 : 1);
    if (request_.victim_queue) {
      accepted_.clear();
      for (QueueIndex leaf : context_.tree().leaves()) {
        if (!request_.victim_queue(leaf)) continue;
        accepted_.push_back(leaf);
        accepted_flag_[leaf] = 1;
        listed += victims_.nodes_of(leaf).size();
      }
    }
    const bool listed_only = request_.victim_queue && listed < static_cast<size_t>(node_count) / 4;
    if (listed_only) {
      node_list_.clear();
      if (node_seen_.size() != static_cast<size_t>(node_count)) node_seen_.assign(static_cast<size_t>(node_count), 0);
      ++node_stamp_;
      for (QueueIndex leaf : accepted_) {
        for (NodeIndex node : victims_.nodes_of(leaf)) {
          if (node_seen_[static_cast<size_t>(node)] == node_stamp_) continue;
          node_seen_[static_cast<size_t>(node)] = node_stamp_;
          node_list_.push_back(node);
        }
      }
      std::sort(node_list_.begin(), node_list_.end());
      std::rotate(node_list_.begin(), std::lower_bound(node_list_.begin(), node_list_.end(), start), node_list_.end());
    }
    const size_t count = listed_only ? node_list_.size() : static_cast<size_t>(node_count);
    for (size_t step = 0; step < count; ++step) {
      const NodeIndex node = listed_only ? node_list_[step] : (start + static_cast<NodeIndex>(step)) % node_count;
      // Skip, without looking at a victim, a node where even evicting every unit of the queues
      // that may give would not free the GPUs the pod needs.
      if (need > 0) {
        int64_t reachable = 0;
        for (const VictimIndex::QueueGpus& held : victims_.gpus_by_queue_on(node)) {
          if (!accepted_flag_[held.queue]) continue;
          if (request_.give_cap_milli.empty()) {
            reachable += held.gpu_milli;
          } else if (held.smallest_unit_milli <= request_.give_cap_milli[held.queue]) {
            // No unit larger than what its queue may lose can be taken.
            reachable += std::min(held.gpu_milli, request_.give_cap_milli[held.queue]);
          }
        }
        if (reachable < need && reachable + cluster.node_state(node).gpu_free_total() < need) continue;
      }
      const auto& units = victims_.on_node(node);
      if (units.empty() || !pass_.admits(cluster.reservation(node))) continue;
      const NodeSpec& spec = cluster.node_spec(node);
      if (spec.gpu_count() < whole_gpus || check_static(spec, pod) != Predicate::kFits) continue;
      scratch_ = cluster.node_state(node);
      choice.node = node;
      choice.top_priority = INT_MIN;
      choice.gpu_milli = 0;
      choice.pods = 0;
      choice.victims.clear();
      bool fits = false;
      released_.clear();
      for (QueueIndex queue : taken_queues_) {
        for (size_t k = 0; k < request_.give_keys.size(); ++k) taken_[queue * request_.give_keys.size() + k] = 0;
      }
      taken_queues_.clear();
      for (uint32_t index : units) {
        // A unit of a queue that may give nothing can be taken only if it holds none of the key
        // resources; the filter decides the rest.
        if (victims_.gone(index) || (!accepted_flag_[victims_.queue_of(index)] && (victims_.holds(index) & key_mask)))
          continue;
        const VictimIndex::Unit& unit = victims_.unit(index);
        if (unit.unit.workload == request_.pending || touched(unit.unit.workload) ||
            (request_.eligible && !request_.eligible(unit)))
          continue;
        if (!within_allowance(unit)) continue;
        for (size_t member = 0; member < unit.pods.size(); ++member) {
          // A workload's extra may come before its whole unit, which holds that pod too.
          const PodId victim_pod = unit.pods[member];
          if (std::find(released_.begin(), released_.end(), victim_pod) != released_.end()) continue;
          released_.push_back(victim_pod);
          const Binding& binding = unit.bindings[member];
          if (binding.node == node) {
            scratch_.free += unit.requests[member];
            for (int16_t device : binding.devices) {
              scratch_.gpu_used_milli[static_cast<size_t>(device)] =
                  static_cast<int16_t>(scratch_.gpu_used_milli[static_cast<size_t>(device)] - binding.milli_per_device);
            }
          }
          ++choice.pods;
        }
        choice.top_priority = std::max(choice.top_priority, unit.priority);
        choice.gpu_milli += unit.gpu_milli;
        choice.victims.push_back(index);
        // More victims only raise the cost: stop once over budget or already worse than the best.
        if (choice.gpu_milli > budget) break;
        if (best.node >= 0 && (choice.top_priority > best.top_priority ||
                               (choice.top_priority == best.top_priority && choice.gpu_milli > best.gpu_milli)))
          break;
        if (check_capacity(spec, scratch_, pod) == Predicate::kFits) {
          fits = true;
          break;
        }
      }
      if (!fits) continue;
      --candidates_left;
      if (choice.better_than(best)) best = choice;
      if (candidates_left == 0) break;
      // Nothing beats victims of the lowest priority running that free no more than the pod needs
      // (or one GPU, for a fraction: the smallest whole-GPU victim).
      if (best.top_priority <= victims_.min_priority() && best.gpu_milli <= std::max<int64_t>(need, kMilliPerGpu))
        break;
    }
    if (best.node >= 0) victims_.next_start() = (best.node + 1) % std::max(1, node_count);
    return best;
  }

  CycleContext& context_;
  VictimIndex& victims_;
  const RoomRequest& request_;
  const PlacementPass pass_;  // the reserved nodes the pending workload may use
  NodeState scratch_;
  std::vector<PodId> released_;
  std::vector<WorkloadId> touched_;
  std::vector<NodeIndex> node_list_;
  std::vector<QueueIndex> accepted_;
  std::vector<char> accepted_flag_;
  std::vector<double> taken_;             // per queue × key: chosen so far on the current node
  std::vector<QueueIndex> taken_queues_;  // the queues with entries in taken_ to clear
  std::vector<uint32_t> node_seen_;
  uint32_t node_stamp_ = 0;
};

}  // namespace

bool make_room(CycleContext& context, VictimIndex& victims, const RoomRequest& request) {
  return RoomSearch(context, victims, request).run();
}

}  // namespace tessera
