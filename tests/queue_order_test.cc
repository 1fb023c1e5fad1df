#include "policy/queue_order.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>

namespace tessera {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

QueueTree gpu_cpu_tree(std::vector<QueueSpec> specs, ResourceNames resources = {"gpu", "cpu"}) {
  Result<QueueTree> tree = QueueTree::build(std::move(specs), std::move(resources));
  if (!tree) ADD_FAILURE() << tree.error().message;
  return std::move(tree).value();
}

QueueSpec leaf(std::string name, int priority = 0, std::string parent = "") {
  return QueueSpec{std::move(name), std::move(parent), priority, {}};
}

// Fair shares given directly, per queue index: order_queues only reads fair_share.
FairShares fair_shares(std::vector<ResourceVector> fair) {
  FairShares shares;
  shares.fair_share = std::move(fair);
  return shares;
}

std::vector<QueueLoad> allocations(std::vector<ResourceVector> allocated) {
  std::vector<QueueLoad> loads(allocated.size());
  for (size_t i = 0; i < allocated.size(); ++i) loads[i].allocated = std::move(allocated[i]);
  return loads;
}

std::vector<std::string> names(const QueueTree& tree, const std::vector<QueueIndex>& order) {
  std::vector<std::string> result;
  for (QueueIndex queue : order) result.push_back(tree.spec(queue).name);
  return result;
}

TEST(QueueOrder, DominantShare) {
  // gpu 2 of 4 = 0.5, cpu 4000 of 16000 = 0.25: dominant 0.5.
  EXPECT_DOUBLE_EQ(dominant_share({4, 16000}, {2, 4000}), 0.5);
  // gpu 1 of 4 = 0.25, cpu 12000 of 16000 = 0.75: cpu dominates.
  EXPECT_DOUBLE_EQ(dominant_share({4, 16000}, {1, 12000}), 0.75);
  EXPECT_DOUBLE_EQ(dominant_share({4, 16000}, {}), 0);
  EXPECT_DOUBLE_EQ(dominant_share({4, 16000}, {6, 0}), 1.5);  // above fair share: more than 1
  // A resource with no fair share counts only if the queue holds some of it.
  EXPECT_DOUBLE_EQ(dominant_share({0, 16000}, {0, 8000}), 0.5);
  EXPECT_EQ(dominant_share({0, 16000}, {1, 0}), kInfinity);
  EXPECT_EQ(dominant_share({}, {0.001}), kInfinity);
  EXPECT_DOUBLE_EQ(dominant_share({}, {}), 0);
}

TEST(QueueOrder, LowestDominantShareFirst) {
  // Fair shares gpu 4, cpu 16000 each. a: 0.5 (gpu), b: 0.75 (cpu), c: 0 (nothing yet),
  // d: holds a GPU although its GPU fair share is 0 -> +inf, last.
  QueueTree tree = gpu_cpu_tree({leaf("a"), leaf("b"), leaf("c"), leaf("d")});
  FairShares shares = fair_shares({{4, 16000}, {4, 16000}, {4, 16000}, {0, 16000}});
  auto loads = allocations({{2, 4000}, {1, 12000}, {0, 0}, {1, 0}});
  EXPECT_EQ(names(tree, order_queues(tree, shares, loads)), (std::vector<std::string>{"c", "a", "b", "d"}));
}

TEST(QueueOrder, TiesByPriorityThenName) {
  // All at dominant share 0.5 (b and y through cpu); priority 2 first, then 1 (a before b by
  // name), then 0 (x before y). Infinity ties are broken the same way: inf-hi before inf-lo.
  QueueTree tree =
      gpu_cpu_tree({leaf("y"), leaf("b", 1), leaf("x"), leaf("a", 1), leaf("top", 2), leaf("inf-lo", 0), leaf("inf-hi", 5)});
  FairShares shares = fair_shares({{4, 8}, {4, 8}, {4, 8}, {4, 8}, {4, 8}, {0, 8}, {0, 8}});
  auto loads = allocations({{0, 4}, {0, 4}, {2, 0}, {2, 1}, {2, 4}, {1, 0}, {1, 0}});
  EXPECT_EQ(names(tree, order_queues(tree, shares, loads)),
            (std::vector<std::string>{"top", "a", "b", "x", "y", "inf-hi", "inf-lo"}));
}

TEST(QueueOrder, OnlyLeavesWithFairSharesFromTheTree) {
  // A two-level tree through compute_fair_shares: 8 GPUs, dept (deserved 6) with p1, p2
  // (deserved 3 each), and solo (deserved 2). Everyone demands plenty: dept 6, solo 2;
  // p1 = p2 = 3. Allocated: p1 3 (share 1), p2 1 (1/3), solo 1 (1/2). The department is not
  // listed: only leaves hold workloads.
  QueueTree tree =
      gpu_cpu_tree({QueueSpec{"dept", "", 0, {QueueQuota{6, 1, {}}}}, QueueSpec{"p1", "dept", 0, {QueueQuota{3, 1, {}}}},
               QueueSpec{"p2", "dept", 0, {QueueQuota{3, 1, {}}}}, QueueSpec{"solo", "", 0, {QueueQuota{2, 1, {}}}}},
              {"gpu"});
  std::vector<QueueLoad> loads(4);
  loads[1] = {{8}, {3}, {}};
  loads[2] = {{8}, {1}, {}};
  loads[3] = {{8}, {1}, {}};
  Result<FairShares> shares = compute_fair_shares(tree, {8}, loads);
  ASSERT_TRUE(shares.ok()) << shares.error().message;
  EXPECT_DOUBLE_EQ(shares->share(1, 0), 3);
  EXPECT_DOUBLE_EQ(shares->share(3, 0), 2);
  EXPECT_EQ(names(tree, order_queues(tree, *shares, loads)), (std::vector<std::string>{"p2", "solo", "p1"}));
}

TEST(QueueOrder, WorkedExampleOfTheDocs) {
  // docs/fair-share.md: fair shares p1 8.5, p2 2, p3 4.5, q1 1; holding 4, 2, 6, 1 GPUs:
  // dominant shares 0.47, 1, 1.33, 1 -> p1, then p2 and q1 (tied, by name), then p3.
  QueueTree tree = gpu_cpu_tree(
      {QueueSpec{"research", "", 0, {QueueQuota{10, 1, {}}}}, QueueSpec{"infer", "", 0, {QueueQuota{6, 1, {}}}},
       QueueSpec{"p1", "research", 0, {QueueQuota{4, 1, {}}}}, QueueSpec{"p2", "research", 0, {QueueQuota{4, 1, {}}}},
       QueueSpec{"p3", "research", 0, {QueueQuota{0, 1, {}}}}, QueueSpec{"q1", "infer", 0, {QueueQuota{6, 1, {}}}}},
      {"gpu"});
  std::vector<QueueLoad> loads(6);
  loads[2] = {{10}, {4}, {}};
  loads[3] = {{2}, {2}, {}};
  loads[4] = {{10}, {6}, {}};
  loads[5] = {{1}, {1}, {}};
  Result<FairShares> shares = compute_fair_shares(tree, {16}, loads);
  ASSERT_TRUE(shares.ok()) << shares.error().message;
  EXPECT_EQ(shares->fair_share, (std::vector<ResourceVector>{{15}, {1}, {8.5}, {2}, {4.5}, {1}}));
  EXPECT_EQ(names(tree, order_queues(tree, *shares, loads)), (std::vector<std::string>{"p1", "p2", "q1", "p3"}));
}

TEST(QueueOrder, RandomOrdersAreSortedPermutationsOfTheLeaves) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 2000; ++trial) {
    SCOPED_TRACE(trial);
    const size_t n = 1 + rng() % 10;
    std::vector<QueueSpec> specs;
    std::vector<ResourceVector> fair, allocated;
    for (size_t i = 0; i < n; ++i) {
      // One draw per statement: argument evaluation order is unspecified.
      const std::string name = fmt::format("q{}", rng() % 1000 * 100 + i);
      const int priority = static_cast<int>(rng() % 3);
      const bool nested = i > 0 && rng() % 3 == 0;
      specs.push_back(leaf(name, priority, nested ? specs[rng() % i].name : ""));
      // Coarse values so that ties and zero fair shares come up.
      const double fair_gpu = static_cast<double>(rng() % 3);
      fair.push_back({fair_gpu, static_cast<double>(rng() % 3)});
      const double allocated_gpu = static_cast<double>(rng() % 3);
      allocated.push_back({allocated_gpu, unit(rng) < 0.5 ? 0.0 : 1.0});
    }
    QueueTree tree = gpu_cpu_tree(specs);
    std::vector<QueueLoad> loads = allocations(allocated);
    const std::vector<QueueIndex> order = order_queues(tree, fair_shares(fair), loads);
    std::vector<QueueIndex> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, tree.leaves());
    for (size_t i = 1; i < order.size(); ++i) {
      const double before = dominant_share(fair[order[i - 1]], allocated[order[i - 1]]);
      const double after = dominant_share(fair[order[i]], allocated[order[i]]);
      ASSERT_LE(before, after);
      if (before == after) {
        const QueueSpec& a = tree.spec(order[i - 1]);
        const QueueSpec& b = tree.spec(order[i]);
        ASSERT_TRUE(a.priority > b.priority || (a.priority == b.priority && a.name < b.name));
      }
    }
  }
}

}  // namespace
}  // namespace tessera
