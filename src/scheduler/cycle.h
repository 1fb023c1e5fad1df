// The scheduling cycle (docs/design.md §4): fair shares from a snapshot, then the actions in order —
// allocate, consolidate, reclaim, preempt — each working inside statements that commit only when
// the pending workload they serve really runs, and last the reservations for large workloads
// that none of them could serve. The same function drives `tessera sim` and the
// Kubernetes adapter; the caller carries out what it returns.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "engine/statement.h"
#include "engine/topology_placement.h"
#include "policy/fair_share.h"
#include "scheduler/carried_state.h"
#include "scheduler/pending_reason.h"
#include "scheduler/resource_meter.h"
#include "scheduler/workload_set.h"

namespace tessera {

enum class Action : uint8_t { kAllocate, kConsolidate, kReclaim, kPreempt };
inline constexpr int kActionCount = 4;
std::string_view action_name(Action action);  // "allocate", "consolidate", "reclaim", "preempt"

// docs/design.md §4 step 2: a workload that waited long for room reserves nodes, which then drain for it.
struct ReservationOptions {
  bool enabled = true;
  // A workload pending this long for want of room (not of quota) may reserve nodes, if its
  // queue holds no more than its fair share (with the gangs of its other reservations).
  double min_wait_seconds = 300;
  // Only large workloads reserve: a gang asking for at least this many GPUs (a node's worth on
  // most GPU servers). Small ones find room as work ends; a node held for each would idle it.
  double min_gpus = 8;
  // At most this share of the cluster's nodes is reserved at any time, except by the first
  // reservation (a gang larger than the cap could never reserve otherwise).
  double max_reserved_node_fraction = 0.1;
};

// docs/topology.md: gangs that name a topology level are placed (and room is made for them)
// within its domains. Off, constraints are ignored and gangs go anywhere.
struct TopologyOptions {
  bool enabled = true;
  DomainRule rule = DomainRule::kFragmentation;  // which domain a gang goes to
  // Consolidate, reclaim and preempt make room for a gang with a required level within one
  // domain. Off, such a gang waits for room to free by itself (and for its reservation).
  bool make_room = true;
};

struct CycleOptions {
  FairShareOptions fair_share;
  TopologyOptions topology;
  ReservationOptions reservations;
  bool consolidate = true;
  bool reclaim = true;
  bool preempt = true;
  // Evictions made for one pending workload may free at most this many times the GPUs it
  // needs (rounded up to whole GPUs): a scheduler that evicts 376 GPUs to place 48 has failed.
  double max_evicted_gpu_ratio = 2.0;
  // Reclaim may move work of queues at their fair share (evicted and re-placed in the same
  // statement) to gather the room it frees for a pod that needs it on one node.
  bool reclaim_moves = true;
  // The victim search passes over nodes whose victims, as they stand now, cannot free the GPUs a
  // pod needs without costing more than the best node found so far (VictimGpus), or whose victims
  // it may take could not free the pod's CPU and memory: the same decisions, found sooner. Off, it
  // reads only what the action's victims held of GPUs when it began, as the search did before;
  // tests compare the two.
  bool prune_victim_search = true;
};

// One workload (or one elastic extra) taken off its nodes.
struct Eviction {
  WorkloadId workload = -1;
  std::vector<PodId> pods;
  bool whole_workload = true;  // false: elastic extras only; the workload keeps running
  bool moved = false;          // consolidation: re-placed elsewhere in the same statement
  Action action = Action::kReclaim;
  WorkloadId beneficiary = -1;  // the pending workload the room was made for
  int64_t gpu_milli = 0;        // GPU portion the pods held
};

struct Start {
  WorkloadId workload = -1;
  Action action = Action::kAllocate;  // the action that made room for it
};

struct PendingWorkload {
  WorkloadId workload = -1;
  PendingReason reason;  // describe(reason, tree) gives the sentence
};

struct ActionStats {
  double seconds = 0;
  int attempts = 0;   // pending workloads the action tried
  int started = 0;    // of which now run
  int evictions = 0;  // Eviction records (whole workloads or extras)
};

struct CycleResult {
  std::vector<Operation> operations;  // every committed eviction and allocation, in order
  std::vector<Start> started;         // workloads whose gang started this cycle
  std::vector<Eviction> evictions;
  // Every workload pending at the end: those that waited, in queue order, then those evicted.
  std::vector<PendingWorkload> pending;
  FairShares shares;
  std::vector<QueueLoad> loads;                 // per queue: demand and allocation at the start
  std::vector<ResourceVector> allocated_after;  // per queue (inner ones summed): at the end
  // In force after the cycle (also kept in CycleInputs::carried); `reservations_made` of them are new.
  std::vector<Reservation> reservations;
  int reservations_made = 0;
  double fair_share_seconds = 0;
  double reserve_seconds = 0;
  ActionStats actions[kActionCount];
  double total_seconds = 0;
};

// Everything a cycle reads and writes. `placer` must serve `cluster` for its whole lifetime (its
// verdict cache is per cluster state), so keep one of each across cycles.
struct CycleInputs {
  ClusterState& cluster;
  Placer& placer;
  WorkloadSet& workloads;
  const QueueTree& queues;
  const ResourceMeter& meter;  // built for queues.resources()
  double now = 0;
  // What the previous cycle left, read and brought up to date by this one; nullptr: nothing is
  // carried (no reservations, no remembered use), as for a one-off cycle.
  CarriedState* carried = nullptr;
};

// Runs one cycle and applies its decisions to the cluster state. Fails only on inconsistent
// inputs (a queue tree and meter that disagree on resources).
Result<CycleResult> run_cycle(CycleInputs inputs, const CycleOptions& options = {});

// The minimum runtimes in force for a queue: its own, else its nearest ancestor's, else 0.
double preempt_min_runtime(const QueueTree& tree, QueueIndex queue);
double reclaim_min_runtime(const QueueTree& tree, QueueIndex queue);

}  // namespace tessera
