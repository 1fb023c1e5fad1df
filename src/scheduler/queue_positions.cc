#include "scheduler/queue_positions.h"

#include "scheduler/cycle_context.h"

namespace tessera {

std::vector<QueuePosition> queue_positions(const WorkloadSet& workloads, std::span<const PendingWorkload> pending) {
  std::vector<WorkloadId> ids;
  ids.reserve(pending.size());
  for (const PendingWorkload& entry : pending) ids.push_back(entry.workload);
  sort_by_queue_and_run_order(workloads, ids);  // the order the next cycle's allocate takes them in
  std::vector<QueuePosition> positions;
  positions.reserve(ids.size());
  for (size_t first = 0; first < ids.size();) {
    const QueueIndex queue = workloads[ids[first]].queue;
    size_t end = first;
    while (end < ids.size() && workloads[ids[end]].queue == queue) ++end;
    for (size_t i = first; i < end; ++i) {
      positions.push_back({ids[i], queue, static_cast<int>(i - first + 1), static_cast<int>(end - first)});
    }
    first = end;
  }
  return positions;
}

}  // namespace tessera
