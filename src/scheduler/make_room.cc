#include "scheduler/make_room.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "policy/feasibility.h"
#include "scheduler/domain_plans.h"

namespace tessera {

namespace {

struct NodeChoice {
  NodeIndex node = -1;
  int top_priority = 0;
  int64_t gpu_milli = 0;  // evicted or moved
  int pods = 0;
  std::vector<uint32_t> victims;
  std::vector<char> moving;   // per victim: to be moved, not evicted (RoomRequest::move_others)
  int64_t evicted_milli = 0;  // of gpu_milli, what is evicted for good

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
  bool move = false;                            // must be re-placed in the statement
  int depth = 0;  // 0: evicted to make room for the pending gang; n: for a unit of depth n - 1 to move in
};

// Commits a statement that made room for the pending workload: the cycle's books, and the units
// it evicted leave the index.
void commit_room(CycleContext& context, VictimIndex& victims, const RoomRequest& request, Statement& statement) {
  const size_t first_eviction = context.result().evictions.size();
  context.commit(statement, request.action, request.pending);
  victims.forget(context.result().evictions, first_eviction);
}

// What a trial that served the gang did, in order, and where it left the next search's start:
// searched again from the same state, its plan would do the same (docs/topology.md, step 4).
struct TrialOutcome {
  std::vector<Operation> operations;
  NodeIndex next_start = 0;
};

// Commits the trial's outcome as the search again of its plan would have.
void replay(CycleContext& context, VictimIndex& victims, const RoomRequest& request, const TrialOutcome& outcome) {
  Statement statement = context.open_statement();
  for (const Operation& operation : outcome.operations) {
    if (operation.kind == Operation::Kind::kEvict) {
      statement.evict(operation.pod);
    } else {
      statement.allocate(operation.pod, operation.binding);
    }
  }
  commit_room(context, victims, request, statement);
  victims.next_start() = outcome.next_start;
}

// Consolidation for a gang held to domains: a unit moved out of the domain may go where moving
// others makes room, and those only into free room (a chain of at most this many moves).
constexpr int kMaxMoveChain = 2;

// Like the Kubernetes scheduler's preemption, the search compares a bounded number of nodes that
// could take the pod and keeps the cheapest: 100 (all of them in a smaller cluster). Comparing
// 10% of 10,000 nodes for each of thousands of reclaims per cycle costs seconds and rarely finds
// a cheaper node.
constexpr int kCandidateNodes = 100;

class RoomSearch {
 public:
  // `trial`: the search counts its evictions and rolls back instead of committing, unless they
  // are `keep_within` or fewer (kept(): it committed).
  RoomSearch(CycleContext& context, VictimIndex& victims, const RoomRequest& request, RoomScope scope = {},
             bool trial = false, int keep_within = -1)
      : scope_(std::move(scope)),
        trial_(trial),
        keep_within_(keep_within),
        context_(context),
        victims_(victims),
        request_(request),
        pass_(context.pass_for(request.pending)),
        pending_queue_(context.workloads()[request.pending].queue),
        pending_priority_(context.workloads()[request.pending].spec.priority) {}

  // After a trial run that succeeded: the units it evicted for good, and per queue what they were.
  int trial_evictions() const { return trial_evictions_; }
  const std::vector<TopologyRoomFinding::Victims>& trial_victims() const { return trial_victims_; }
  bool kept() const { return kept_; }
  // After a trial that served the gang and rolled back: what it did (replay commits it).
  TrialOutcome& outcome() { return outcome_; }
  // Whether the search refreshed the request's allowances: a trial that did, once rolled back,
  // leaves them as its evictions had made them, not as the cluster now is.
  bool refreshed() const { return refreshed_; }

  bool run() {
    ClusterState& cluster = context_.cluster();
    const Workload& pending = context_.workloads()[request_.pending];
    const int64_t needed = context_.gang_gpu_milli(request_.pending);
    const int64_t whole_gpus = (needed + kMilliPerGpu - 1) / kMilliPerGpu;
    const auto budget = static_cast<int64_t>(
        std::floor(context_.options().max_evicted_gpu_ratio * static_cast<double>(whole_gpus * kMilliPerGpu)));
    Statement statement = context_.open_statement();
    int64_t evicted_milli = 0;
    std::vector<EvictedUnit> evicted;
    bool evicted_since_refresh = false;  // the caller refreshed before calling
    for (PodId pod : pending.gang()) {
      const PodSpec& spec = cluster.pod(pod);
      domain_ = scope_.of(pod);
      if (auto binding = find_for_pending(cluster, spec)) {
        statement.allocate(pod, std::move(*binding));
        continue;
      }
      if (evicted_since_refresh) refresh();
      evicted_since_refresh = false;
      NodeChoice choice = best_node(spec, budget - evicted_milli, request_.move_others);
      if (choice.node < 0) return give_up(statement);
      evict_choice(statement, choice, evicted, evicted_milli);
      evicted_since_refresh = true;
      auto binding = find_for_pending(cluster, spec);
      if (!binding) return give_up(statement);
      statement.allocate(pod, std::move(*binding));
    }
    // Put back every victim whose place is still free, the most valuable first (a workload's gang
    // before its extras, which may come back only to a running gang): none is evicted unless the
    // placed gang took its place.
    std::sort(evicted.begin(), evicted.end(), [](const EvictedUnit& a, const EvictedUnit& b) {
      if (a.unit->priority != b.unit->priority) return a.unit->priority > b.unit->priority;
      if (a.unit->unit.whole() != b.unit->unit.whole()) return a.unit->unit.whole();
      return a.unit->started_at < b.unit->started_at;
    });
    // (Indexed: making room for a moved unit may evict more, which is put back too if it can be.)
    for (size_t next = 0; next < evicted.size(); ++next) {
      const Statement::Checkpoint checkpoint = statement.checkpoint();
      const bool move = request_.move_victims || evicted[next].move;
      const WorkloadId owner = evicted[next].unit->unit.workload;
      if (!evicted[next].unit->unit.whole() && !context_.workloads().is_running(owner, cluster)) {
        if (move) return give_up(statement);  // its gang could not move: nothing happens
        continue;
      }
      bool restored = true;
      std::vector<PodId> unplaced;
      for (const auto& [pod, binding] : evicted[next].pods) {
        if (cluster.binding(pod)) continue;  // moved back already, with its workload's gang
        unplaced.push_back(pod);
        if (restored && cluster.fits(pod, binding)) {
          statement.allocate(pod, binding);
        } else {
          restored = false;
        }
      }
      if (restored) continue;
      statement.rollback(checkpoint);
      if (!move) continue;
      const PlacementPass pass = context_.pass_for(owner);
      if (context_.place_gang(statement, unplaced, nullptr, pass)) continue;
      const int depth = evicted[next].depth;
      const bool chain = request_.move_victims && !scope_.anywhere() && depth + 1 < kMaxMoveChain;
      if (!evicted[next].move && !chain) return give_up(statement);
      // A pod-by-pod search cannot keep a unit's topology constraints, and room made for a gang
      // within one domain evicts nothing for good outside it: there a unit moves only into free
      // room, or (a chain) into room other moves make.
      if ((!scope_.anywhere() && !chain) || context_.gang_topology(owner)) return give_up(statement);
      // Room for the moved unit, pod by pod, by evictions under the rule (moves, for consolidation).
      for (PodId pod : unplaced) {
        const PodSpec& spec = cluster.pod(pod);
        if (auto binding = context_.placer().find(cluster, spec, nullptr, pass)) {
          statement.allocate(pod, std::move(*binding));
          continue;
        }
        refresh();
        NodeChoice choice = best_node(spec, budget - evicted_milli, false, owner, pass);
        if (choice.node < 0) return give_up(statement);
        evict_choice(statement, choice, evicted, evicted_milli, depth + 1);
        auto binding = context_.placer().find(cluster, spec, nullptr, pass);
        if (!binding) return give_up(statement);
        statement.allocate(pod, std::move(*binding));
      }
    }
    if (trial_) {
      trial_evictions_ = 0;
      trial_victims_.clear();
      for (const EvictedUnit& unit : evicted) {
        if (std::all_of(unit.pods.begin(), unit.pods.end(),
                        [&cluster](const auto& entry) { return cluster.binding(entry.first).has_value(); }))
          continue;
        ++trial_evictions_;
        count_victim(*unit.unit);
      }
      if (trial_evictions_ > keep_within_) {
        outcome_ = {statement.operations(), victims_.next_start()};
        return !give_up(statement);
      }
      kept_ = true;
    }
    commit_room(context_, victims_, request_, statement);
    return true;
  }

