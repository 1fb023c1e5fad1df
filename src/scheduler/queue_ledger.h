// Live accounting of what every queue holds during a cycle, and the quota rules that read it
// (docs/design.md §2–§4): limits, non-preemptible work within deserved quota, reclaim only by queues under
// their fair share and only from queues that stay at or above theirs. Allocations and evictions
// are posted to the leaf and rolled up to every ancestor, so each rule is checked on the whole
// path from the leaf to the top.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/queue.h"
#include "policy/fair_share.h"

namespace tessera {

// Why a request may not be allocated in its queue now.
struct QuotaBlock {
  enum class Rule : uint8_t {
    kLimit,               // the queue, or an ancestor, would exceed its limit
    kNonPreemptibleQuota  // non-preemptible work would exceed the deserved quota
  };
  Rule rule;
  QueueIndex queue;     // the queue whose term is exceeded (the leaf or an ancestor)
  ResourceId resource;  // the resource that would exceed it
  double held = 0;      // what the queue holds of it (non-preemptible work only, for that rule)
  double bound = 0;     // the limit or the deserved quota
  double requested = 0;
};

class QueueLedger {
 public:
  // `allocated` and `non_preemptible`: per queue (leaves only are read), per resource.
  // `burst`: per leaf, the GPU-memory limits its running pods hold beyond their requests, in GPUs
  // (may be empty).
  QueueLedger(const QueueTree& tree, const FairShares& shares, std::span<const QueueLoad> loads,
              std::span<const ResourceVector> non_preemptible, std::span<const double> burst = {});

  const QueueTree& tree() const { return tree_; }
  const FairShares& shares() const { return shares_; }
  // Per queue (leaves and inner queues): what it holds now.
  const ResourceVector& allocated(QueueIndex queue) const { return allocated_[queue]; }
  const std::vector<ResourceVector>& allocated() const { return allocated_; }
  // allocated / fair share, dominant over resources (queue_order.h). Remembered per queue until
  // an add or remove reaches it: the queue order asks for it once per candidate workload.
  double dominant_share(QueueIndex queue) const;

  void add(QueueIndex leaf, const ResourceVector& amount, bool preemptible);
  // Counts adds and removes: what the ledger says is unchanged while it stays the same.
  uint64_t version() const { return version_; }
  void remove(QueueIndex leaf, const ResourceVector& amount, bool preemptible);
  // A pod's GPU-memory limit beyond its request, in GPUs: added when it is placed, taken off
  // (negative) when it leaves. What the queue holds of limit room is its GPUs plus this.
  void add_burst(QueueIndex leaf, double gpus);
  double burst(QueueIndex queue) const { return burst_[queue]; }

  // Limits on the whole path, and for non-preemptible work the deserved quota of the key
  // resources (ResourceMeter::key_resources). nullopt: allowed.
  std::optional<QuotaBlock> check_allocation(QueueIndex leaf, std::span<const double> request, bool preemptible,
                                             std::span<const ResourceId> key_resources) const;

  // Whether the leaf queue may reclaim for the request: it holds less than its fair share of
  // every key resource, and holding the request would leave it no further above that share than
  // it is below now (held + request / 2 within the share) — a queue 6 GPUs short with 8-GPU jobs
  // may take one, one 2 GPUs short may not. When not, says which term. (Its ancestors are
  // checked per victim, by loss_allowance: resources moved between two projects of one
  // department do not change what the department holds.)
  struct FairShareExcess {
    QueueIndex queue;
    ResourceId resource;
    double held;
    double fair_share;
    double requested = 0;
  };
  std::optional<FairShareExcess> reclaim_blocked(QueueIndex leaf, std::span<const double> request,
                                                 std::span<const ResourceId> key_resources) const;

  // Whether the leaf queue, counting what `set_aside` (per resource; may be empty) already holds
  // back for it, holds no more than its fair share of each key resource: only then may it reserve
  // nodes, so that a queue borrowing over its share never holds room back from the others. As
  // for reclaim, the ancestors are not asked: a project under its share in a department above
  // it is owed by its siblings.
  bool within_fair_share(QueueIndex leaf, const ResourceVector& set_aside,
                         std::span<const ResourceId> key_resources) const;

  // How much of each key resource each leaf may lose to a reclaim of `request` by
  // `reclaimer_leaf`, into `allowance` (leaf-major: allowance[leaf * keys + k]). Below the nearest
  // common ancestor of the two leaves, every queue on the victim's side must keep each key
  // resource at or above its fair share, and every queue on the reclaimer's side above its leaf
  // must stay as near its fair share with the request added (half of it within the share) as
  // it was when the reclaim began (`before`: allocated() as it was then, read only for the
  // ancestors of `reclaimer_leaf`); a leaf on which that fails may lose
  // nothing (-infinity). One table per attempt turns each victim check into a comparison.
  //
  // With `limits`, for a workload that waits for limit room (docs/gpu-memory.md §Scheduler): on
  // the victims' side the GPU resource is counted in limits — what a queue holds is its GPUs plus
  // its burst, and its share of limit room is its fair share times the cluster's overcommit — so
  // a queue at its share of requests whose pods' limits hold more than its share of the limit
  // room may lose the part above that share, and no more.
  struct LimitTerms {
    ResourceId gpu = 0;
    double overcommit = 1.0;
  };
  void loss_allowance(QueueIndex reclaimer_leaf, std::span<const double> request,
                      const std::vector<ResourceVector>& before, std::span<const ResourceId> key_resources,
                      std::vector<double>& allowance, const LimitTerms* limits = nullptr) const;

 private:
  bool is_ancestor_or_self(QueueIndex ancestor, QueueIndex queue) const {
    return first_[ancestor] <= first_[queue] && first_[queue] <= last_[ancestor];
  }
  // Numbers the queues depth first, so that a queue's subtree is the range first_..last_ of its
  // number: loss_allowance asks whether one queue is above another for every leaf.
  void number_subtrees();

  const QueueTree& tree_;
  const FairShares& shares_;
  std::vector<ResourceVector> allocated_;
  std::vector<ResourceVector> non_preemptible_;
  std::vector<double> burst_;         // per queue, GPUs: see add_burst
  std::vector<size_t> first_, last_;  // per queue: its number, and the last in its subtree
  uint64_t version_ = 0;
  mutable std::vector<double> share_cache_;  // per queue, valid where share_known_
  mutable std::vector<char> share_known_;
  // loss_allowance's scratch, per queue: see there.
  mutable std::vector<char> blocked_below_;
  mutable std::vector<double> path_;
  mutable std::vector<QueueIndex> common_;
};

}  // namespace tessera
