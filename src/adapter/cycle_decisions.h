// What a cycle's result means for the API server: which pods to bind where, which to evict and
// for whom, and why each waiting workload waits. A pure function of the snapshot before and
// after the cycle, so the translation from engine decisions to API calls is tested without a
// server.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "adapter/scheduler_memory.h"
#include "adapter/world_snapshot.h"
#include "scheduler/cycle.h"
#include "scheduler/pending_reason.h"
#include "scheduler/start_estimates.h"

namespace tessera::adapter {

struct PodBindingDecision {
  std::string pod_key;
  std::string namespace_name;
  std::string name;
  PodPlacement placement;
  bool fractional = false;
  GpuMemoryTerms gpu_memory;
};

struct VictimDecision {
  std::string workload_key;  // the workload it belongs to (Decisions::evicted, when whole)
  std::string pod_key;
  std::string namespace_name;
  std::string name;
  Action action = Action::kReclaim;
  bool moved = false;  // consolidation: the engine found it another place; its controller recreates it
};

// A workload that starts (or grows) this cycle. With victims, it binds once they are gone.
struct StartDecision {
  std::string workload_key;
  std::string pod_group;
  Action action = Action::kAllocate;
  std::vector<PodBindingDecision> bindings;
  std::vector<VictimDecision> victims;
};

struct WaitingWorkload {
  std::string workload_key;
  std::string pod_group;
  std::vector<std::string> pod_keys;
  std::string reason;              // PendingCode name, or a HeldWorkload reason
  std::string message;             // the sentence (docs/design.md §7)
  std::optional<ObjectRef> owner;  // the Job, JobSet... the user created: told too
  // When it is expected to start (Unix seconds; none without an estimate), and what makes room
  // for it — or why there is no estimate (scheduler/start_estimates.h).
  std::optional<double> estimated_start;
  std::string estimate;
  // Its place in its queue (1: the first the next cycle considers there) among the queue's
  // pending workloads; none for a workload the engine does not know (held by the adapter).
  struct QueuePlace {
    std::string queue;
    int position = 0;
    int pending = 0;
  };
  std::optional<QueuePlace> queue_place;
  // What consolidate, reclaim and preempt found when this cycle tried to make room for it.
  std::vector<RoomAttempt> room_attempts;
};

// A whole gang evicted this cycle (not elastic extras alone): its restart is awaited, its owner
// told (docs/workloads.md, "Restarts").
struct EvictedWorkload {
  std::string pod_group;           // "namespace/name", empty for a single pod
  std::optional<ObjectRef> owner;  // the Job, JobSet... the user created
  std::string queue;
  Action action = Action::kReclaim;
  int pods = 0;           // evicted
  double gpus = 0;        // what its evicted pods held
  double started_at = 0;  // Unix seconds: when its gang last started
};

struct Decisions {
  std::vector<StartDecision> starts;
  std::vector<WaitingWorkload> waiting;
  std::map<std::string, EvictedWorkload> evicted;  // by workload key
};

// `before`: every pod's binding in the snapshot before the cycle ran (by PodId).
Decisions decide(const Snapshot& snapshot, const std::vector<std::optional<Binding>>& before,
                 const CycleResult& result);

// Gives each waiting workload the engine knows its start estimate, or the reason it has none.
void attach_estimates(Decisions& decisions, const Snapshot& snapshot, const StartEstimates& estimates);

}  // namespace tessera::adapter