 private:
  void refresh() {
    if (!request_.refresh) return;
    request_.refresh();
    refreshed_ = true;
  }

  void count_victim(const VictimIndex::Unit& unit) {
    auto entry =
        std::find_if(trial_victims_.begin(), trial_victims_.end(),
                     [&unit](const TopologyRoomFinding::Victims& victims) { return victims.queue == unit.queue; });
    if (entry == trial_victims_.end()) entry = trial_victims_.insert(entry, {unit.queue});
    ++entry->workloads;
    entry->gpus += static_cast<double>(unit.gpu_milli) / kMilliPerGpu;
    entry->not_lower += unit.priority >= pending_priority_;
  }

  // Units evicted earlier in this statement stay in the index until it commits; a workload
  // touched once is not a victim twice in one attempt.
  bool touched(WorkloadId workload) const {
    return std::find(touched_.begin(), touched_.end(), workload) != touched_.end();
  }

  // What the unit's queue loses of the k-th key resource when it is taken: its amount, and for
  // the GPU resource in limit terms its pods' burst too.
  double given(uint32_t index, size_t k) const {
    const ResourceId resource = request_.give_keys[k];
    const double amount = victims_.amount(index, resource);
    return request_.limits && resource == request_.limits->gpu ? amount + victims_.burst_gpus(index) : amount;
  }

  // Whether the unit, with the victims of its queue already chosen on this node, stays within
  // what its queue may lose; if so, counts it. What is counted is never negative, so this also
  // holds the unit alone to the allowance.
  bool within_allowance(uint32_t index) {
    const size_t keys = request_.give_keys.size();
    if (keys == 0) return true;
    if (taken_.size() != request_.give_allowance.size()) {
      taken_.assign(request_.give_allowance.size(), 0);
      taken_on_.assign(taken_.size() / keys, 0);
    }
    lost_.resize(keys);
    const QueueIndex queue = victims_.queue_of(index);
    const size_t base = queue * keys;
    const bool fresh = taken_on_[queue] != node_visit_;  // nothing of the queue chosen on this node yet
    for (size_t k = 0; k < keys; ++k) {
      lost_[k] = given(index, k);
      const double taken = fresh ? 0.0 : taken_[base + k];
      if (lost_[k] > 0 && taken + lost_[k] > request_.give_allowance[base + k]) return false;
    }
    for (size_t k = 0; k < keys; ++k) taken_[base + k] = (fresh ? 0.0 : taken_[base + k]) + lost_[k];
    taken_on_[queue] = node_visit_;
    return true;
  }

  // Whether the request's rule lets the search take a leaf queue's units at all (kAny: every
  // queue, without listing nodes).
  bool queue_may_give(QueueIndex leaf) const {
    switch (request_.victims) {
      case VictimRule::kAny:
        return true;
      case VictimRule::kOtherQueues: {
        if (leaf == pending_queue_) return false;
        const size_t keys = request_.give_keys.size();
        for (size_t k = 0; k < keys; ++k) {
          if (request_.give_allowance[leaf * keys + k] > 0) return true;
        }
        return false;
      }
      case VictimRule::kOwnQueueLowerPriority:
      case VictimRule::kOwnQueue:
        return leaf == pending_queue_;
    }
    return false;
  }

  // Whether the rule lets the search take this unit, by its queue and priority. For kOtherQueues
  // what the unit would cost its queue is checked by within_allowance, which follows.
  bool eligible(uint32_t index) const {
    const QueueIndex queue = victims_.queue_of(index);
    switch (request_.victims) {
      case VictimRule::kAny:
        return true;
      case VictimRule::kOtherQueues:
        return queue != pending_queue_;
      case VictimRule::kOwnQueueLowerPriority:
        return queue == pending_queue_ && victims_.unit(index).priority < pending_priority_;
      case VictimRule::kOwnQueue:
        return queue == pending_queue_;
    }
    return false;
  }

  // One pod's search for a node: what it needs and under which terms.
  struct NodeQuest {
    const PodSpec& pod;
    int64_t need;  // GPU milli
    // Whether the bounds of units as they stand now (VictimGpus) may prune the search: the pod
    // needs `need` on any node (not so for a GPU-memory request) and the options allow it.
    bool live_bounds;
    int whole_gpus;  // devices a whole-GPU pod asks for; 0 otherwise
    int64_t budget;  // GPU milli that may be evicted for good
    bool moves;      // units the rule may not take may move
    WorkloadId for_workload;
    const PlacementPass& pass;
    uint8_t key_mask;  // VictimIndex::kHoldsGpu or kHoldsCpuOrMemory

