// Where each pending workload stands in its queue: its place among the leaf queue's pending
// workloads in the order the allocate action considers them there (runs_before: higher
// priority first, then the older, then the lower id; fair share orders the queues, not the
// workloads within one), and how many wait in that queue. `tessera describe` shows it as
// "3 of 7 in queue research-nlp".
#pragma once

#include <span>
#include <vector>

#include "scheduler/cycle.h"

namespace tessera {

struct QueuePosition {
  WorkloadId workload = -1;
  QueueIndex queue = 0;  // its leaf queue
  int position = 0;      // 1 for the first the queue considers
  int pending = 0;       // the queue's pending workloads
};

// One entry per pending workload of `pending` (CycleResult::pending: those that waited and those
// evicted, which wait again), ordered by queue, then position.
std::vector<QueuePosition> queue_positions(const WorkloadSet& workloads, std::span<const PendingWorkload> pending);

}  // namespace tessera
