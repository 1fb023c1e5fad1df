// What the actions of one cycle share: the inputs, the live queue ledger, the pending reasons,
// and the bookkeeping that turns committed statements into the cycle's result. Internal to the
// scheduler layer.
#pragma once

#include <cassert>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "scheduler/cycle.h"
#include "scheduler/queue_ledger.h"

namespace tessera {

// A unit of eviction: a whole workload (every pod it has bound), or one elastic extra.
struct VictimUnit {
  WorkloadId workload = -1;
  PodId extra = -1;  // >= 0: only this elastic extra
  bool whole() const { return extra < 0; }
};

// The context listens to every statement it opens and posts each bind and evict to the ledger,
// rolled-back ones included, so no action can change the cluster behind the ledger's back.
class CycleContext : private StatementListener {
 public:
  CycleContext(CycleInputs inputs, const CycleOptions& options, FairShares shares, std::vector<QueueLoad> loads,
               std::vector<ResourceVector> non_preemptible, std::span<const double> burst = {});

  ClusterState& cluster() { return inputs_.cluster; }
  Placer& placer() { return inputs_.placer; }
  WorkloadSet& workloads() { return inputs_.workloads; }
  const QueueTree& tree() const { return inputs_.queues; }
  const ResourceMeter& meter() const { return inputs_.meter; }
  const CycleOptions& options() const { return options_; }
  double now() const { return inputs_.now; }
  QueueLedger& ledger() { return ledger_; }
  const FairShares& shares() const { return shares_; }
  CycleResult& result() { return result_; }

  // What the gang of a pending workload asks for (one entry per resource), and the GPUs (milli)
  // it needs.
  std::span<const double> gang_request(WorkloadId workload);
  int64_t gang_gpu_milli(WorkloadId workload) const;
  // The resources the queue rules compare for the workload (ResourceMeter::key_resources of its
  // gang request). A handful of sets serve every workload: each is kept once, for the cycle, and
  // each workload's is remembered (for those pending at the start, as the context is built), so
  // that asking does not load the request.
  std::span<const ResourceId> key_resources(WorkloadId workload);
  // What on the queue path of a workload pending at the start keeps it from holding its gang now
  // (limits; deserved quota for non-preemptible work), or nullopt; read from its compact key.
  std::optional<QuotaBlock> quota_block(WorkloadId workload);
  // Whether nothing does: making room or reserving for it is pointless otherwise.
  bool quota_allows(WorkloadId workload) { return !quota_block(workload); }

  // Workloads pending at the start of the cycle, by queue and runs_before (the order the
  // actions take each queue's in).
  const std::vector<WorkloadId>& pending() const { return pending_; }
  // A workload's place in pending(); -1 for one not pending at the start.
  int32_t pending_position(WorkloadId workload) const { return pending_position_[static_cast<size_t>(workload)]; }
  // What the actions compare of a workload pending at the start, kept apart and compact: they take
  // 100,000 of them in queue order, and reading each workload there is a cache miss.
  struct PendingKey {
    uint32_t gang_shape = 0;
    int priority = 0;
    uint32_t queue = 0;  // a QueueIndex, in 4 bytes: the key stays 16
    bool preemptible = true;
  };
  // The candidates per leaf queue, each list in runs_before order, as split_by_queue_in_run_order
  // below; where all were pending at the start, from their places in pending() and their keys.
  std::vector<std::vector<WorkloadId>> split_in_run_order(std::span<const WorkloadId> candidates);
  const PendingKey& pending_key(WorkloadId workload) const {
    assert(pending_position(workload) >= 0 && "only a workload pending at the start of the cycle has keys");
    return pending_keys_[static_cast<size_t>(pending_position(workload))];
  }
  // Whether a workload pending at the start of the cycle is still waiting (none of its pods was
  // placed since). A flag, not a look at every pod: actions ask it for 100,000 workloads.
  bool still_pending(WorkloadId workload) const { return waiting_[static_cast<size_t>(workload)] != 0; }
  // The device memory a pending GPU-memory request is measured against (the cluster's median).
  int64_t typical_device_memory() const { return meter().typical_device_memory(); }
  // Why a workload pending at the start of the cycle failed so far: null while no action has
  // tried it. set_reason records a failure (it replaces the one before, and fixes its code);
  // clear_reason forgets it.
  PendingReason* reason(WorkloadId workload) {
    const int32_t position = pending_position_[static_cast<size_t>(workload)];
    return position >= 0 && reason_codes_[static_cast<size_t>(position)] != kUntried
               ? &result_.pending[static_cast<size_t>(position)].reason
               : nullptr;
  }
  PendingReason& set_reason(WorkloadId workload, PendingReason reason);
  void clear_reason(WorkloadId workload);
  // Whether an action tried the workload and found no room for it (its reason's code is
  // kUnschedulable), told without loading the reason: the actions that make room ask it of every
  // pending workload.
  bool unschedulable(WorkloadId workload) const {
    const int32_t position = pending_position_[static_cast<size_t>(workload)];
    return position >= 0 &&
           reason_codes_[static_cast<size_t>(position)] == static_cast<uint8_t>(PendingCode::kUnschedulable);
  }

  // A statement on the cycle's cluster whose every operation (and undoing) the ledger follows.
  // Actions change the cluster only through statements opened here; commit checks it.
  Statement open_statement() { return Statement(cluster(), this); }