    // A pod that asks for no GPU, of a workload whose queue rules compare CPU and memory: elsewhere
    // than on the nodes of queues that may give, only units holding neither may be taken, and
    // evicting those frees nothing it needs (it fits nowhere as things stand).
    bool only_queue_nodes() const { return live_bounds && need == 0 && key_mask == VictimIndex::kHoldsCpuOrMemory; }
  };

  // Whether evicting every unit the node holds of queues that may give (at most what each may
  // lose), with the node's free GPUs, could free the GPUs the pod needs. `reach_cap_` holds, per
  // queue, the most it may give (INT64_MIN for a queue that may give nothing). The cheap bounds
  // come first: most nodes a search visits are settled by them.
  bool may_free(const ClusterState& cluster, NodeIndex node, const NodeQuest& quest, const NodeChoice& best) const {
    const int64_t free = cluster.gpu_free_milli(node);
    if (free >= quest.need) return true;
    // A GPU-memory request needs more or less than `need` on devices larger or smaller than the
    // typical one: only the bound as indexed is read for it (gone units count), as ever.
    if (!quest.live_bounds) {
      if (quest.moves) return victims_.gpus_held_on(node) + free >= quest.need;
      return may_free_as_indexed(node, quest.need - free);
    }
    if (quest.moves) return victims_.gpus().held_on(node) + free >= quest.need;
    return may_free_now(node, quest.need - free, victim_ceiling(best), quest.budget, best);
  }

  bool may_free_as_indexed(NodeIndex node, int64_t short_by) const {
    if (victims_.gpus_held_on(node) < short_by) return false;
    int64_t reachable = 0;
    for (const VictimIndex::QueueHolds& held : victims_.held_by_queue_on(node)) {
      // No unit larger than what its queue may lose can be taken.
      const int64_t cap = reach_cap_[held.queue];
      const int64_t take = std::min(held.gpu_milli, cap);
      reachable += held.smallest_unit_milli <= cap ? take : 0;
    }
    return reachable >= short_by;
  }

  // Counting only units not gone, none above `ceiling` in priority (a costlier victim makes
  // choose_victims turn the node down), none in entries whose every unit is larger than what its
  // queue may lose or than the budget (take_cap_), and no more than the budget in all. Nor units
  // of the best node's top priority that alone hold more GPUs than its victims: with one of them
  // the node costs more.
  bool may_free_now(NodeIndex node, int64_t short_by, int ceiling, int64_t budget, const NodeChoice& best) const {
    if (victims_.gpus().held_on(node) < short_by || budget < short_by) return false;
    // Where the givers are chosen by take_cap_ and merged by the ceiling's levels (by_gpu_nodes_),
    // what they hold there bounds the sum below from above: every entry it counts is of a chosen
    // list (its smallest unit within the cap) and of a level no higher than the ceiling's.
    if (by_gpu_nodes_ && victims_.gpus().chosen_held_on(node, merged_levels_) < short_by) return false;
    const int best_top = best.node >= 0 ? best.top_priority : INT_MAX;
    const int64_t best_gpu_milli = best.node >= 0 ? best.gpu_milli : INT64_MAX;
    int64_t reachable = 0;
    const std::span<const VictimGpus::Entry> held = victims_.gpus().on(node);
    for (size_t i = 0; i < held.size();) {
      const QueueIndex queue = held[i].queue;
      const int64_t cap = take_cap_[queue];
      int64_t gpu_milli = 0;
      for (; i < held.size() && held[i].queue == queue; ++i) {
        const VictimGpus::Entry& entry = held[i];
        if (entry.priority > ceiling || entry.smallest_unit_milli > cap) continue;
        if (entry.priority == best_top && entry.smallest_unit_milli > best_gpu_milli) continue;
        gpu_milli += entry.gpu_milli;
      }
      if (gpu_milli > 0) reachable += std::min(gpu_milli, cap);
      if (reachable >= short_by) return true;  // the rest only adds
    }
    return false;
  }

  // check_static, once per node class where the classes tell the pod's selector apart.
  bool fits_statically(const ClusterState& cluster, NodeIndex node, const PodSpec& pod) {
    if (!by_class_) return check_static(cluster.node_spec(node), pod) == Predicate::kFits;
    int8_t& fits = class_fits_[static_cast<size_t>(cluster.node_class(node))];
    if (fits == kNotChecked) fits = check_static(cluster.node_spec(node), pod) == Predicate::kFits ? 1 : 0;
    return fits == 1;
  }

  // The highest priority a victim may have: below the pending workload's where the rule says so,
  // and no higher than the best node's victims once there is one (a costlier victim makes
  // choose_victims turn the node down).
  int victim_ceiling(const NodeChoice& best) const {
    int ceiling = request_.victims == VictimRule::kOwnQueueLowerPriority && pending_priority_ > INT_MIN
                      ? pending_priority_ - 1
                      : INT_MAX;
    if (best.node >= 0) ceiling = std::min(ceiling, best.top_priority);
    return ceiling;
  }

  // The nodes where queues that may give have units holding GPUs of priority `ceiling` or lower
  // (by levels: VictimGpus::nodes_of), as bits: where may_free_now can find any. Merged again
  // only when the levels do.
  const uint64_t* gpu_nodes_within(int ceiling) {
    const VictimGpus& gpus = victims_.gpus();
    const size_t levels = gpus.levels_at_most(ceiling);
    const size_t words = (static_cast<size_t>(context_.cluster().node_count()) + 63) / 64;
    if (levels != merged_levels_) {
      gpu_nodes_.assign(words, 0);
      for (size_t level = 0; level < levels; ++level) {
        const uint64_t* bits = gpus.nodes_of(level);
        for (size_t word = 0; word < words; ++word) gpu_nodes_[word] |= bits[word];
      }
      merged_levels_ = levels;
    }
    return gpu_nodes_.data();
  }

  static bool has_bit(const uint64_t* bits, NodeIndex node) {
    return (bits[static_cast<size_t>(node) / 64] >> (static_cast<size_t>(node) % 64) & 1) != 0;
  }

  // Into node_list_: the nodes of `bits`, in node order from `start` round the cluster.
  void list_nodes(const uint64_t* bits, size_t node_count, size_t start) {
    node_list_.clear();
    append_listed(bits, start, node_count);
    append_listed(bits, 0, start);
  }

