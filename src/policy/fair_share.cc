#include "policy/fair_share.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

namespace tessera {

std::optional<Error> queue_quota_error(const QueueSpec& spec, const ResourceNames& resources) {
  if (spec.quota.size() > resources.size()) {
    return Error{fmt::format("queue '{}': quota lists {} resources, but only {} are defined ({})", spec.name,
                             spec.quota.size(), resources.size(), fmt::join(resources.names(), ", "))};
  }
  for (ResourceId r = 0; r < spec.quota.size(); ++r) {
    const QueueQuota& quota = spec.quota[r];
    const std::string& resource = resources.name(r);
    if (!std::isfinite(quota.deserved) || quota.deserved < 0) {
      return Error{fmt::format("queue '{}': deserved[{}] = {} must be a finite number >= 0", spec.name, resource,
                               quota.deserved)};
    }
    if (!std::isfinite(quota.over_quota_weight) || quota.over_quota_weight < 0) {
      return Error{fmt::format("queue '{}': over_quota_weight[{}] = {} must be a finite number >= 0", spec.name,
                               resource, quota.over_quota_weight)};
    }
    // Written so that NaN fails too; +inf is allowed and means unlimited.
    if (quota.limit && !(*quota.limit >= quota.deserved)) {
      return Error{fmt::format("queue '{}': limit[{}] = {} is below deserved[{}] = {}", spec.name, resource,
                               *quota.limit, resource, quota.deserved)};
    }
  }
  return std::nullopt;
}

namespace {

// Names the cycle that `start`, a queue no top-level queue leads to, sits on or hangs below.
Error cycle_error(const std::vector<QueueSpec>& specs, const std::vector<QueueIndex>& parents, QueueIndex start) {
  std::vector<QueueIndex> path;
  std::vector<bool> on_path(specs.size(), false);
  QueueIndex queue = start;
  while (!on_path[queue]) {
    on_path[queue] = true;
    path.push_back(queue);
    queue = parents[queue];  // never kNoParent: the walk would have reached a top-level queue
  }
  const auto first = std::find(path.begin(), path.end(), queue);
  std::vector<std::string_view> names;
  for (auto it = first; it != path.end(); ++it) names.push_back(specs[*it].name);
  names.push_back(specs[queue].name);
  return Error{fmt::format("queue '{}': parent forms a cycle ({})", specs[queue].name, fmt::join(names, " -> "))};
}

// A child's claim on what a parent hands out in one water-filling round.
struct Claim {
  QueueIndex queue;
  double weight;  // > 0
  double cap;     // > 0
  double given = 0;
  bool full = false;  // given == cap; lets the caller set the exact demand rather than e + (D - e)
};

// Gives every claim min(cap, level * weight), with the level at which the gifts sum to `amount`,
// or every claim its cap when the caps sum to no more. Claims saturate in order of cap / weight
// (ties by queue index, so the result does not depend on the claims' order); once the next
// claim's cap is above the level, everyone left shares what is left in proportion to weight.
// Returns the amount handed out.
double water_fill(std::vector<Claim>& claims, double amount) {
  const double caps = std::accumulate(claims.begin(), claims.end(), 0.0,
                                      [](double sum, const Claim& claim) { return sum + claim.cap; });
  if (caps <= amount) {
    for (Claim& claim : claims) {
      claim.given = claim.cap;
      claim.full = true;
    }
    return caps;
  }
  std::sort(claims.begin(), claims.end(), [](const Claim& a, const Claim& b) {
    // cap_a / weight_a < cap_b / weight_b, without dividing.
    const double lhs = a.cap * b.weight;
    const double rhs = b.cap * a.weight;
    return lhs != rhs ? lhs < rhs : a.queue < b.queue;
  });
  // Suffix sums of the weights, summed from the end so that the last ones are exact.
  std::vector<double> weight_left(claims.size() + 1, 0.0);
  for (size_t i = claims.size(); i-- > 0;) weight_left[i] = weight_left[i + 1] + claims[i].weight;
  double left = amount;
  double handed = 0;
  for (size_t i = 0; i < claims.size(); ++i) {
    if (claims[i].cap * weight_left[i] <= left * claims[i].weight) {  // cap / weight <= left / weights left
      claims[i].given = claims[i].cap;
      claims[i].full = true;
      left = std::max(0.0, left - claims[i].cap);
      handed += claims[i].cap;
      continue;
    }
    for (size_t j = i; j < claims.size(); ++j) {
      claims[j].given = left * claims[j].weight / weight_left[i];
      handed += claims[j].given;
    }
    break;
  }
  return handed;
}

// The working set for one resource, each vector indexed by queue.
struct ResourcePass {
  std::vector<double> demand;  // capped, absorbable demand (step 1)
  std::vector<double> weight;  // effective over-quota weight
  std::vector<double> in_quota;
  std::vector<double> fair;
  std::vector<double> usage;  // recent usage, inner queues summing their leaves (time-based fairness)
};

// Steps 2 and 3 at one parent: divides `share` among `children`.
void divide(const QueueTree& tree, ResourceId r, const std::vector<QueueIndex>& children, double share,
            ResourcePass& pass) {
  double entitled_total = 0;
  for (QueueIndex child : children) {
    pass.in_quota[child] = std::min(tree.quota(child, r).deserved, pass.demand[child]);
    pass.fair[child] = pass.in_quota[child];
    entitled_total += pass.in_quota[child];
  }
  std::vector<Claim> claims;
  if (entitled_total > share) {
    // Step 2, over-subscribed: the share is water-filled in proportion to deserved, capped by
    // entitlement, so a child asking less than its cut quota keeps all it asks and the rest
    // go to those that want more. Nothing is left for step 3.
    for (QueueIndex child : children) {
      if (pass.in_quota[child] > 0) claims.push_back({child, tree.quota(child, r).deserved, pass.in_quota[child]});
    }
    water_fill(claims, share);
    for (const Claim& claim : claims) {
      if (!claim.full) pass.in_quota[claim.queue] = pass.fair[claim.queue] = claim.given;
    }
    return;
  }
  // Step 3: what is left, one priority level at a time, highest first.
  double left = share - entitled_total;
  std::vector<QueueIndex> hungry;
  for (QueueIndex child : children) {
    if (pass.weight[child] > 0 && pass.demand[child] > pass.in_quota[child]) hungry.push_back(child);
  }
  std::stable_sort(hungry.begin(), hungry.end(),
                   [&](QueueIndex a, QueueIndex b) { return tree.spec(a).priority > tree.spec(b).priority; });
  for (size_t begin = 0; begin < hungry.size() && left > 0;) {
    size_t end = begin;
    claims.clear();
    while (end < hungry.size() && tree.spec(hungry[end]).priority == tree.spec(hungry[begin]).priority) {
      const QueueIndex child = hungry[end++];
      claims.push_back({child, pass.weight[child], pass.demand[child] - pass.in_quota[child]});
    }
    left = std::max(0.0, left - water_fill(claims, left));
    for (const Claim& claim : claims) {
      pass.fair[claim.queue] = claim.full ? pass.demand[claim.queue] : pass.in_quota[claim.queue] + claim.given;
    }
    begin = end;
  }
}

void run_pass(const QueueTree& tree, ResourceId r, double capacity, ResourcePass& pass) {
  divide(tree, r, tree.top_level(), capacity, pass);
  for (QueueIndex queue : tree.top_down()) {
    if (!tree.is_leaf(queue)) divide(tree, r, tree.children(queue), pass.fair[queue], pass);
  }
}

// Divides each queue's weight by 1 + penalty * max(0, usage / fair - 1), fair being the share
// just computed. Returns false, changing nothing, when no queue has any recent usage.
bool penalise_recent_usage(const QueueTree& tree, ResourceId r, std::span<const QueueLoad> loads, double penalty,
                           ResourcePass& pass) {
  pass.usage.assign(tree.size(), 0.0);
  bool any_usage = false;
  for (auto it = tree.top_down().rbegin(); it != tree.top_down().rend(); ++it) {
    const QueueIndex queue = *it;
    if (tree.is_leaf(queue)) pass.usage[queue] = resource_at(loads[queue].recent_usage, r);
    for (QueueIndex child : tree.children(queue)) pass.usage[queue] += pass.usage[child];
    any_usage = any_usage || pass.usage[queue] > 0;
  }
  if (!any_usage) return false;
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
    // A queue with no fair share has nothing to be measured against: its weight stays.
    if (pass.fair[queue] <= 0) continue;
    const double excess = std::max(0.0, pass.usage[queue] / pass.fair[queue] - 1);
    pass.weight[queue] /= 1 + penalty * excess;
  }
  return true;
}

std::optional<Error> check_vector(const ResourceVector& vector, const QueueTree& tree, std::string_view owner,
                                  std::string_view field, bool allow_empty) {
  if (vector.size() != tree.resource_count() && !(allow_empty && vector.empty())) {
    return Error{fmt::format("{}: {} has {} entries, expected {} ({})", owner, field, vector.size(),
                             tree.resource_count(), fmt::join(tree.resources().names(), ", "))};
  }
  for (ResourceId r = 0; r < vector.size(); ++r) {
    if (!std::isfinite(vector[r]) || vector[r] < 0) {
      return Error{fmt::format("{}: {}[{}] = {} must be a finite number >= 0", owner, field, tree.resources().name(r),
                               vector[r])};
    }
  }
  return std::nullopt;
}

std::optional<Error> check_input(const QueueTree& tree, const ResourceVector& capacity,
                                 std::span<const QueueLoad> loads, const FairShareOptions& options) {
  if (auto error = check_vector(capacity, tree, "fair share", "capacity", false)) return error;
  if (loads.size() != tree.size()) {
    return Error{fmt::format("fair share: {} queue loads for {} queues", loads.size(), tree.size())};
  }
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
    const std::string owner = fmt::format("queue '{}'", tree.spec(queue).name);
    if (auto error = check_vector(loads[queue].demand, tree, owner, "demand", true)) return error;
    if (auto error = check_vector(loads[queue].allocated, tree, owner, "allocated", true)) return error;
    if (auto error = check_vector(loads[queue].recent_usage, tree, owner, "recent_usage", true)) return error;
  }
  if (!std::isfinite(options.usage_penalty) || options.usage_penalty < 0) {
    return Error{fmt::format("fair share: usage_penalty = {} must be a finite number >= 0", options.usage_penalty)};
  }
  return std::nullopt;
}

}  // namespace

