// Why a workload is still pending after a cycle (docs/design.md §7): a code for programs, the facts behind
// it (the quota term, the nodes per failed predicate, what reclaim found), and a sentence for
// people rendered from those facts only when asked, so a cycle with 100,000 pending workloads
// does not format 100,000 sentences nobody reads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/placer.h"
#include "policy/fair_share.h"
#include "scheduler/queue_ledger.h"

namespace tessera {

enum class PendingCode : uint8_t {
  kQueueLimit,           // its queue (or an ancestor) is at its limit
  kNonPreemptibleQuota,  // non-preemptible work may use only the deserved quota, which is in use
  kUnschedulable,        // no node can take its gang now, and no action could make room
  kEvicted,              // it was running and was evicted this cycle; it waits for room again
};

// "QueueLimit", "NonPreemptibleQuota", "Unschedulable", "Evicted"
std::string_view pending_code_name(PendingCode code);

// What reclaim or preemption found for a gang with a required topology level when it made no
// room (docs/topology.md#explanations): the domain a search without the action's limit (the
// victim queues' fair share; the victims' lower priority) would have freed, by evicting which
// workloads, and what each victim queue may lose under that limit. No domain: not even every
// preemptible workload past its minimum runtime would free one.
struct TopologyRoomFinding {
  std::string level;   // "rack"
  std::string domain;  // "r7"; empty: no domain could be freed
  struct Victims {
    QueueIndex queue = 0;
    int workloads = 0;
    double gpus = 0;       // what evicting them frees
    double may_lose = -1;  // reclaim: GPUs the queue may lose above its fair share (-1: not asked)
    int not_lower = 0;     // preemption: of `workloads`, those of the gang's priority or higher
  };
  std::vector<Victims> victims;  // per queue, most workloads first
};

struct PendingReason {
  PendingCode code = PendingCode::kUnschedulable;
  std::optional<QuotaBlock> quota;  // kQueueLimit, kNonPreemptibleQuota: the term in the way
  FailureSummary nodes;             // kUnschedulable: nodes per failed predicate, for the gang pod that failed
  int gang_size = 1;
  // kUnschedulable: what the actions that could have made room found.
  std::optional<QueueLedger::FairShareExcess> reclaim_blocked;  // set: reclaim not allowed, the queue is at its share
  bool consolidation_tried = false;
  bool reclaim_tried = false;
  bool preemption_tried = false;
  std::shared_ptr<const TopologyRoomFinding> reclaim_room;     // set where reclaim found one
  std::shared_ptr<const TopologyRoomFinding> preemption_room;  // set where preemption found one
  // kUnschedulable: the nodes it holds in reservation while they drain (0: none), and for how long.
  int reserved_nodes = 0;
  double reserved_seconds = 0;
  // kEvicted: the action that evicted it and the workload it made room for.
  std::string evicted_by;
  std::string evicted_for;
};

// One sentence, e.g. "pod 1 of a gang of 4 fits on no node (12 nodes: not enough idle GPUs;
// 3 nodes: untolerated taint); no reclaim: queue 'susan' holds 8 gpu, at or above its fair
// share of 6".
std::string describe(const PendingReason& reason, const QueueTree& tree);

// What one action that could have made room for a waiting workload found, in the cycle that
// tried it: "reclaim" — "reclaim found no victims that free enough room without pushing their
// queues below fair share". The PodGroup status carries these apart from the sentence.
struct RoomAttempt {
  std::string_view action;  // "consolidate", "reclaim" or "preempt"
  std::string outcome;
};
// kUnschedulable: the attempts in the order the cycle made them (consolidate, reclaim, preempt);
// empty when none was tried (the workload waits for a quota, or the actions are off).
std::vector<RoomAttempt> room_attempts(const PendingReason& reason, const QueueTree& tree);

// A quantity of a queue resource as people read it: GPUs as a number, CPU in cores, memory in GiB.
std::string format_resource_amount(std::string_view resource, double amount);

}  // namespace tessera
