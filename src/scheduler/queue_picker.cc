#include "scheduler/queue_picker.h"

namespace tessera {

QueuePicker::QueuePicker(CycleContext& context, const std::vector<WorkloadId>& candidates)
    : context_(context),
      by_leaf_(context.split_in_run_order(candidates)),
      cursor_(context.tree().size(), 0),
      remaining_(context.tree().size(), 0) {
  const QueueTree& tree = context.tree();
  for (QueueIndex leaf = 0; leaf < by_leaf_.size(); ++leaf) {
    for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree.parent(queue))
      remaining_[queue] += by_leaf_[leaf].size();
  }
}

WorkloadId QueuePicker::next() {
  const QueueTree& tree = context_.tree();
  const uint64_t version = context_.ledger().version();
  if (last_leaf_ == QueueTree::kNoParent || version != last_version_ || remaining_[last_leaf_] == 0) {
    last_leaf_ = pick_leaf();
    last_version_ = version;
    if (last_leaf_ == QueueTree::kNoParent) return -1;
  }
  const QueueIndex chosen = last_leaf_;
  const WorkloadId workload = by_leaf_[chosen][cursor_[chosen]++];
  for (QueueIndex queue = chosen; queue != QueueTree::kNoParent; queue = tree.parent(queue)) --remaining_[queue];
  return workload;
}

QueueIndex QueuePicker::pick_leaf() const {
  const QueueTree& tree = context_.tree();
  const QueueLedger& ledger = context_.ledger();
  const std::vector<QueueIndex>* level = &tree.top_level();
  while (true) {
    QueueIndex best = QueueTree::kNoParent;
    double best_share = 0;
    for (QueueIndex queue : *level) {
      if (remaining_[queue] == 0) continue;
      const double share = ledger.dominant_share(queue);
      if (best == QueueTree::kNoParent || share < best_share ||
          (share == best_share &&
           (tree.spec(queue).priority > tree.spec(best).priority ||
            (tree.spec(queue).priority == tree.spec(best).priority && tree.spec(queue).name < tree.spec(best).name)))) {
        best = queue;
        best_share = share;
      }
    }
    if (best == QueueTree::kNoParent || tree.is_leaf(best)) return best;
    level = &tree.children(best);
  }
}

}  // namespace tessera
