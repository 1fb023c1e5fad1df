// What one scheduling cycle leaves to the next (docs/design.md §4): the reservations in force and
// each queue's remembered use for time-based fairness. Each caller of run_cycle — the simulator,
// the Kubernetes adapter, the tests — holds one and hands it to every cycle, which brings it up
// to date. Its ids are the cycle's (workload ids, node and queue indices, resource ids): a caller
// whose ids change between cycles translates it by name, as the adapter does.
#pragma once

#include <vector>

#include "core/queue.h"
#include "engine/cluster_state.h"
#include "policy/fair_share.h"
#include "scheduler/resource_meter.h"
#include "scheduler/workload_set.h"

namespace tessera {

// Nodes held for a pending workload while they drain (docs/design.md §4 step 2). Other work may not be
// placed there, except work with a time limit that ends before the reservation is due.
struct Reservation {
  WorkloadId workload = -1;
  std::vector<NodeIndex> nodes;
  double since = 0;        // when it was made
  double due = kNeverDue;  // when its nodes are expected free: the latest end, by time limit, of what
                           // runs there; kNeverDue when something there has no time limit
};

struct CarriedState {
  // In force after the last cycle. A cycle drops those whose workload is no longer pending, and
  // nodes out of range or reserved twice.
  std::vector<Reservation> reservations;
  // Time-based fairness (FairShareOptions::usage_penalty > 0; untouched while it is off). Per
  // queue, per resource: the decayed past allocation up to `usage_at`, and what the queue held
  // from then on (the allocation the last cycle left, inner queues summed). A cycle at time t
  // first fades `held` into `recent_usage` over t - usage_at.
  std::vector<ResourceVector> recent_usage;
  std::vector<ResourceVector> held;
  double usage_at = 0;
};

// Brings `recent_usage` up to `now` (one entry per queue): what each queue held since `usage_at`
// fades into it with the half-life.
void fade_into_recent_usage(CarriedState& carried, size_t queue_count, double now, double half_life_seconds);

// The remembered use per queue (inner queues summed) as if each queue had held only what runs
// now, from when each running workload started: what a scheduler that restarts can rebuild from
// the cluster alone. Work that ended before `now` is not seen, so it reads low for queues whose
// past work is gone; it converges to the true figure within a few half-lives.
std::vector<ResourceVector> usage_of_running_work(const WorkloadSet& workloads, const ClusterState& cluster,
                                                  const QueueTree& queues, const ResourceMeter& meter, double now,
                                                  double half_life_seconds);

}  // namespace tessera
