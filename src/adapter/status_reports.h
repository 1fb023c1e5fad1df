// The status Tessera writes back: PodGroup status (phase, counts, the Scheduled condition with
// the pending reason of docs/design.md §7) and Queue status (deserved, allocated, requested, still pending, fair share). Pure
// functions of the snapshot and the cycle; the scheduler patches only what changed.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "adapter/cycle_decisions.h"
#include "adapter/restart_ledger.h"
#include "adapter/world_snapshot.h"

namespace tessera::adapter {

// What a workload's time or idle-GPU limit last said (limit_enforcer.h): the PodGroup's condition
// WorkLimit, True while a notice or its outcome stands, False once a notice was withdrawn.
struct LimitStanding {
  bool in_force = true;
  std::string reason;   // LimitNotice, LimitStopped, LimitRequeued, LimitPreemptible, LimitNoticeWithdrawn
  std::string message;  // "idle for 45 min (limit 60 min, GPU utilisation under 5%): stops in 15 min ..."
};

struct PodGroupProgress {
  std::set<std::string> bound;                            // pod keys bound or being bound after this cycle
  std::map<std::string, const WaitingWorkload*> waiting;  // PodGroup key -> why it waits
  std::map<std::string, LimitStanding> limits;            // PodGroup key -> what its limits last said
  const RestartLedger* restarts = nullptr;                // restarts and lost GPU-hours, where known
};

// The status a PodGroup should have. `current` is the object as cached: its condition keeps
// its lastTransitionTime while the condition's status does not change.
nlohmann::json pod_group_status(const nlohmann::json& current, const Snapshot& snapshot,
                                const PodGroupProgress& progress, double now);

// Per queue name: the status each Queue should have after the cycle, with its Accepted condition
// (True; reason Valid, or the warning's reason and message from `snapshot.queue_problems`), and
// for the queues left out of the tree just the condition Accepted=False with the reason.
// `current` has the cached Queue objects by name: a condition keeps its lastTransitionTime
// while its status does not change.
std::map<std::string, nlohmann::json> queue_statuses(const Snapshot& snapshot, const CycleResult& result,
                                                     const std::map<std::string, kube::ObjectPtr>& current,
                                                     double now);

// When the object's condition of this type last changed: its lastTransitionTime while its status
// is still `status`, else `now` (the condition is about to change).
std::string condition_transition_time(const nlohmann::json& object, std::string_view type, std::string_view status,
                                      double now);

// Whether `status` differs from the object's current status in anything but timestamps.
bool status_differs(const nlohmann::json& object, const nlohmann::json& status);

// A quantity in a resource's own unit, as the status prints it: GPUs as a decimal ("2.5"),
// cpu from millicores ("1500m"), memory from bytes ("20Gi").
std::string format_resource(std::string_view resource, double amount);

}  // namespace tessera::adapter
