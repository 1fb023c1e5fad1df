// The limits step on Kubernetes (docs/kubernetes.md, "Time limits and idle GPUs"): before each
// cycle, GPU utilisation is read from Prometheus (when one is configured and a read is due), the
// LimitLedger judges every running workload of the snapshot, and the snapshot is marked (held
// workloads, workloads made preemptible) before the cycle sees it. What the API must be told —
// notices and verdicts as events, pods to delete (stop) or evict (requeue) — comes back to the
// scheduler, which writes it. Without Prometheus, idle limits never act (there is nothing to
// measure); maximum runtimes still do. Prometheus down pauses idle accrual; it never stops
// scheduling, and never ends work.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "adapter/gpu_telemetry.h"
#include "adapter/metrics.h"
#include "adapter/status_reports.h"
#include "adapter/world_snapshot.h"
#include "scheduler/limit_ledger.h"

namespace tessera::adapter {

struct TelemetryOptions {
  std::string prometheus_url;  // empty: idle detection is off
  std::string query{kDefaultUtilisationQuery};
  double read_interval_seconds = 10;  // at most one read per window this often
  double timeout_seconds = 2;  // a Prometheus that does not answer delays a cycle by at most this
};

// What the scheduler tells the API server about one workload's limits.
struct LimitNotice {
  std::string workload_key;
  std::string pod_group;  // "namespace/name", empty when it has none
  std::vector<std::string> pod_keys;
  std::string type;    // "Normal" or "Warning"
  std::string reason;  // LimitNotice, LimitNoticeWithdrawn, LimitStopped, LimitRequeued, LimitPreemptible, LimitClamped
  std::string message;
};

struct LimitActions {
  std::vector<LimitNotice> notices;
  std::vector<std::string> delete_pods;  // stopped workloads' pods
  std::vector<std::string> evict_pods;   // requeued workloads' pods
};

class LimitEnforcer {
 public:
  explicit LimitEnforcer(TelemetryOptions options);

  // The start-up line: whether idle detection is on, and from where.
  std::string describe() const;
  // Per PodGroup key: what its workload's limits last said, while the workload is known.
  const std::map<std::string, LimitStanding>& standing() const { return standing_; }
  // Reviews the snapshot's workloads at `now` and marks the snapshot. Updates the metrics
  // tessera_workload_idle_seconds, tessera_workloads_ended_total / _requeued_total{reason},
  // tessera_gpu_telemetry_up; `log` gets a line when telemetry fails or comes back.
  LimitActions review(Snapshot& snapshot, double now, Metrics& metrics, const std::function<void(std::string)>& log);

 private:
  void read_utilisation(const Snapshot& snapshot, double now, Metrics& metrics,
                        const std::function<void(std::string)>& log);

  TelemetryOptions options_;
  std::optional<PrometheusClient> prometheus_;
  LimitLedger ledger_;
  std::map<std::string, std::vector<std::string>> clamped_said_;  // workload -> sentences said
  std::map<std::string, LimitStanding> standing_;                 // PodGroup key -> last said
  std::map<std::string, std::string> standing_workload_;          // PodGroup key -> its workload
  std::map<int64_t, std::map<std::string, double>> utilisation_;  // window seconds -> pod -> percent
  double read_at_ = -1;
  bool telemetry_up_ = false;
  std::string last_error_;
};

}  // namespace tessera::adapter