  // The nodes of `bits` in [from, to), in order.
  void append_listed(const uint64_t* listed, size_t from, size_t to) {
    for (size_t word = from / 64; word * 64 < to; ++word) {
      for (uint64_t bits = listed[word]; bits != 0; bits &= bits - 1) {
        const size_t node = word * 64 + static_cast<size_t>(std::countr_zero(bits));
        if (node >= from && node < to) node_list_.push_back(static_cast<NodeIndex>(node));
      }
    }
  }

  // A node for a pod of the pending gang: within the domain, where the search has one.
  std::optional<Binding> find_for_pending(const ClusterState& cluster, const PodSpec& spec) {
    if (domain_.empty()) return context_.placer().find(cluster, spec, nullptr, pass_);
    return context_.placer().find_among(cluster, spec, domain_, nullptr, pass_);
  }

  bool give_up(Statement& statement) {
    statement.rollback(0);
    return false;
  }

  // A workload's whole unit and its extra chosen on one node move together or are both taken:
  // a whole unit moved while its extra is lost would leave the workload running without it,
  // unaccounted.
  void move_together(NodeChoice& choice) const {
    for (size_t i = 0; i < choice.victims.size(); ++i) {
      if (!choice.moving[i]) continue;
      const WorkloadId workload = victims_.workload_of(choice.victims[i]);
      for (size_t j = 0; j < choice.victims.size(); ++j) {
        if (choice.moving[j] || victims_.workload_of(choice.victims[j]) != workload) continue;
        choice.moving[j] = 1;
        choice.evicted_milli -= victims_.unit(choice.victims[j]).gpu_milli;
      }
    }
  }

  // Evicts the chosen victims in the statement, recording each (and whether it is to move).
  void evict_choice(Statement& statement, const NodeChoice& choice, std::vector<EvictedUnit>& evicted,
                    int64_t& evicted_milli, int depth = 0) {
    const ClusterState& cluster = context_.cluster();
    for (size_t i = 0; i < choice.victims.size(); ++i) {
      const uint32_t index = choice.victims[i];
      const VictimIndex::Unit& unit = victims_.unit(index);
      touched_.push_back(unit.unit.workload);
      EvictedUnit record{&unit, {}, choice.moving[i] != 0, depth};
      for (const VictimIndex::Member& member : victims_.members(index)) {
        const PodId victim_pod = member.pod;
        if (!cluster.binding(victim_pod)) continue;  // taken already with the workload's extra
        record.pods.emplace_back(victim_pod, *cluster.binding(victim_pod));
        statement.evict(victim_pod);
      }
      if (!record.move) evicted_milli += unit.gpu_milli;
      evicted.push_back(std::move(record));
    }
  }

  // The cheapest node for the pod and its victims. With `moves`, units the rule may not take
  // may be chosen to move. `for_workload` and `pass`: whose pod it is (the pending workload's, or
  // a moved unit's, which must not displace the pending workload's pods or itself).
  NodeChoice best_node(const PodSpec& pod, int64_t budget, bool moves) {
    return best_node(pod, budget, moves, request_.pending, pass_);
  }
  NodeChoice best_node(const PodSpec& pod, int64_t budget, bool moves, WorkloadId for_workload,
                       const PlacementPass& pass) {
    const ClusterState& cluster = context_.cluster();
    const int node_count = cluster.node_count();
    const NodeQuest quest{
        pod, pod.gpu.pending_milli(context_.typical_device_memory()),
        context_.options().prune_victim_search && pod.gpu.kind != GpuRequest::Kind::kMemory,
        pod.gpu.kind == GpuRequest::Kind::kWhole ? pod.gpu.whole_gpus : 0, budget, moves, for_workload, pass,
        // The resources the queue rules compare for this workload (ResourceMeter::key_resources).
        context_.gang_gpu_milli(request_.pending) > 0 ? VictimIndex::kHoldsGpu : VictimIndex::kHoldsCpuOrMemory};
    const NodeIndex start = victims_.next_start() % std::max(1, node_count);
    // Victims of a moved unit's pod may be anywhere; those of the pending gang only in its domain,
    // whose nodes alone are visited.
    const bool in_domain_only = !domain_.empty() && for_workload == request_.pending;
    const SearchScope scope = scope_search(quest, start, !in_domain_only);
    by_class_ = cluster.distinguishes_selector_of(pod);
    class_fits_.assign(by_class_ ? static_cast<size_t>(cluster.node_class_count()) : 0, kNotChecked);
    int candidates_left = kCandidateNodes;
    NodeChoice best;
    NodeChoice choice;
    // For a GPU pod, nodes where no queue that may give has GPUs in victims no costlier than the
    // best node's can serve only from their free GPUs (may_free).
    const bool by_gpu_nodes = scope.marks && quest.need > 0 && quest.live_bounds;
    by_gpu_nodes_ = by_gpu_nodes;
    merged_levels_ = kNotMerged;  // the queues that may give changed, maybe
    const uint64_t* skip_unless = by_gpu_nodes ? gpu_nodes_within(victim_ceiling(best)) : scope.of_queues;
    checked_top_ = INT_MIN;
    checked_gpu_milli_ = -1;
    const bool only_queue_nodes = quest.only_queue_nodes();
    // Off the givers' GPU marks, what a GPU workload may take holds no GPU there (for another,
    // units of any queue holding no CPU or memory may be taken too).
    const bool by_gpus_only = by_gpu_nodes && quest.key_mask == VictimIndex::kHoldsGpu;
    auto visit = [&](NodeIndex node) {  // true: the search is over
      if (skip_unless && !has_bit(skip_unless, node)) {
        if (only_queue_nodes || cluster.gpu_free_milli(node) < quest.need) return false;
        // No unit holding GPUs here may be taken (none of the givers' within the ceiling): for a
        // GPU workload only units whose pods here hold none can be, and without them the node
        // cannot serve.
        if (by_gpus_only && !fits_beside_pods_without_gpus(cluster, node, quest.pod)) return false;
      }
      if (!may_serve(cluster, node, quest, best)) return false;
      if (!choose_victims(cluster, node, quest, best, choice)) return false;
      if (moves) move_together(choice);
      --candidates_left;
      if (choice.better_than(best)) {
        best = choice;
        if (by_gpu_nodes) skip_unless = gpu_nodes_within(victim_ceiling(best));
      }
      return candidates_left == 0 || unbeatable(best, quest.need) || cheapest_possible(best, quest);
    };
    if (in_domain_only) {
      for (NodeIndex node : domain_) {
        if (visit(node)) break;
      }
    } else if (scope.listed_only) {
      for (NodeIndex node : node_list_) {
        if (visit(node)) break;
      }
    } else if (skip_unless && (quest.need > 0 || only_queue_nodes)) {
      // Only nodes of skip_unless or (for a GPU pod) with GPUs free can pass visit's first check,
      // and of the latter, by the givers' GPUs, only those with pods without GPUs: the others are
      // passed over a word of nodes at a time.
      const uint64_t* free_gpus = quest.need > 0 ? cluster.nodes_with_free_gpus() : nullptr;
      const uint64_t* without_gpus = by_gpus_only ? victims_.nodes_held_without_gpus() : nullptr;
      auto visit_marked = [&](size_t from, size_t to) {
        for (size_t word = from / 64; word * 64 < to; ++word) {
          uint64_t bits = skip_unless[word] |
                          (free_gpus ? free_gpus[word] & (without_gpus ? without_gpus[word] : ~uint64_t{0}) : 0);
          if (word * 64 < from) bits &= ~uint64_t{0} << (from % 64);
          if (to < word * 64 + 64) bits &= (uint64_t{1} << (to % 64)) - 1;
          for (; bits != 0; bits &= bits - 1) {
            if (visit(static_cast<NodeIndex>(word * 64 + static_cast<size_t>(std::countr_zero(bits))))) return true;
          }
        }
        return false;
      };
      if (!visit_marked(static_cast<size_t>(start), static_cast<size_t>(node_count)))
        visit_marked(0, static_cast<size_t>(start));
    } else {
      for (int step = 0; step < node_count; ++step) {
        if (visit(static_cast<NodeIndex>((start + step) % node_count))) break;
      }
    }
    if (best.node >= 0) victims_.next_start() = (best.node + 1) % std::max(1, node_count);
    return best;
  }