Result<QueueTree> QueueTree::build(std::vector<QueueSpec> specs, ResourceNames resources) {
  QueueTree tree;
  const size_t n = specs.size();
  for (QueueIndex queue = 0; queue < n; ++queue) {
    const QueueSpec& spec = specs[queue];
    if (spec.name.empty()) return Error{fmt::format("queue #{}: name is empty", queue)};
    for (QueueIndex other = 0; other < queue; ++other) {
      if (specs[other].name == spec.name) return Error{fmt::format("queue '{}': duplicate name", spec.name)};
    }
    if (auto error = queue_quota_error(spec, resources)) return *error;
  }
  tree.parents_.assign(n, kNoParent);
  tree.children_.assign(n, {});
  for (QueueIndex queue = 0; queue < n; ++queue) {
    const QueueSpec& spec = specs[queue];
    if (spec.parent.empty()) {
      tree.top_level_.push_back(queue);
      continue;
    }
    auto parent = std::find_if(specs.begin(), specs.end(), [&](const QueueSpec& s) { return s.name == spec.parent; });
    if (parent == specs.end()) {
      return Error{fmt::format("queue '{}': parent '{}' is not a queue", spec.name, spec.parent)};
    }
    tree.parents_[queue] = static_cast<QueueIndex>(parent - specs.begin());
    tree.children_[tree.parents_[queue]].push_back(queue);
  }
  tree.top_down_ = tree.top_level_;
  for (size_t i = 0; i < tree.top_down_.size(); ++i) {
    for (QueueIndex child : tree.children_[tree.top_down_[i]]) tree.top_down_.push_back(child);
  }
  if (tree.top_down_.size() != n) {
    std::vector<bool> reached(n, false);
    for (QueueIndex queue : tree.top_down_) reached[queue] = true;
    const auto unreached = static_cast<QueueIndex>(std::find(reached.begin(), reached.end(), false) - reached.begin());
    return cycle_error(specs, tree.parents_, unreached);
  }
  for (QueueIndex queue = 0; queue < n; ++queue) {
    if (tree.children_[queue].empty()) tree.leaves_.push_back(queue);
    specs[queue].quota.resize(resources.size());
  }
  tree.specs_ = std::move(specs);
  tree.resources_ = std::move(resources);
  return tree;
}

