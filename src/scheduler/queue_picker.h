// Hands out candidate workloads queue by queue in hierarchical DRF order (docs/design.md §3 step 4, §4):
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
  // `candidates` in any order; each leaf's are taken in runs_before order (parts of
  // CycleContext::pending() are in it already, and are not sorted again).
  QueuePicker(CycleContext& context, const std::vector<WorkloadId>& candidates);

  // The next candidate, or -1 when none is left. Each candidate is handed out once.
  WorkloadId next();

 private:
  // The leaf hierarchical DRF order takes from next; kNoParent when none has candidates left.
  QueueIndex pick_leaf() const;

  CycleContext& context_;
  std::vector<std::vector<WorkloadId>> by_leaf_;  // per queue index (leaves only)
  std::vector<size_t> cursor_;                    // per leaf: the next candidate
  std::vector<size_t> remaining_;                 // per queue: candidates left in its subtree
  // The leaf last chosen and the ledger version it was chosen at: while the ledger is the same
  // and the leaf has candidates left, every queue compares as it did, and the leaf wins again.
  QueueIndex last_leaf_ = QueueTree::kNoParent;
  uint64_t last_version_ = 0;
};

}  // namespace tessera