  // The nodes a search visits: all of them from `start` round the cluster, skipping (`marks`)
  // those of no queue that may give whose free GPUs fall short; or, where those queues hold few
  // nodes, only theirs, listed in node_list_ (`listed_only`). Which nodes those queues hold
  // (`of_queues`) is read only where the marks of units holding GPUs (gpu_nodes_within) do not
  // stand in for it: a GPU pod's search under live bounds that lists no nodes leaves it null.
  struct SearchScope {
    bool marks = false;
    const uint64_t* of_queues = nullptr;
    bool listed_only = false;
  };

  // Which queues may give (accepted_, accepted_flag_, reach_cap_) and so which nodes to visit.
  // A search that visits only a domain (`whole_cluster` false) lists no nodes, and for a GPU pod
  // under live bounds in a domain of under a sixteenth of the cluster marks none either: may_serve
  // turns down each node the marks would have passed over (they only hold more than may_free_now
  // counts), and the marks, kept for the whole cluster, then cost more than the domain's checks.
  SearchScope scope_search(const NodeQuest& quest, NodeIndex start, bool whole_cluster) {
    const int node_count = context_.cluster().node_count();
    size_t listed = 0;
    const bool by_rule = request_.victims != VictimRule::kAny;  // the rule names the queues that may give
    // With moves any node with units may do: what the rule may not take may move.
    const bool by_queue = by_rule && !quest.moves;
    accepted_flag_.assign(context_.tree().size(), by_rule ? 0 : 1);
    if (by_rule) {
      accepted_.clear();
      for (QueueIndex leaf : context_.tree().leaves()) {
        if (!queue_may_give(leaf)) continue;
        accepted_.push_back(leaf);
        accepted_flag_[leaf] = 1;
        listed += victims_.nodes_of(leaf).size();
      }
    }
    reach_cap_.resize(accepted_flag_.size());
    for (QueueIndex queue = 0; queue < reach_cap_.size(); ++queue) {
      reach_cap_[queue] = !accepted_flag_[queue]            ? INT64_MIN
                          : request_.give_cap_milli.empty() ? INT64_MAX
                                                            : request_.give_cap_milli[queue];
    }
    SearchScope scope;
    const bool small_domain = !whole_cluster && domain_.size() * 16 < static_cast<size_t>(node_count);
    const bool marks = by_queue && (!small_domain || quest.need == 0 || !quest.live_bounds);
    // Only the nodes of queues that may give, unless those are a good part of the cluster anyway.
    scope.marks = marks;
    scope.listed_only = marks && whole_cluster && listed < static_cast<size_t>(node_count) / 4;
    const bool gpu_marks = quest.need > 0 && quest.live_bounds;
    // Such a pod (NodeQuest::only_queue_nodes), where no GPU may be evicted either, is served only
    // by taking units of those queues that hold no GPU: choose_victims turns a node down at the
    // first unit holding GPUs it takes. The other nodes of the queues are not visited; those it
    // visits come in the same order, so the search decides alike.
    const bool without_gpus = quest.only_queue_nodes() && quest.budget == 0;
    if (marks && (scope.listed_only || !gpu_marks))
      scope.of_queues =
          (without_gpus ? victims_.nodes_without_gpus_of_any(accepted_) : victims_.nodes_of_any(accepted_)).data();
    // No unit larger than the budget can be taken either: the search stops at it.
    take_cap_.resize(reach_cap_.size());
    for (QueueIndex queue = 0; queue < take_cap_.size(); ++queue)
      take_cap_[queue] = std::min(reach_cap_[queue], quest.budget);
    if (marks && quest.live_bounds) victims_.gpus().choose_givers(take_cap_);
    if (scope.listed_only) list_nodes(scope.of_queues, static_cast<size_t>(node_count), static_cast<size_t>(start));
    return scope;
  }

  // The cheap checks, before any victim is looked at: the node holds units, evicting every unit
  // of the queues that may give (none costlier than `best`) could free the GPUs the pod needs
  // and (pruning) its CPU and memory, it has the devices, the pod may run there, and the pod's
  // pass admits its reservation.
  bool may_serve(const ClusterState& cluster, NodeIndex node, const NodeQuest& quest, const NodeChoice& best) {
    if (victims_.on_node(node).empty()) return false;
    if (quest.need > 0 && !may_free(cluster, node, quest, best)) return false;
    if (context_.options().prune_victim_search && !may_free_resources(cluster, node, quest)) return false;
    return may_host(cluster, node, quest);
  }

