#include "scheduler/make_room.h"

#include <algorithm>
#include <cmath>

#include "policy/feasibility.h"

namespace tessera {

namespace {

struct Candidate {
  VictimUnit unit;
  int priority = 0;
  double started_at = 0;
  int64_t gpu_milli = 0;  // held by the whole unit, on every node
};

struct NodeChoice {
  NodeIndex node = -1;
  int top_priority = 0;
  int64_t gpu_milli = 0;
  int pods = 0;
  std::vector<Candidate> victims;

  bool better_than(const NodeChoice& other) const {
    if (other.node < 0) return true;
    if (top_priority != other.top_priority) return top_priority < other.top_priority;
    if (gpu_milli != other.gpu_milli) return gpu_milli < other.gpu_milli;
    if (pods != other.pods) return pods < other.pods;
    return node < other.node;
  }
};

struct EvictedUnit {
  Candidate candidate;
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

class RoomSearch {
 public:
  RoomSearch(CycleContext& context, const RoomRequest& request) : context_(context), request_(request) {}

  bool run() {
    WorkloadSet& workloads = context_.workloads();
    ClusterState& cluster = context_.cluster();
    const Workload& pending = workloads[request_.pending];
    const int64_t needed = context_.gang_gpu_milli(request_.pending);
    const int64_t whole_gpus = (needed + kMilliPerGpu - 1) / kMilliPerGpu;
    const auto budget = static_cast<int64_t>(
        std::floor(context_.options().max_evicted_gpu_ratio * static_cast<double>(whole_gpus * kMilliPerGpu)));
    Statement statement(cluster);
    int64_t evicted_milli = 0;
    std::vector<EvictedUnit> evicted;
    for (PodId pod : pending.gang()) {
      const PodSpec& spec = cluster.pod(pod);
      if (auto binding = context_.placer().find(cluster, spec)) {
        context_.allocate(statement, pod, std::move(*binding));
        continue;
      }
      NodeChoice choice = best_node(spec, budget - evicted_milli);
      if (choice.node < 0) return give_up(statement);
      for (const Candidate& victim : choice.victims) {
        EvictedUnit unit{victim, {}};
        for (PodId victim_pod : context_.unit_pods(victim.unit)) {
          unit.pods.emplace_back(victim_pod, *cluster.binding(victim_pod));
          context_.evict(statement, victim_pod);
        }
        evicted_milli += victim.gpu_milli;
        evicted.push_back(std::move(unit));
      }
      auto binding = context_.placer().find(cluster, spec);
      if (!binding) return give_up(statement);
      context_.allocate(statement, pod, std::move(*binding));
    }
    // Put back every victim whose place is still free, the most valuable first: none is evicted
    // unless the placed gang took its place.
    // A workload's gang before its extras, which may come back only to a running gang.
    std::sort(evicted.begin(), evicted.end(), [](const EvictedUnit& a, const EvictedUnit& b) {
      if (a.candidate.priority != b.candidate.priority) return a.candidate.priority > b.candidate.priority;
      if (a.candidate.unit.whole() != b.candidate.unit.whole()) return a.candidate.unit.whole();
      return a.candidate.started_at < b.candidate.started_at;
    });
    for (EvictedUnit& unit : evicted) {
      const Statement::Checkpoint checkpoint = statement.checkpoint();
      if (!unit.candidate.unit.whole() && !workloads.is_running(unit.candidate.unit.workload, cluster)) {
        if (request_.move_victims) return give_up(statement);  // its gang could not move: nothing happens
        continue;
      }
      bool restored = true;
      for (const auto& [pod, binding] : unit.pods) {
        if (!binding_fits(cluster, pod, binding)) {
          restored = false;
          break;
        }
        context_.allocate(statement, pod, binding);
      }
      if (!restored) {
        context_.rollback(statement, checkpoint);
        if (request_.move_victims) {
          std::vector<PodId> pods;
          for (const auto& entry : unit.pods) pods.push_back(entry.first);
          if (!context_.place_gang(statement, pods)) return give_up(statement);
        }
      }
    }
    context_.commit(statement, request_.action, request_.pending);
    return true;
  }

