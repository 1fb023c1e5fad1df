// Making room for one pending workload by evicting (or moving) running work, the part shared by
// consolidate, reclaim and preempt. For each pod of the gang that fits nowhere, nodes that could
// take it are tried: a node's eligible victims are taken lowest priority first (elastic extras
// before whole workloads, youngest first) until the pod would fit, and the node whose victims
// cost least — lowest top priority, then fewest GPUs, then fewest pods — is chosen. As in the
// Kubernetes scheduler's preemption, a bounded number of candidate nodes (100) is compared,
// starting where the last search stopped; the scan also stops at a node that cannot be beaten:
// victims of the lowest priority running, no more GPUs than the pod needs (one, for a fraction);
// or one victim pod freeing no more than the pod needs where, by the bounds of what the takeable
// victims hold per node, no node could serve with victims of lower priority or of its priority
// holding fewer GPUs (a stop that changes no decision).
// Once the gang is placed, every victim whose old place is still free is put back (so none is
// evicted in vain), moved victims are re-placed (for reclaim with moves, into room further
// evictions make if need be; for consolidation serving a gang held to domains, into room that
// moving other work makes, a chain of two moves at most), and the statement commits; if anything
// fails, nothing happened. Victims are whole
// workloads or single elastic extras (never part of a gang), preemptible, past the action's minimum runtime, and not
// started in this cycle.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "scheduler/cycle_context.h"
#include "scheduler/victim_index.h"

namespace tessera {

// Who may be a victim besides what the index admits (preemptible, past the action's minimum
// runtime, not started in this cycle). Plain data, not a callback: the search asks it for
// millions of units per cycle.
enum class VictimRule : uint8_t {
  kAny,                    // every unit of the index (consolidation)
  kOtherQueues,            // units of other queues, each within what its queue may still lose:
                           // give_allowance (reclaim)
  kOwnQueueLowerPriority,  // units of the pending workload's queue, of lower priority (preemption)
  kOwnQueue,               // units of the pending workload's queue, of any priority (to explain a
                           // preemption by topology that found none)
};

struct RoomRequest {
  WorkloadId pending = -1;
  Action action = Action::kReclaim;
  // Which units may be taken. Except for kAny, only nodes running units of leaf queues that may
  // give are searched (unless those are a quarter of the cluster or more): for reclaim queues
  // other than the workload's with some allowance left, for preemption the workload's own queue.
  VictimRule victims = VictimRule::kAny;
  // For rules that read the ledger (give_allowance, give_cap_milli): the caller calls it before
  // make_room, and make_room again after each round of evictions (only evictions change what
  // queues may lose).
  std::function<void()> refresh;
  // When not empty, per queue index: the most GPU milli the queue may give up (reclaim keeps
  // victim queues at their fair share); kept current by `refresh`.
  std::vector<int64_t> give_cap_milli;
  // When not empty: per queue index × key (queue * give_keys.size() + k), what each queue may
  // still lose of each key resource. The victims chosen on one node are counted together
  // against it (each unit is also checked alone by kOtherQueues).
  std::vector<double> give_allowance;
  std::span<const ResourceId> give_keys;  // CycleContext::key_resources of the pending workload
  bool move_victims = false;              // consolidation: victims must be re-placed in the same statement
  // Reclaim: units the rule may not take (their queue would drop below its fair share) may be
  // moved instead: evicted and re-placed in the same statement, where free room or further
  // evictions under the rule make room for them. Their queues keep what they hold.
  bool move_others = false;
  // Reclaim for a workload that waits for limit room: give_allowance was computed with these terms
  // (QueueLedger::loss_allowance), and a unit loses its GPUs plus its pods' burst of that resource.
  std::optional<QueueLedger::LimitTerms> limits;
};

// True when the workload now runs (the statement committed through the context). For a gang
// with a required topology level (its own or a subgroup's) that gets no room from reclaim or
// preemption, its pending reason gets what a search without the action's limit would have freed
// (PendingReason::reclaim_room, preemption_room).
bool make_room(CycleContext& context, VictimIndex& victims, const RoomRequest& request);

// The same finding for a gang whose reclaim was refused before any search (every queue's
// allowance together falls short of it).
void explain_no_room_by_topology(CycleContext& context, VictimIndex& victims, const RoomRequest& request);

}  // namespace tessera