  // Whether the node holds pods without GPUs of units that may be victims, and the pod's CPU and
  // memory fit the node's free ones with what those pods hold (VictimIndex::held_without_gpus_on).
  bool fits_beside_pods_without_gpus(const ClusterState& cluster, NodeIndex node, const PodSpec& pod) const {
    if (!has_bit(victims_.nodes_held_without_gpus(), node)) return false;
    Resources reachable = cluster.node_state(node).free;
    reachable += victims_.held_without_gpus_on(node);
    return pod.request.fits_in(reachable);
  }

  // Whether the units the search may take on the node, with its free CPU and memory, could make
  // room for the pod's CPU and memory (bounded from above as indexed: VictimIndex::held_by_queue_on).
  // Where CPU runs out before GPUs do, most nodes have the pod's GPUs free, and on most of them
  // nothing the search may take frees the CPU: choose_victims would go through all their units.
  bool may_free_resources(const ClusterState& cluster, NodeIndex node, const NodeQuest& quest) const {
    const Resources& free = cluster.node_state(node).free;
    if (quest.pod.request.fits_in(free)) return true;
    Resources reachable = free;
    if (quest.moves) {
      reachable += victims_.resources_held_on(node);  // what the rule may not take may move
      return quest.pod.request.fits_in(reachable);
    }
    // A queue that may give nothing gives only units that hold none of the key resources: for a
    // GPU workload, units without GPUs (of any queue); otherwise units that hold no CPU or memory,
    // which free none. Units holding GPUs are taken only within what their queue may lose of them
    // (take_cap_, for a GPU workload) and the budget: past it choose_victims turns the node down.
    const bool gpu_key = quest.key_mask == VictimIndex::kHoldsGpu;
    if (gpu_key) reachable += victims_.held_without_gpus_on(node);
    for (const VictimIndex::QueueHolds& held : victims_.held_by_queue_on(node)) {
      if (!accepted_flag_[held.queue]) continue;
      if (!gpu_key) reachable += held.without_gpus;
      if (held.smallest_gpu_unit_milli <= (gpu_key ? take_cap_[held.queue] : quest.budget)) reachable += held.with_gpus;
    }
    return quest.pod.request.fits_in(reachable);
  }

  // Whether the pod may run on the node at all: it has the devices, the pod's selectors admit it,
  // and so does the pod's pass its reservation.
  bool may_host(const ClusterState& cluster, NodeIndex node, const NodeQuest& quest) {
    if (victims_.gpu_count(node) < quest.whole_gpus) return false;
    if (!fits_statically(cluster, node, quest.pod)) return false;
    return quest.pass.admits(cluster.reservation(node));
  }

  // Into `choice`: the node's units in victim order until the pod fits on what they leave; false
  // when it does not fit, or the victims would pass the budget or cost more than `best`.
  bool choose_victims(const ClusterState& cluster, NodeIndex node, const NodeQuest& quest, const NodeChoice& best,
                      NodeChoice& choice) {
    const NodeSpec& spec = cluster.node_spec(node);
    choice.node = node;
    choice.top_priority = INT_MIN;
    choice.gpu_milli = 0;
    choice.pods = 0;
    choice.victims.clear();
    choice.moving.clear();
    choice.evicted_milli = 0;
    released_.clear();
    ++node_visit_;  // clears taken_
    // The node's free GPUs as the victims leave them: the pod cannot fit before they reach its
    // nominal need, so check_capacity is not asked until then.
    int64_t gpu_free = cluster.gpu_free_milli(node);
    const int64_t nominal = quest.pod.gpu.nominal_milli();
    for (uint32_t index : victims_.on_node(node)) {
      if (victims_.gone(index)) continue;
      const WorkloadId workload = victims_.workload_of(index);
      if (workload == request_.pending || workload == quest.for_workload || touched(workload)) continue;
      // A unit of a queue that may give nothing can be taken only if it holds none of the key
      // resources; the rule decides the rest. What may not be taken may move, if moves are on.
      const bool taken = (accepted_flag_[victims_.queue_of(index)] || !(victims_.holds(index) & quest.key_mask)) &&
                         eligible(index) && within_allowance(index);
      if (!taken && !quest.moves) continue;
      if (choice.victims.empty()) scratch_ = cluster.node_state(node);  // the node as its victims leave it
      gpu_free += release(node, index, choice);
      const VictimIndex::Unit& unit = victims_.unit(index);
      choice.top_priority = std::max(choice.top_priority, unit.priority);
      choice.gpu_milli += unit.gpu_milli;
      choice.victims.push_back(index);
      choice.moving.push_back(taken ? 0 : 1);
      if (taken) choice.evicted_milli += unit.gpu_milli;
      // More victims only raise the cost: stop once over budget or already worse than the best.
      if (choice.evicted_milli > quest.budget) return false;
      if (best.node >= 0 && (choice.top_priority > best.top_priority ||
                             (choice.top_priority == best.top_priority && choice.gpu_milli > best.gpu_milli)))
        return false;
      if (gpu_free >= nominal && check_capacity(spec, scratch_, quest.pod) == Predicate::kFits) return true;
    }
    return false;
  }

  // What the unit's pods free on the node, into scratch_, each pod once: a workload's extra may
  // come before its whole unit, which holds that pod too. Returns the GPU milli they free there.
  int64_t release(NodeIndex node, uint32_t index, NodeChoice& choice) {
    int64_t gpu_freed = 0;
    for (const VictimIndex::Member& member : victims_.members(index)) {
      if (std::find(released_.begin(), released_.end(), member.pod) != released_.end()) continue;
      released_.push_back(member.pod);
      if (member.node == node) {
        // A victim frees its limit's burst as well as its request: a pod that waits for limit
        // room under the overcommit cap can be served by evicting.
        scratch_.free += member.request;
        scratch_.add_devices(victims_.devices(member), -member.milli_per_device, -member.burst_milli);
        gpu_freed += int64_t{member.milli_per_device} * member.device_count;
      }
      ++choice.pods;
    }
    return gpu_freed;
  }

  // Nothing beats victims of the lowest priority running that free no more than the pod needs
  // (or one GPU, for a fraction: the smallest whole-GPU victim).
  bool unbeatable(const NodeChoice& best, int64_t need) const {
    return best.top_priority <= victims_.min_priority() && best.gpu_milli <= std::max<int64_t>(need, kMilliPerGpu);
  }

