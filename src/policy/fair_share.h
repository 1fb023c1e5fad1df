// Fair share (docs/design.md §3): how much of each resource every queue is due this cycle, computed
// top-down through the queue tree, each resource on its own. The rules, with formulas and a
// worked example, are in docs/fair-share.md; in short, at every parent:
//   1. demand: a leaf's is what its workloads request, an inner queue's is what its children
//      can absorb; both capped by the queue's limit;
//   2. each child is entitled to min(deserved, demand); if the entitlements exceed the parent's
//      share, the share is divided in proportion to deserved, no child above its entitlement;
//   3. the rest goes to children with unmet demand in proportion to over-quota weight, by
//      water-filling, one priority level at a time from the highest;
//   4. a child's fair share is what its own children divide.
// Pure functions of their arguments: same input, same output, bit for bit.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/queue.h"
#include "core/result.h"

namespace tessera {

// A validated queue tree. Queue indices are the positions in the spec list it was built from;
// children keep that order. Every spec's quota is padded to the resource count.
class QueueTree {
 public:
  static constexpr QueueIndex kNoParent = static_cast<QueueIndex>(-1);

  // Fails, naming the queue and the field, on: an empty or duplicate name, an unknown parent, a
  // parent cycle, a quota for more resources than `resources` names, a negative or non-finite
  // deserved or weight, a limit below deserved (or not a number).
  static Result<QueueTree> build(std::vector<QueueSpec> specs, ResourceNames resources);

  size_t size() const { return specs_.size(); }
  size_t resource_count() const { return resources_.size(); }
  const ResourceNames& resources() const { return resources_; }
  const QueueSpec& spec(QueueIndex queue) const { return specs_[queue]; }
  const QueueQuota& quota(QueueIndex queue, ResourceId resource) const { return specs_[queue].quota[resource]; }
  std::optional<QueueIndex> find(std::string_view name) const;

  QueueIndex parent(QueueIndex queue) const { return parents_[queue]; }
  bool is_leaf(QueueIndex queue) const { return children_[queue].empty(); }
  const std::vector<QueueIndex>& children(QueueIndex queue) const { return children_[queue]; }
  const std::vector<QueueIndex>& top_level() const { return top_level_; }
  const std::vector<QueueIndex>& leaves() const { return leaves_; }
  // Every queue, each after its parent (breadth first from the top-level queues).
  const std::vector<QueueIndex>& top_down() const { return top_down_; }
  // Every queue, each followed by its subtree, children in order: the order a tree is printed in.
  std::vector<QueueIndex> depth_first() const;
  // How many ancestors a queue has: 0 for a top-level queue.
  int depth(QueueIndex queue) const;

 private:
  QueueTree() = default;

  std::vector<QueueSpec> specs_;
  ResourceNames resources_;
  std::vector<QueueIndex> parents_;
  std::vector<std::vector<QueueIndex>> children_;
  std::vector<QueueIndex> top_level_;
  std::vector<QueueIndex> leaves_;
  std::vector<QueueIndex> top_down_;
};

// Why a queue's quota is unusable (naming the queue, the resource and the term), or nothing:
// a quota for more resources than `resources` names, a negative or non-finite deserved quota or
// weight, a limit below deserved.
std::optional<Error> queue_quota_error(const QueueSpec& spec, const ResourceNames& resources);

struct FairShareOptions {
  // Time-based fairness, off at 0: a queue whose recent usage of a resource exceeded its fair
  // share gets its over-quota weight for that resource divided by
  //   1 + usage_penalty * max(0, recent_usage / fair_share - 1)
  // where fair_share is the share computed without the penalty; the shares are then computed
  // again with those weights. Deserved quotas are untouched.
  double usage_penalty = 0;
  // Half-life in seconds of the remembered use (decay_usage) the penalty compares.
  double usage_half_life_seconds = 3600;
};

// Per queue (leaves and inner queues, by queue index), per resource.
struct FairShares {
  std::vector<ResourceVector> demand;      // step 1: what the queue can absorb, capped by its limit
  std::vector<ResourceVector> in_quota;    // step 2: the part of fair_share that is deserved quota
  std::vector<ResourceVector> fair_share;  // in_quota plus the over-quota share

  double share(QueueIndex queue, ResourceId resource) const { return fair_share[queue][resource]; }
};

// `loads` is indexed by queue index and has one entry per queue (inner queues' are ignored);
// vectors in it may be empty (all zero) or one entry per resource, as must `capacity`. Fails on
// a shape mismatch or a negative or non-finite quantity.
Result<FairShares> compute_fair_shares(const QueueTree& tree, const ResourceVector& capacity,
                                       std::span<const QueueLoad> loads, const FairShareOptions& options = {});

// Exponentially decayed usage: the mean of the allocation over the recent past, each instant
// weighted by 2^(-age / half_life). Over a step of dt seconds with the allocation held at
// `current`:  usage' = previous * f + current * (1 - f),  f = 2^(-dt / half_life).
// Steps compose: two steps of dt equal one of 2 dt. dt <= 0 returns previous; a half-life <= 0
// (no memory) returns current.
double decay_usage(double previous, double current_allocation, double dt_seconds, double half_life_seconds);
// The same per resource; the result has the longer of the two lengths.
ResourceVector decay_usage(const ResourceVector& previous, const ResourceVector& current_allocation, double dt_seconds,
                           double half_life_seconds);

}  // namespace tessera
