// QueueLedger::loss_allowance, computed once per queue for all leaves, against the rule it
// implements walked out leaf by leaf (its header's words), on random trees and holdings.
#include "scheduler/queue_ledger.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scheduler_world.h"

namespace tessera::testing {
namespace {

bool is_ancestor_or_self(const QueueTree& tree, QueueIndex ancestor, QueueIndex queue) {
  for (; queue != QueueTree::kNoParent; queue = tree.parent(queue)) {
    if (queue == ancestor) return true;
  }
  return false;
}

// Per leaf: on the victim's side (up to the common ancestor), the least any queue may lose of
// each key; -infinity where a queue on the reclaimer's side above its leaf (up to the common
// ancestor) would end further from its share than when the reclaim began.
std::vector<double> allowance_leaf_by_leaf(const QueueLedger& ledger, QueueIndex reclaimer,
                                           const ResourceVector& request, const std::vector<ResourceVector>& before,
                                           const std::vector<ResourceId>& keys, const QueueLedger::LimitTerms* limits) {
  const QueueTree& tree = ledger.tree();
  const double slack = 1e-6;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> allowance(tree.size() * keys.size(), -inf);
  for (QueueIndex leaf : tree.leaves()) {
    for (size_t k = 0; k < keys.size(); ++k) {
      double least = inf;
      for (QueueIndex queue = leaf; queue != QueueTree::kNoParent && !is_ancestor_or_self(tree, queue, reclaimer);
           queue = tree.parent(queue)) {
        const bool in_limits = limits != nullptr && keys[k] == limits->gpu;
        const double held = ledger.allocated(queue)[keys[k]] + (in_limits ? ledger.burst(queue) : 0.0);
        const double share = ledger.shares().share(queue, keys[k]) * (in_limits ? limits->overcommit : 1.0);
        least = std::min(least, held - share + slack);
      }
      allowance[leaf * keys.size() + k] = least;
    }
    bool blocked = false;
    for (QueueIndex queue = tree.parent(reclaimer);
         queue != QueueTree::kNoParent && !is_ancestor_or_self(tree, queue, leaf); queue = tree.parent(queue)) {
      for (ResourceId r : keys) {
        const double asked = r < request.size() ? request[r] : 0.0;
        blocked = blocked || before[queue][r] + asked / 2 > ledger.shares().share(queue, r) + slack;
      }
    }
    if (blocked) {
      for (size_t k = 0; k < keys.size(); ++k) allowance[leaf * keys.size() + k] = -inf;
    }
  }
  return allowance;
}

TEST(QueueLedger, LossAllowanceMatchesTheRuleWalkedLeafByLeaf) {
  std::mt19937 random(14);
  const ResourceNames names = ResourceNames::standard();
  const ResourceId gpu = *names.find(kGpuResource);
  const ResourceId cpu = *names.find(kCpuResource);
  const ResourceId memory = *names.find(kMemoryResource);
  int blocked_seen = 0;
  int finite_seen = 0;
  for (int round = 0; round < 300; ++round) {
    // A forest of one to three levels: top-level queues, departments under some, projects under those.
    std::vector<QueueSpec> specs;
    std::uniform_int_distribution<int> count(1, 4);
    std::uniform_real_distribution<double> amount(0, 16);
    const int tops = count(random);
    for (int t = 0; t < tops; ++t) {
      const std::string top = "t" + std::to_string(t);
      specs.push_back(gpu_queue(top, "", amount(random)));
      const int children = count(random) - 1;
      for (int c = 0; c < children; ++c) {
        const std::string child = top + "c" + std::to_string(c);
        specs.push_back(gpu_queue(child, top, amount(random)));
        const int grandchildren = count(random) - 2;
        for (int g = 0; g < grandchildren; ++g)
          specs.push_back(gpu_queue(child + "g" + std::to_string(g), child, amount(random)));
      }
    }
    for (QueueSpec& spec : specs) spec.quota.resize(names.size(), spec.quota.front());
    auto tree = QueueTree::build(specs, names);
    ASSERT_TRUE(tree.ok());
    std::vector<QueueLoad> loads(tree->size());
    for (QueueLoad& load : loads) {
      load.demand.assign(names.size(), 0.0);
      load.allocated.assign(names.size(), 0.0);
      for (ResourceId r = 0; r < names.size(); ++r) {
        load.demand[r] = amount(random) * 2;
        load.allocated[r] = std::min(load.demand[r], amount(random));
      }
    }
    ResourceVector capacity(names.size(), 0.0);
    for (ResourceId r = 0; r < names.size(); ++r) capacity[r] = amount(random) * tree->leaves().size();
    auto shares = compute_fair_shares(*tree, capacity, loads);
    ASSERT_TRUE(shares.ok());
    std::vector<double> burst(tree->size(), 0.0);
    for (QueueIndex leaf : tree->leaves()) burst[leaf] = amount(random) / 4;
    QueueLedger ledger(*tree, *shares, loads, {}, burst);
    const std::vector<ResourceVector> before = ledger.allocated();
    const auto& leaves = tree->leaves();
    const QueueIndex reclaimer = leaves[std::uniform_int_distribution<size_t>(0, leaves.size() - 1)(random)];
    // As reclaim hands it in: `before` only on the reclaimer's ancestors, the rest never read
    // (NaN, which would spread into the table if it were).
    std::vector<ResourceVector> path_only_before(tree->size(), ResourceVector(names.size(), std::nan("")));
    for (QueueIndex queue = tree->parent(reclaimer); queue != QueueTree::kNoParent; queue = tree->parent(queue))
      path_only_before[queue] = before[queue];
    ResourceVector request(names.size(), 0.0);
    for (ResourceId r = 0; r < names.size(); ++r) request[r] = amount(random);
    const std::vector<std::vector<ResourceId>> key_sets{{gpu}, {cpu, memory}, {gpu, cpu, memory}};
    const std::vector<ResourceId>& keys = key_sets[static_cast<size_t>(round) % key_sets.size()];
    const QueueLedger::LimitTerms terms{gpu, 1.5};
    const QueueLedger::LimitTerms* limits = round % 2 == 0 ? &terms : nullptr;
    std::vector<double> allowance;
    // As the reclaim goes on: after each round of evictions (and placements) the table is asked again.
    for (int step = 0; step < 4; ++step) {
      ledger.loss_allowance(reclaimer, request, before, keys, allowance, limits);
      const std::vector<double> expected = allowance_leaf_by_leaf(ledger, reclaimer, request, before, keys, limits);
      ASSERT_EQ(allowance.size(), expected.size());
      for (size_t i = 0; i < expected.size(); ++i)
        ASSERT_EQ(allowance[i], expected[i]) << "round " << round << " step " << step << " entry " << i;
      std::vector<double> from_path;
      ledger.loss_allowance(reclaimer, request, path_only_before, keys, from_path, limits);
      ASSERT_EQ(from_path, allowance) << "round " << round << " step " << step;
      for (QueueIndex leaf : leaves) {
        blocked_seen += expected[leaf * keys.size()] == -std::numeric_limits<double>::infinity();
        finite_seen += std::isfinite(expected[leaf * keys.size()]);
      }
      const QueueIndex changed = leaves[std::uniform_int_distribution<size_t>(0, leaves.size() - 1)(random)];
      ResourceVector delta(names.size(), 0.0);
      for (ResourceId r = 0; r < names.size(); ++r)
        delta[r] = std::min(amount(random) / 2, ledger.allocated(changed)[r]);
      if (step % 2 == 0) {
        ledger.remove(changed, delta, true);
      } else {
        ledger.add(changed, delta, true);
      }
    }
  }
  // Leaves the reclaimer's side blocks and leaves that may lose a finite amount both occur: the
  // comparison covers both sides of the rule.
  EXPECT_GT(blocked_seen, 100);
  EXPECT_GT(finite_seen, 100);
}

}  // namespace
}  // namespace tessera::testing