  // Where the givers are chosen (by_gpu_nodes), a stop that changes no decision: the best node's
  // victims are one pod freeing no more GPUs than the pod needs (so a node with none free could not
  // do with fewer, and could_beat need not look at it), and no node could do better. Checked again
  // only when the best changes.
  bool cheapest_possible(const NodeChoice& best, const NodeQuest& quest) {
    if (!by_gpu_nodes_ || best.pods > 1 || best.gpu_milli > quest.need) return false;
    if (best.top_priority != checked_top_ || best.gpu_milli != checked_gpu_milli_) {
      checked_top_ = best.top_priority;
      checked_gpu_milli_ = best.gpu_milli;
      beatable_ = could_beat(best, quest);
    }
    return !beatable_;
  }

  // Whether some node could serve the pod with victims cheaper than the best's one pod, by bounds
  // from above of what the chosen givers' units hold there (VictimGpus::chosen_held_on, by
  // levels). On a node whose free GPUs fall short of the pod, victims that hold GPUs must free the
  // rest: to be cheaper they are all of lower priority, or of the best's and hold fewer GPUs than
  // its victims, which takes more free GPUs than the pod's need less those. A node with the pod's
  // GPUs free might do with any victims, even some holding none: it always counts, if the pod may
  // run there (may_host).
  bool could_beat(const NodeChoice& best, const NodeQuest& quest) {
    const ClusterState& cluster = context_.cluster();
    const VictimGpus& gpus = victims_.gpus();
    const size_t below = gpus.levels_below(best.top_priority);
    const size_t within = gpus.levels_at_most(best.top_priority);
    const uint64_t* free_gpus = cluster.nodes_with_free_gpus();
    const auto words = (static_cast<size_t>(cluster.node_count()) + 63) / 64;
    for (size_t word = 0; word < words; ++word) {
      uint64_t bits = free_gpus[word];
      for (size_t level = 0; level < below; ++level) bits |= gpus.nodes_of(level)[word];
      for (; bits != 0; bits &= bits - 1) {
        const auto node = static_cast<NodeIndex>(word * 64 + static_cast<size_t>(std::countr_zero(bits)));
        const int64_t free = cluster.gpu_free_milli(node);
        const bool free_holds_pod = free >= quest.need;
        const bool lower = below > 0 && gpus.chosen_held_on(node, below) + free >= quest.need &&
                           may_free_now(node, quest.need - free, best.top_priority - 1, quest.budget, NodeChoice{});
        const bool fewer = free > quest.need - best.gpu_milli &&
                           gpus.chosen_held_on(node, within) + free >= quest.need &&
                           may_free_now(node, quest.need - free, best.top_priority, quest.budget, best);
        if ((free_holds_pod || lower || fewer) && !victims_.on_node(node).empty() && may_host(cluster, node, quest))
          return true;
      }
    }
    return false;
  }

