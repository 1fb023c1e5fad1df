#include "scheduler/queue_ledger.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "policy/queue_order.h"

namespace tessera {

namespace {

// Quantities are sums of doubles (fractions of GPUs); comparisons allow for their rounding.
constexpr double kSlack = 1e-6;

}  // namespace

QueueLedger::QueueLedger(const QueueTree& tree, const FairShares& shares, std::span<const QueueLoad> loads,
                         std::span<const ResourceVector> non_preemptible, std::span<const double> burst)
    : tree_(tree),
      shares_(shares),
      allocated_(tree.size(), ResourceVector(tree.resource_count(), 0.0)),
      non_preemptible_(tree.size(), ResourceVector(tree.resource_count(), 0.0)),
      burst_(tree.size(), 0.0),
      share_cache_(tree.size(), 0.0),
      share_known_(tree.size(), 0) {
  number_subtrees();
  for (QueueIndex leaf : tree.leaves()) {
    if (leaf < loads.size()) add(leaf, loads[leaf].allocated, true);
    if (leaf < burst.size()) add_burst(leaf, burst[leaf]);
    if (leaf < non_preemptible.size()) {
      for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree.parent(queue)) {
        for (ResourceId r = 0; r < non_preemptible[leaf].size() && r < tree.resource_count(); ++r) {
          non_preemptible_[queue][r] += non_preemptible[leaf][r];
        }
      }
    }
  }
}

double QueueLedger::dominant_share(QueueIndex queue) const {
  if (!share_known_[queue]) {
    share_cache_[queue] = tessera::dominant_share(shares_.fair_share[queue], allocated_[queue]);
    share_known_[queue] = 1;
  }
  return share_cache_[queue];
}

void QueueLedger::add(QueueIndex leaf, const ResourceVector& amount, bool preemptible) {
  ++version_;
  for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree_.parent(queue)) {
    share_known_[queue] = 0;
    for (ResourceId r = 0; r < amount.size() && r < tree_.resource_count(); ++r) {
      allocated_[queue][r] += amount[r];
      if (!preemptible) non_preemptible_[queue][r] += amount[r];
    }
  }
}

void QueueLedger::remove(QueueIndex leaf, const ResourceVector& amount, bool preemptible) {
  ++version_;
  for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree_.parent(queue)) {
    share_known_[queue] = 0;
    for (ResourceId r = 0; r < amount.size() && r < tree_.resource_count(); ++r) {
      allocated_[queue][r] -= amount[r];
      if (!preemptible) non_preemptible_[queue][r] -= amount[r];
    }
  }
}

void QueueLedger::add_burst(QueueIndex leaf, double gpus) {
  if (gpus == 0) return;
  ++version_;
  for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree_.parent(queue)) burst_[queue] += gpus;
}

std::optional<QuotaBlock> QueueLedger::check_allocation(QueueIndex leaf, std::span<const double> request,
                                                        bool preemptible,
                                                        std::span<const ResourceId> key_resources) const {
  for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree_.parent(queue)) {
    for (ResourceId r = 0; r < request.size() && r < tree_.resource_count(); ++r) {
      // The limit first: most queues have none, and then the request is not loaded.
      const QueueQuota& quota = tree_.quota(queue, r);
      if (!quota.limit || request[r] <= 0) continue;
      if (allocated_[queue][r] + request[r] > *quota.limit + kSlack) {
        return QuotaBlock{QuotaBlock::Rule::kLimit, queue, r, allocated_[queue][r], *quota.limit, request[r]};
      }
    }
    if (preemptible) continue;
    for (ResourceId r : key_resources) {
      const double deserved = tree_.quota(queue, r).deserved;
      if (non_preemptible_[queue][r] + resource_at(request, r) > deserved + kSlack) {
        return QuotaBlock{QuotaBlock::Rule::kNonPreemptibleQuota,
                          queue,
                          r,
                          non_preemptible_[queue][r],
                          deserved,
                          resource_at(request, r)};
      }
    }
  }
  return std::nullopt;
}