std::vector<QueueIndex> QueueTree::depth_first() const {
  std::vector<QueueIndex> order;
  order.reserve(size());
  std::vector<QueueIndex> stack(top_level_.rbegin(), top_level_.rend());
  while (!stack.empty()) {
    const QueueIndex queue = stack.back();
    stack.pop_back();
    order.push_back(queue);
    stack.insert(stack.end(), children_[queue].rbegin(), children_[queue].rend());
  }
  return order;
}

int QueueTree::depth(QueueIndex queue) const {
  int depth = 0;
  for (QueueIndex up = parents_[queue]; up != kNoParent; up = parents_[up]) ++depth;
  return depth;
}

std::optional<QueueIndex> QueueTree::find(std::string_view name) const {
  for (QueueIndex queue = 0; queue < specs_.size(); ++queue) {
    if (specs_[queue].name == name) return queue;
  }
  return std::nullopt;
}

Result<FairShares> compute_fair_shares(const QueueTree& tree, const ResourceVector& capacity,
                                       std::span<const QueueLoad> loads, const FairShareOptions& options) {
  if (auto error = check_input(tree, capacity, loads, options)) return *error;
  const size_t n = tree.size();
  FairShares result;
  result.demand.assign(n, ResourceVector(tree.resource_count(), 0.0));
  result.in_quota = result.demand;
  result.fair_share = result.demand;
  ResourcePass pass;
  for (ResourceId r = 0; r < tree.resource_count(); ++r) {
    pass.demand.assign(n, 0.0);
    pass.weight.assign(n, 0.0);
    pass.in_quota.assign(n, 0.0);
    pass.fair.assign(n, 0.0);
    // Step 1, bottom-up. A child with weight 0 never gets more than its deserved quota, so
    // only that much of its demand counts towards its parent's: counting the rest would win the
    // parent over-quota share that none of its children could take.
    for (auto it = tree.top_down().rbegin(); it != tree.top_down().rend(); ++it) {
      const QueueIndex queue = *it;
      const QueueQuota& quota = tree.quota(queue, r);
      pass.weight[queue] = quota.over_quota_weight;
      double demand = 0;
      if (tree.is_leaf(queue)) {
        demand = resource_at(loads[queue].demand, r);
      } else {
        for (QueueIndex child : tree.children(queue)) {
          const QueueQuota& child_quota = tree.quota(child, r);
          demand += child_quota.over_quota_weight > 0 ? pass.demand[child]
                                                      : std::min(child_quota.deserved, pass.demand[child]);
        }
      }
      pass.demand[queue] = std::min(demand, quota.limit_or_infinity());
    }
    run_pass(tree, r, capacity[r], pass);

    if (options.usage_penalty > 0 && penalise_recent_usage(tree, r, loads, options.usage_penalty, pass)) {
      run_pass(tree, r, capacity[r], pass);
    }
    for (QueueIndex queue = 0; queue < n; ++queue) {
      result.demand[queue][r] = pass.demand[queue];
      result.in_quota[queue][r] = pass.in_quota[queue];
      result.fair_share[queue][r] = pass.fair[queue];
    }
  }
  return result;
}

double decay_usage(double previous, double current_allocation, double dt_seconds, double half_life_seconds) {
  if (dt_seconds <= 0) return previous;
  if (half_life_seconds <= 0) return current_allocation;
  const double keep = std::exp2(-dt_seconds / half_life_seconds);
  return previous * keep + current_allocation * (1 - keep);
}

ResourceVector decay_usage(const ResourceVector& previous, const ResourceVector& current_allocation, double dt_seconds,
                           double half_life_seconds) {
  ResourceVector usage(std::max(previous.size(), current_allocation.size()), 0.0);
  for (ResourceId r = 0; r < usage.size(); ++r) {
    usage[r] = decay_usage(resource_at(previous, r), resource_at(current_allocation, r), dt_seconds, half_life_seconds);
  }
  return usage;
}

}  // namespace tessera
