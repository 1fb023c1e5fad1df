// Hands out candidate workloads queue by queue in hierarchical DRF order (SPEC §3 step 4, §4):
// at every level of the tree the child with the lowest dominant share of its fair share goes
// first (ties: higher queue priority, then name), down to a leaf, whose next workload by
// priority and age is taken. Shares are read live from the ledger, so a queue that was just
// given resources drops back in the order.
#pragma once

#include <vector>

#include "scheduler/cycle_context.h"

namespace tessera {

class QueuePicker {
 public:
  // `candidates` in any order; each leaf's are sorted by runs_before.
  QueuePicker(CycleContext& context, const std::vector<WorkloadId>& candidates);

  // The next candidate, or -1 when none is left. Each candidate is handed out once.
  WorkloadId next();

 private:
  CycleContext& context_;
  std::vector<std::vector<WorkloadId>> by_leaf_;  // per queue index (leaves only)
  std::vector<size_t> cursor_;                    // per leaf: the next candidate
  std::vector<size_t> remaining_;                 // per queue: candidates left in its subtree
};

}  // namespace tessera