 private:
  bool give_up(Statement& statement) {
    context_.rollback(statement, 0);
    return false;
  }

  // The unit a running pod belongs to when evicted: its elastic extra alone, or its workload.
  std::optional<Candidate> candidate_for(PodId pod) {
    const WorkloadSet& workloads = context_.workloads();
    const WorkloadId owner = workloads.workload_of(pod);
    if (owner < 0 || owner == request_.pending) return std::nullopt;
    const Workload& workload = workloads[owner];
    const bool extra = workloads.position_of(pod) >= workload.min_member();
    const VictimUnit unit{owner, extra ? pod : PodId{-1}};
    if (!extra) {
      if (whole_seen_.size() < workloads.size()) whole_seen_.resize(workloads.size(), 0);
      if (whole_seen_[static_cast<size_t>(owner)] == stamp_) return std::nullopt;
      whole_seen_[static_cast<size_t>(owner)] = stamp_;
    }
    if (!workload.spec.preemptible || !workloads.is_running(owner, context_.cluster())) return std::nullopt;
    const ResourceVector amount = context_.unit_amount(unit);
    if (!request_.eligible(unit, amount)) return std::nullopt;
    int64_t gpu_milli = 0;
    for (PodId unit_pod : context_.unit_pods(unit)) gpu_milli += context_.cluster().binding(unit_pod)->gpu_milli();
    return Candidate{unit, workload.spec.priority, workload.started_at, gpu_milli};
  }

  NodeChoice best_node(const PodSpec& pod, int64_t budget) {
    const ClusterState& cluster = context_.cluster();
    NodeChoice best;
    std::vector<Candidate> victims;
    for (NodeIndex node = 0; node < cluster.node_count(); ++node) {
      const NodeSpec& spec = cluster.node_spec(node);
      if (check_static(spec, pod) != Predicate::kFits) continue;
      ++stamp_;
      victims.clear();
      for (PodId resident : context_.pods_on(node)) {
        const auto& binding = cluster.binding(resident);
        if (!binding || binding->node != node) continue;
        if (auto candidate = candidate_for(resident)) {
          // An extra listed twice (bound, moved away and back) counts once.
          if (!candidate->unit.whole() && std::any_of(victims.begin(), victims.end(), [&](const Candidate& other) {
                return other.unit.extra == candidate->unit.extra;
              }))
            continue;
          victims.push_back(*candidate);
        }
      }
      if (victims.empty()) continue;
      std::sort(victims.begin(), victims.end(), [](const Candidate& a, const Candidate& b) {
        if (a.priority != b.priority) return a.priority < b.priority;
        if (a.unit.whole() != b.unit.whole()) return !a.unit.whole();          // elastic extras first
        if (a.started_at != b.started_at) return a.started_at > b.started_at;  // youngest first
        return a.unit.workload > b.unit.workload;
      });
      scratch_ = cluster.node_state(node);
      NodeChoice choice;
      choice.node = node;
      for (const Candidate& victim : victims) {
        for (PodId victim_pod : context_.unit_pods(victim.unit)) {
          const Binding& binding = *cluster.binding(victim_pod);
          if (binding.node == node) scratch_.release(cluster.pod(victim_pod), binding);
          ++choice.pods;
        }
        choice.top_priority = choice.victims.empty() ? victim.priority : std::max(choice.top_priority, victim.priority);
        choice.gpu_milli += victim.gpu_milli;
        choice.victims.push_back(victim);
        if (choice.gpu_milli > budget) break;
        if (check_capacity(spec, scratch_, pod) == Predicate::kFits) {
          if (choice.better_than(best)) best = std::move(choice);
          break;
        }
      }
    }
    return best;
  }

  CycleContext& context_;
  const RoomRequest& request_;
  NodeState scratch_;
  std::vector<uint32_t> whole_seen_;
  uint32_t stamp_ = 0;
};

}  // namespace

bool make_room(CycleContext& context, const RoomRequest& request) { return RoomSearch(context, request).run(); }

}  // namespace tessera