  // Places the pods as a gang through the placer. `pass`: the reserved nodes the placement may
  // use (pass_for the pods' workload).
  // Pods of a workload with topology constraints (docs/topology.md) keep them: its gang is placed
  // by place_in_topology; elastic extras of a running gang go within its required domain.
  bool place_gang(Statement& statement, std::span<const PodId> pods, FailureSummary* why = nullptr,
                  const PlacementPass& pass = {});
  // The workload's gang topology, resolved; nullptr when it has no constraint or topology is
  // off. A constraint the cluster cannot resolve leaves the gang unplaceable, `error` set.
  const GangTopology* gang_topology(WorkloadId workload);
  // Whether the workload's constraints name what the cluster does not declare (topology on):
  // it can never be placed, so no room is made or reserved for it.
  bool topology_unresolvable(WorkloadId workload);
  // The sizes of the gangs of the workloads active at the start of the cycle.
  const GangSizeMix& gang_mix();

  // What a workload's pods may use of reserved nodes: its own, and as backfill those due no
  // sooner than it would end by its time limit.
  PlacementPass pass_for(WorkloadId workload) const;
  // Whether the workload's pass admits no more than anyone's: failure memos that let equal
  // workloads share a verdict hold only between such workloads.
  bool plain_pass(WorkloadId workload) const;

  // The reservations in force (docs/design.md §4 step 2), and the one a workload holds (-1: none).
  std::vector<Reservation>& reservations() { return reservations_; }
  int32_t reservation_of(WorkloadId workload) const { return reservation_of_[static_cast<size_t>(workload)]; }
  // Sets the reservations in force and marks their nodes in the cluster (releasing the old ones).
  void set_reservations(std::vector<Reservation> reservations);

  // Commits the statement (opened by open_statement) and records what it did: the workloads that started (and the
  // action that made room), the units evicted (moved when re-placed), the operations.
  void commit(Statement& statement, Action action, WorkloadId beneficiary);

  // The bound pods of a unit, into `pods`; what bound pods hold now, into `total` (one entry per
  // resource). Out-parameters: the victim indexes ask for every running unit, and reuse them.
  void unit_pods(const VictimUnit& unit, std::vector<PodId>& pods) const;
  void amount_held(std::span<const PodId> pods, ResourceVector& total) const;

  // Counts commits; failure memos keyed to it expire whenever the cluster changes.
  uint64_t generation() const { return generation_; }
  // Counts commits that left some resource with less allocated in all than before: memos keyed
  // to it expire only when room may have opened.
  uint64_t freed_generation() const { return freed_generation_; }

  void finish_result();

 private:
  // Posts a pod's binding to its queue in the ledger: placed, or given up.
  void post(PodId pod, const Binding& binding, bool placed);
  int64_t sum_gang_gpu_milli(WorkloadId workload) const;
  void bound(PodId pod, const Binding& binding) override { post(pod, binding, true); }
  void unbound(PodId pod, const Binding& binding) override { post(pod, binding, false); }

  CycleInputs inputs_;
  const CycleOptions& options_;
  FairShares shares_;
  QueueLedger ledger_;
  CycleResult result_;
  std::vector<WorkloadId> pending_;
  // The reasons live in result_.pending from the start, one per entry of pending_ in its order:
  // finish_result then only drops the workloads that started, in place. Per workload its entry
  // (-1: not pending at the start); per entry the code of its reason, kUntried while no action
  // has tried it.
  std::vector<int32_t> pending_position_;
  static constexpr uint8_t kUntried = 0xff;
  std::vector<uint8_t> reason_codes_;
  std::vector<PendingKey> pending_keys_;  // per entry of pending_
  // Per workload, resource_count entries each: one flat array, which the actions read for 100,000
  // workloads in queue order, not one allocation per workload. Worked out for the workloads
  // pending at the start as the context is built, for the others on first use.
  std::vector<double> gang_requests_;
  std::vector<char> gang_request_known_;
  // key_resources': each set met so far (a set keeps its place, and its buffer, as more come);
  // per workload the index of its set, kUnknownKeys until asked; a buffer.
  std::vector<std::vector<ResourceId>> key_sets_;
  static constexpr uint8_t kUnknownKeys = 0xff;
  std::vector<uint8_t> key_set_of_;
  std::vector<ResourceId> keys_;
  std::vector<int64_t> pending_gpu_milli_;  // per workload pending at the start: gang_gpu_milli; -1 others
  std::vector<char> waiting_;               // per workload: pending at the start and not placed since
  std::vector<Reservation> reservations_;
  std::vector<int32_t> reservation_of_;  // per workload: index in reservations_, or -1
  // The workloads with topology constraints, resolved on first use: the gang's topology, or why
  // it cannot be resolved. A map: most workloads have none, and a cycle sees 100,000.
  std::unordered_map<WorkloadId, Result<GangTopology>> gang_topologies_;
  const Result<GangTopology>* resolved_topology(WorkloadId workload);
  std::optional<GangSizeMix> gang_mix_;
  uint64_t generation_ = 0;
  uint64_t freed_generation_ = 0;
};

// Whole-workload and per-pod ordering shared by the actions.
// Inside a queue: higher priority first, then older, then lower id.
bool runs_before(const Workload& a, WorkloadId a_id, const Workload& b, WorkloadId b_id);

// Sorts workloads by queue index, then runs_before: bucketed by queue, then each queue's sorted
// on compact copies of the keys. A cycle sorts a hundred thousand pending workloads several
// times, and loading a workload at every comparison costs more than the sort.
void sort_by_queue_and_run_order(const WorkloadSet& workloads, std::vector<WorkloadId>& ids);

// The workloads split by queue (per queue index, `queue_count` lists), each list in runs_before
// order. Workloads that come in that order within each queue (a part of a list sorted by
// sort_by_queue_and_run_order, as every action's candidates are) cost one pass: only the lists
// found out of order are sorted.
std::vector<std::vector<WorkloadId>> split_by_queue_in_run_order(const WorkloadSet& workloads,
                                                                 std::span<const WorkloadId> ids, size_t queue_count);

}  // namespace tessera