  const RoomScope scope_;
  std::span<const NodeIndex> domain_;  // the scope of the pending pod being placed
  const bool trial_;
  const int keep_within_;
  bool kept_ = false;
  TrialOutcome outcome_;
  bool refreshed_ = false;
  int trial_evictions_ = 0;
  std::vector<TopologyRoomFinding::Victims> trial_victims_;
  CycleContext& context_;
  VictimIndex& victims_;
  const RoomRequest& request_;
  const PlacementPass pass_;  // the reserved nodes the pending workload may use
  const QueueIndex pending_queue_;
  const int pending_priority_;
  NodeState scratch_;
  std::vector<PodId> released_;
  std::vector<WorkloadId> touched_;
  std::vector<NodeIndex> node_list_;
  std::vector<uint64_t> gpu_nodes_;  // gpu_nodes_within: merged over the first merged_levels_ levels
  static constexpr size_t kNotMerged = SIZE_MAX;
  size_t merged_levels_ = kNotMerged;
  // The search passes over nodes by the chosen givers' marks (VictimGpus::choose_givers this
  // search, merged_levels_ those of its ceiling).
  bool by_gpu_nodes_ = false;
  // cheapest_possible's, per best_node: could_beat for the best it was last asked about.
  int checked_top_ = INT_MIN;
  int64_t checked_gpu_milli_ = -1;
  bool beatable_ = true;
  std::vector<QueueIndex> accepted_;
  std::vector<char> accepted_flag_;
  std::vector<int64_t> reach_cap_;  // per queue: see may_free
  std::vector<int64_t> take_cap_;   // per queue: see may_free_now
  static constexpr int8_t kNotChecked = -1;
  bool by_class_ = false;
  std::vector<int8_t> class_fits_;  // per node class, for the pod of this search: 1 fits, 0 not
  // Per queue × key: chosen so far on the node being looked into. A row counts only where
  // taken_on_ (per queue) holds the current node_visit_, and reads as zero elsewhere: no row is
  // cleared at every node.
  std::vector<double> taken_;
  std::vector<uint64_t> taken_on_;
  std::vector<double> lost_;  // within_allowance's, per key: what the unit costs its queue
  uint64_t node_visit_ = 0;   // counts the nodes looked into
};

}  // namespace

namespace {

// Whether the plan's domain could hold the gang under a rule that names its victims by queue and
// priority alone (preemption, and its explanation): its free GPUs plus those such victims hold
// there reach `need`. True for the other rules, whose allowances move as a search evicts.
bool may_hold(CycleContext& context, const VictimIndex& victims, const RoomRequest& request, const DomainPlan& plan,
              int64_t need) {
  const bool lower_only = request.victims == VictimRule::kOwnQueueLowerPriority;
  if ((!lower_only && request.victims != VictimRule::kOwnQueue) || plan.level < 0) return true;
  const Workload& pending = context.workloads()[request.pending];
  int64_t reach = plan.free_milli;
  for (NodeIndex node : plan.scope.gang) {
    for (const VictimGpus::Entry& entry : victims.gpus().on(node)) {
      if (entry.queue == pending.queue && (!lower_only || entry.priority < pending.spec.priority))
        reach += entry.gpu_milli;
    }
  }
  return reach >= need;
}

// Why reclaim or preemption made no room by topology (TopologyRoomFinding): whether a search
// without the action's limit serves the first plan (the most GPUs free), its victims counted per
// queue against what the limit lets each lose. Only after a failure, so a cycle that makes room
// pays nothing for it.
void explain_no_room(CycleContext& context, VictimIndex& victims, const RoomRequest& request, const GangTopology& gang,
                     const std::vector<DomainPlan>& plans) {
  if (request.action != Action::kReclaim && request.action != Action::kPreempt) return;
  PendingReason* reason = context.reason(request.pending);
  if (!reason) return;
  RoomRequest unlimited;
  unlimited.pending = request.pending;
  unlimited.action = request.action;
  if (request.action == Action::kReclaim) {
    unlimited.victims = VictimRule::kOtherQueues;
    unlimited.give_keys = request.give_keys;
    unlimited.give_allowance.assign(request.give_allowance.size(), std::numeric_limits<double>::infinity());
  } else {
    unlimited.victims = VictimRule::kOwnQueue;
  }
  const TopologyDomains& domains = context.cluster().topology();
  auto found = std::make_shared<TopologyRoomFinding>();
  int noun_level = gang.whole.required;
  for (const GangTopology::Part& part : gang.parts) {
    if (noun_level < 0) noun_level = part.levels.required;
  }
  found->level = noun_level >= 0 ? std::string(domains.noun(gang.topology, noun_level)) : "domain";
  if (!plans.empty()) {
    // One trial, in the plan with the most GPUs free; where the searches start is left as it
    // was, so that explaining changes no decision.
    const DomainPlan& plan = plans.front();
    const NodeIndex start = victims.next_start();
    RoomSearch trial(context, victims, unlimited, plan.scope, true);
    if (may_hold(context, victims, unlimited, plan, context.gang_gpu_milli(request.pending)) && trial.run() &&
        plan.named_domain >= 0) {
      found->level = std::string(domains.noun(gang.topology, plan.named_level));
      found->domain = domains.domains(gang.topology, plan.named_level)[static_cast<size_t>(plan.named_domain)].value;
      found->victims = trial.trial_victims();
    }
    victims.next_start() = start;
  }
  if (!plans.empty() && found->victims.empty()) return;  // nothing to add to what the action says
  if (plans.empty() && !any_domain_holds(context.cluster(), gang, context.gang_gpu_milli(request.pending)))
    return;  // the domains are too small: the shortfall says all there is to say
  const bool gpu_keyed = !request.give_keys.empty() && context.gang_gpu_milli(request.pending) > 0;
  if (request.action == Action::kReclaim && gpu_keyed && request.refresh) {
    request.refresh();  // what each queue may lose, the trials rolled back
    for (TopologyRoomFinding::Victims& victims_of_queue : found->victims) {
      victims_of_queue.may_lose =
          std::max(0.0, request.give_allowance[victims_of_queue.queue * request.give_keys.size()]);
      victims_of_queue.not_lower = 0;
    }
  } else if (request.action == Action::kReclaim) {
    for (TopologyRoomFinding::Victims& victims_of_queue : found->victims) victims_of_queue.not_lower = 0;
  }
  std::stable_sort(found->victims.begin(), found->victims.end(),
                   [](const auto& a, const auto& b) { return a.workloads > b.workloads; });
  (request.action == Action::kReclaim ? reason->reclaim_room : reason->preemption_room) = std::move(found);
}

// Whether min_evictions bounds the trials' evictions: every unit a trial does not evict for good
// stays where it was (nothing moves), and each pod of the gang takes its nominal GPUs (not so for
// a GPU-memory request on a larger device).
bool bounded_by_units(CycleContext& context, const RoomRequest& request) {
  if (request.move_victims || request.move_others) return false;
  const ClusterState& cluster = context.cluster();
  const auto& gang = context.workloads()[request.pending].gang();
  return std::none_of(gang.begin(), gang.end(),
                      [&cluster](PodId pod) { return cluster.pod(pod).gpu.kind == GpuRequest::Kind::kMemory; });
}

bool make_room_by_topology(CycleContext& context, VictimIndex& victims, const RoomRequest& request,
                           const GangTopology& gang) {
  const int64_t need = context.gang_gpu_milli(request.pending);
  const std::vector<DomainPlan> plans = domain_plans(context.cluster(), victims, need, gang);
  const int64_t max_unit = bounded_by_units(context, request) ? victims.max_unit_gpu_milli() : 0;
  // The fewest evictions plan `i` could need (none past the last plan): a plan that cannot beat
  // the best so far is not searched, and a trial that no later plan can beat commits at once.
  auto floor_of = [&](size_t i) {
    return i < plans.size() ? min_evictions(plans[i], need, max_unit) : std::numeric_limits<int>::max();
  };
  const DomainPlan* best = nullptr;
  int best_evictions = 0;
  TrialOutcome best_outcome;
  // A trial leaves no trace, not even where the next search starts: so a plan not searched
  // changes nothing, and the best trial's operations, replayed, are what searching its plan
  // again would do.
  const NodeIndex start = victims.next_start();
  // The caller refreshed the allowances; only a trial that refreshed them leaves them stale.
  bool stale = false;
  auto refresh = [&] {
    if (stale && request.refresh) request.refresh();
    stale = false;
  };
  for (size_t i = 0; i < plans.size(); ++i) {
    if (best && floor_of(i) >= best_evictions) break;  // nor can the later plans, less free
    if (!may_hold(context, victims, request, plans[i], need)) continue;
    refresh();
    const int keep_within = std::min(best ? best_evictions - 1 : std::numeric_limits<int>::max(), floor_of(i + 1));
    RoomSearch trial(context, victims, request, plans[i].scope, true, keep_within);
    const bool served = trial.run();
    if (trial.kept()) return true;
    victims.next_start() = start;
    stale = stale || trial.refreshed();
    if (!served) continue;
    if (!best || trial.trial_evictions() < best_evictions) {
      best = &plans[i];
      best_evictions = trial.trial_evictions();
      best_outcome = std::move(trial.outcome());
    }
  }
  if (!best) {
    // Reclaim's second attempt (with moves) finds what its first found.
    if (!request.move_others) explain_no_room(context, victims, request, gang, plans);
    return false;
  }
  replay(context, victims, request, best_outcome);
  return true;
}

}  // namespace

void explain_no_room_by_topology(CycleContext& context, VictimIndex& victims, const RoomRequest& request) {
  if (!context.options().topology.make_room || context.topology_unresolvable(request.pending)) return;
  const GangTopology* gang = context.gang_topology(request.pending);
  if (!gang || !needs_domains(*gang)) return;
  explain_no_room(context, victims, request, *gang,
                  domain_plans(context.cluster(), victims, context.gang_gpu_milli(request.pending), *gang));
}

bool make_room(CycleContext& context, VictimIndex& victims, const RoomRequest& request) {
  if (context.topology_unresolvable(request.pending)) return false;
  if (const GangTopology* gang = context.gang_topology(request.pending); gang && needs_domains(*gang)) {
    return context.options().topology.make_room && make_room_by_topology(context, victims, request, *gang);
  }
  return RoomSearch(context, victims, request).run();
}

}  // namespace tessera