std::optional<QueueLedger::FairShareExcess> QueueLedger::reclaim_blocked(
    QueueIndex leaf, std::span<const double> request, std::span<const ResourceId> key_resources) const {
  for (ResourceId r : key_resources) {
    const double fair = shares_.share(leaf, r);
    if (allocated_[leaf][r] + resource_at(request, r) / 2 > fair + kSlack) {
      return FairShareExcess{leaf, r, allocated_[leaf][r], fair, resource_at(request, r)};
    }
  }
  return std::nullopt;
}

bool QueueLedger::within_fair_share(QueueIndex leaf, const ResourceVector& set_aside,
                                    std::span<const ResourceId> key_resources) const {
  for (ResourceId r : key_resources) {
    if (allocated_[leaf][r] + resource_at(set_aside, r) > shares_.share(leaf, r) + kSlack) return false;
  }
  return true;
}

void QueueLedger::number_subtrees() {
  first_.assign(tree_.size(), 0);
  last_.assign(tree_.size(), 0);
  size_t number = 0;
  std::vector<std::pair<QueueIndex, size_t>> path;  // queues from a top-level one down, and the next child of each
  for (QueueIndex top : tree_.top_level()) {
    first_[top] = number++;
    path.emplace_back(top, 0);
    while (!path.empty()) {
      const QueueIndex queue = path.back().first;
      const size_t child = path.back().second++;
      if (child < tree_.children(queue).size()) {
        const QueueIndex next = tree_.children(queue)[child];
        first_[next] = number++;
        path.emplace_back(next, 0);
      } else {
        last_[queue] = number - 1;
        path.pop_back();
      }
    }
  }
}

void QueueLedger::loss_allowance(QueueIndex reclaimer_leaf, std::span<const double> request,
                                 const std::vector<ResourceVector>& before, std::span<const ResourceId> key_resources,
                                 std::vector<double>& allowance, const LimitTerms* limits) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr QueueIndex kNone = QueueTree::kNoParent;
  const size_t keys = key_resources.size();
  // The reclaimer's side, walked up from its leaf: whether a queue strictly between the leaf and
  // each of its ancestors would end further from its fair share (kept per ancestor; kNone's
  // entry, at the end of blocked_below_, is for a victim with no common ancestor).
  blocked_below_.assign(tree_.size() + 1, 0);
  bool blocked = false;
  for (QueueIndex queue = tree_.parent(reclaimer_leaf); queue != kNone; queue = tree_.parent(queue)) {
    blocked_below_[queue] = blocked ? 1 : 0;
    for (ResourceId r : key_resources) {
      blocked = blocked || before[queue][r] + resource_at(request, r) / 2 > shares_.share(queue, r) + kSlack;
    }
  }
  blocked_below_[tree_.size()] = blocked ? 1 : 0;
  // The victim's side, parents first: per queue, the least that it and its ancestors below the
  // common ancestor with the reclaimer may lose, and that common ancestor. Every queue is read
  // once per call, not once per leaf below it: this runs after every round of evictions.
  path_.resize(tree_.size() * keys);
  common_.resize(tree_.size());
  for (QueueIndex queue : tree_.top_down()) {
    const QueueIndex parent = tree_.parent(queue);
    double* path = &path_[queue * keys];
    if (is_ancestor_or_self(queue, reclaimer_leaf)) {
      std::fill(path, path + keys, kInf);
      common_[queue] = queue;
      continue;
    }
    common_[queue] = parent == kNone ? kNone : common_[parent];
    for (size_t k = 0; k < keys; ++k) {
      const ResourceId r = key_resources[k];
      const bool in_limits = limits != nullptr && r == limits->gpu;
      const double held = allocated_[queue][r] + (in_limits ? burst_[queue] : 0.0);
      const double share = shares_.share(queue, r) * (in_limits ? limits->overcommit : 1.0);
      path[k] = std::min(parent == kNone ? kInf : path_[parent * keys + k], held - share + kSlack);
    }
  }
  allowance.assign(tree_.size() * keys, -kInf);
  for (QueueIndex leaf : tree_.leaves()) {
    const QueueIndex common = common_[leaf];
    if (blocked_below_[common == kNone ? tree_.size() : common]) continue;
    std::copy_n(&path_[leaf * keys], keys, &allowance[leaf * keys]);
  }
}

}  // namespace tessera
