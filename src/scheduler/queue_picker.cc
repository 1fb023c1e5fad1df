#include "scheduler/queue_picker.h"

#include <algorithm>

namespace tessera {

namespace {

// The candidates per leaf in runs_before order. Where all were pending at the start, their places
// in CycleContext::pending() give the order (it is by queue, then runs_before) and the compact
// keys the queue, so no workload is read.
std::vector<std::vector<WorkloadId>> split_candidates(CycleContext& context,
                                                      const std::vector<WorkloadId>& candidates) {
  const size_t queue_count = context.tree().size();
  const bool all_pending = std::all_of(candidates.begin(), candidates.end(),
                                       [&](WorkloadId id) { return context.pending_position(id) >= 0; });
  if (!all_pending) return split_by_queue_in_run_order(context.workloads(), candidates, queue_count);
  std::vector<std::vector<WorkloadId>> by_queue(queue_count);
  std::vector<char> out_of_order(queue_count, 0);
  for (WorkloadId id : candidates) {
    const QueueIndex queue = context.pending_key(id).queue;
    std::vector<WorkloadId>& list = by_queue[queue];
    if (!list.empty() && context.pending_position(list.back()) > context.pending_position(id)) out_of_order[queue] = 1;
    list.push_back(id);
  }
  for (size_t queue = 0; queue < queue_count; ++queue) {
    if (!out_of_order[queue]) continue;
    std::sort(by_queue[queue].begin(), by_queue[queue].end(),
              [&](WorkloadId a, WorkloadId b) { return context.pending_position(a) < context.pending_position(b); });
  }
  return by_queue;
}

}  // namespace

QueuePicker::QueuePicker(CycleContext& context, const std::vector<WorkloadId>& candidates)
    : context_(context),
      by_leaf_(split_candidates(context, candidates)),
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
