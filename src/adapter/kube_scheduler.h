// `tessera scheduler`: the engine's cycle run against a Kubernetes API server. Informers keep
// caches of nodes, pods, queues, pod groups and namespaces; each cycle builds the engine's
// world from them (world_snapshot), runs the same run_cycle as `tessera sim`, and carries out
// the decisions through the API: bindings, evictions, status and events. The adapter adds no
// scheduling rules of its own. With leader election, only the lease holder runs cycles; a
// standby keeps warm caches to take over quickly.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "adapter/limit_enforcer.h"
#include "adapter/metrics.h"
#include "core/node_pool.h"
#include "dashboard/dashboard_routes.h"
#include "kube/api_client.h"
#include "kube/leader_election.h"
#include "scheduler/cycle.h"
#include "scheduler/start_estimates.h"

namespace tessera::adapter {

struct SchedulerOptions {
  std::string policy = "tessera";
  // Reclaim's moves are off: on Kubernetes a move is an eviction, and only pods a controller
  // recreates come back.
  CycleOptions cycle = [] {
    CycleOptions options;
    options.reclaim_moves = false;
    return options;
  }();
  double cycle_interval_seconds = 1.0;   // the longest wait between cycles
  double cycle_debounce_seconds = 0.02;  // a change starts a cycle this long after it
  int api_workers = 16;                  // concurrent bindings and evictions
  bool events = true;
  bool leader_elect = false;
  kube::LeaderElectionConfig election;
  std::string listen;  // host:port for /metrics, /healthz, /readyz and /ui; empty: none
  // The dashboard at /ui on `listen` (docs/dashboard.md), and whom it answers: loopback peers
  // only, or callers whose Kubernetes token may list PodGroups in all namespaces.
  bool dashboard = true;
  dashboard::DashboardAuth dashboard_auth = dashboard::DashboardAuth::kLoopback;
  double cache_sync_timeout_seconds = 120;
  int watch_timeout_seconds = 300;  // asked of the server for each watch, which then starts anew
  double room_plan_timeout_seconds = 300;  // victims not gone by then: the plan is dropped
  double assumed_binding_timeout_seconds = 30;
  double eviction_retry_seconds = 10;  // after a refused eviction, the wait before evicting for that workload again
  int64_t max_cycles = -1;             // stop after this many cycles (tests, benchmarks); -1: run until stopped
  // Each node pool's GPU-memory overcommit (core/node_pool.h); empty: 1.0 everywhere.
  GpuMemoryOvercommit gpu_memory_overcommit;
  // GPU utilisation for idle-GPU limits (limit_enforcer.h); without a Prometheus URL idle detection is off.
  TelemetryOptions telemetry;
  // Start-time estimates for pending workloads (scheduler/start_estimates.h), in PodGroup status.
  bool start_estimates = true;
  EstimateOptions estimates = [] {
    EstimateOptions options;
    options.max_wall_seconds = 0.25;  // of a cycle that runs every second
    return options;
  }();
};

// What one cycle did, for logs and benchmarks.
struct CycleTiming {
  double snapshot_seconds = 0;
  double engine_seconds = 0;
  double bind_seconds = 0;  // bindings and evictions, wall time
  int pods_bound = 0;
  int evictions = 0;
  int waiting = 0;
};

class KubeScheduler {
 public:
  KubeScheduler(kube::ApiClient& client, SchedulerOptions options);
  ~KubeScheduler();
  KubeScheduler(const KubeScheduler&) = delete;
  KubeScheduler& operator=(const KubeScheduler&) = delete;

  // Runs until `stop` is set (returns 0), max_cycles are done (0), the caches cannot sync (2),
  // or this replica loses the lease (1: the process should exit and restart as a standby).
  int run(const std::atomic<bool>& stop);

  const Metrics& metrics() const;
  // Totals over the cycles run so far.
  CycleTiming totals() const;
  int64_t cycles() const;
  // Seconds from run() to synced caches; 0 until then.
  double cache_sync_seconds() const;
  // Port the health/metrics server listens on (when `listen` named port 0), else 0.
  int listen_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::adapter
