// Restarts and lost work per gang (docs/workloads.md, "Restarts and lost GPU-hours"): a gang that
// Tessera evicted (preempted, reclaimed, consolidated) or one of whose pods failed is interrupted;
// when it runs again, that is one restart. Lost GPU-hours are counted at the interruption: the
// GPUs the gang held x the seconds it ran since it started or since its last checkpoint,
// whichever is later.
// The tallies live in each PodGroup's status, so a restarted scheduler reads them back.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessera::adapter {

// The PodGroup annotation (RFC 3339) a workload may set when it saves a checkpoint: work before
// it is not lost by an eviction.
inline constexpr std::string_view kCheckpointAnnotation = "scheduling.tessera.dev/last-checkpoint";

struct RestartTally {
  int restarts = 0;
  double lost_gpu_hours = 0;
  std::string last_restart_reason;  // the reason of the interruption the last restart followed
  // An interruption not yet followed by a start: its reason (Preempted, Reclaimed, Consolidated,
  // PodFailed) and when (Unix seconds).
  std::optional<std::string> interrupted_by;
  double interrupted_at = 0;
  double run_started_at = 0;  // when the interrupted run started: a later start is a restart
  // The uids of the interrupted run's pods: a bound pod not among them is a new run's. Not in
  // status; a tally read back compares start times instead.
  std::set<std::string> run_pods;
  std::set<std::string> failed_pods;  // pod keys seen Failed (not in status: read again from the pods)
};

// One interruption of a gang.
struct Interruption {
  std::string pod_group;           // "namespace/name"
  std::string reason;              // Preempted, Reclaimed, Consolidated, PodFailed
  double gpus = 0;                 // what the gang held
  double started_at = 0;           // Unix seconds: when the interrupted run started
  double run_from = 0;             // Unix seconds: the later of its start and its last checkpoint
  double at = 0;                   // Unix seconds
  std::set<std::string> run_pods;  // the uids of the gang's pods
};

// Unix seconds of the PodGroup's last-checkpoint annotation; 0 when absent or unreadable.
double last_checkpoint(const nlohmann::json& pod_group);

class RestartLedger {
 public:
  // A PodGroup's tally as its status says, taken once per PodGroup (the first time it is seen,
  // after a start or a restart of the scheduler); later the ledger's own counts are newer.
  // Returns whether this was the first time.
  bool read_back(const std::string& key, const nlohmann::json& pod_group);

  // The gang's pods now Failed: whether one failed that was not seen Failed before, an
  // interruption (PodFailed) of its own, not Tessera's doing. With `first_sight` (the PodGroup
  // first seen this cycle, after a start or a restart of the scheduler) they are only noted: a
  // failure from before is either counted in the status read back or not known.
  bool pods_failed(const std::string& key, const std::vector<std::string>& failed, bool first_sight);

  // The gang was interrupted: returns the GPU-hours lost. A second interruption before it runs
  // again (the eviction of a failed gang, say) loses nothing more and counts no second restart.
  double interrupted(const Interruption& interruption);

  // The gang runs, on pods with these uids, the last of which started at `started_at` (Unix
  // seconds): returns the reason of the interruption this run follows, counted as a restart, or
  // nullopt (no interruption awaited, or the pods are those of the interrupted run, in their
  // termination grace). Where the interrupted run's pods are not known (read back after a
  // restart of the scheduler), a run that started later is a new one.
  std::optional<std::string> started(const std::string& key, double started_at, const std::set<std::string>& pods);

  const RestartTally* tally(const std::string& key) const;
  // Forgets the PodGroups not in `keys` (deleted).
  void keep_only(const std::set<std::string>& keys);

 private:
  std::map<std::string, RestartTally> tallies_;
};

// The status fields a PodGroup's tally sets (restarts, lostGpuHours, lastRestartReason,
// interruption), to merge into the status pod_group_status makes; null members clear a field.
nlohmann::json restart_status(const RestartTally& tally);

}  // namespace tessera::adapter
