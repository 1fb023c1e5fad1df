#include "policy/fair_share.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>

namespace tessera {
namespace {

constexpr double kExact = 1e-12;

QueueQuota quota(double deserved, double weight = 1, std::optional<double> limit = std::nullopt) {
  return QueueQuota{deserved, weight, limit};
}

QueueSpec queue(std::string name, std::string parent, std::vector<QueueQuota> quotas, int priority = 0) {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  spec.priority = priority;
  spec.quota = std::move(quotas);
  return spec;
}

QueueTree tree_of(std::vector<QueueSpec> specs, ResourceNames resources = {"gpu"}) {
  Result<QueueTree> tree = QueueTree::build(std::move(specs), std::move(resources));
  if (!tree) ADD_FAILURE() << tree.error().message;
  return std::move(tree).value();
}

// Loads indexed by queue, from demands given by queue name.
std::vector<QueueLoad> demands(const QueueTree& tree, const std::map<std::string, ResourceVector>& by_name) {
  std::vector<QueueLoad> loads(tree.size());
  for (const auto& [name, demand] : by_name) loads.at(*tree.find(name)).demand = demand;
  return loads;
}

FairShares shares_of(const QueueTree& tree, const ResourceVector& capacity, const std::vector<QueueLoad>& loads,
                     FairShareOptions options = {}) {
  Result<FairShares> shares = compute_fair_shares(tree, capacity, loads, options);
  if (!shares) ADD_FAILURE() << shares.error().message;
  return std::move(shares).value();
}

double share(const QueueTree& tree, const FairShares& shares, std::string_view name, ResourceId r = 0) {
  return shares.share(*tree.find(name), r);
}

std::string build_error(std::vector<QueueSpec> specs, ResourceNames resources = {"gpu", "cpu"}) {
  Result<QueueTree> tree = QueueTree::build(std::move(specs), std::move(resources));
  return tree ? "(built)" : tree.error().message;
}

// --- Worked examples (docs/design.md §3) --------------------------------------------------------

// Three researchers' queues on 8 GPUs, each deserving 2 with weight 1.
std::vector<QueueSpec> three_researchers() {
  return {queue("alice", "", {quota(2)}), queue("bob", "", {quota(2)}), queue("carol", "", {quota(2)})};
}

TEST(FairShare, ThreeEqualQueuesAllBusy) {
  // Step 2: 2 each (6 of 8). Step 3: the 2 left split 1:1:1 -> 2/3 each. 2 + 2/3 = 8/3 = 2.667.
  QueueTree tree = tree_of(three_researchers());
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"alice", {8}}, {"bob", {8}}, {"carol", {8}}}));
  for (const char* name : {"alice", "bob", "carol"}) {
    EXPECT_NEAR(share(tree, shares, name), 8.0 / 3, kExact) << name;
    EXPECT_DOUBLE_EQ(shares.in_quota[*tree.find(name)][0], 2) << name;
    EXPECT_DOUBLE_EQ(shares.demand[*tree.find(name)][0], 8) << name;
  }
}

TEST(FairShare, IdleQueueLeavesItsQuotaToTheOthers) {
  // carol demands 0: entitled min(2, 0) = 0. alice, bob: 2 each, the 4 left split 1:1 -> 4 each.
  QueueTree tree = tree_of(three_researchers());
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"alice", {8}}, {"bob", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "alice"), 4);
  EXPECT_DOUBLE_EQ(share(tree, shares, "bob"), 4);
  EXPECT_DOUBLE_EQ(share(tree, shares, "carol"), 0);
}

TEST(FairShare, LimitCapsAndTheRestIsRedistributed) {
  // alice's limit 2.5 caps her demand at 2.5. Step 2: 2 each, 2 left. Water-filling at weight 1:
  // the level would be 2/3 each, but alice can take only 0.5; she is full, and the 1.5 left
  // split between bob and carol: 0.75 each. alice 2.5, bob = carol = 2.75 (sum 8).
  std::vector<QueueSpec> specs = three_researchers();
  specs[0].quota[0].limit = 2.5;
  QueueTree tree = tree_of(specs);
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"alice", {8}}, {"bob", {8}}, {"carol", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "alice"), 2.5);
  EXPECT_DOUBLE_EQ(share(tree, shares, "bob"), 2.75);
  EXPECT_DOUBLE_EQ(share(tree, shares, "carol"), 2.75);
  EXPECT_DOUBLE_EQ(shares.demand[0][0], 2.5);
}

TEST(FairShare, LimitOfThreeOnAHeavierQueue) {
  // Nothing deserved; weights alice 2, bob 1, carol 1; alice limited to 3. Without the limit
  // alice would get 8 * 2/4 = 4. With it: level 8/4 = 2 per unit weight, alice's cap 3 <= 2*2, so
  // she is full at 3; the 5 left split 1:1 -> bob = carol = 2.5.
  QueueTree tree =
      tree_of({queue("alice", "", {quota(0, 2, 3)}), queue("bob", "", {quota(0)}), queue("carol", "", {quota(0)})});
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"alice", {8}}, {"bob", {8}}, {"carol", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "alice"), 3);
  EXPECT_DOUBLE_EQ(share(tree, shares, "bob"), 2.5);
  EXPECT_DOUBLE_EQ(share(tree, shares, "carol"), 2.5);
}

TEST(FairShare, OversubscribedQuotasAreCutInProportionToDeserved) {
  // Deserved 6 + 4 + 2 = 12 on 8 GPUs, everyone demanding 8: each gets deserved * 8/12:
  // 4, 2.667, 1.333. Nothing is left for over-quota.
  QueueTree tree = tree_of({queue("a", "", {quota(6)}), queue("b", "", {quota(4)}), queue("c", "", {quota(2)})});
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"a", {8}}, {"b", {8}}, {"c", {8}}}));
  EXPECT_NEAR(share(tree, shares, "a"), 4, kExact);
  EXPECT_NEAR(share(tree, shares, "b"), 8.0 / 3, kExact);
  EXPECT_NEAR(share(tree, shares, "c"), 4.0 / 3, kExact);
  EXPECT_NEAR(shares.in_quota[0][0], 4, kExact);
}

TEST(FairShare, CutNeverGivesMoreThanEntitledAndPassesTheRestOn) {
  // Deserved a 6, b 6, c 4 (16) on 8; a demands only 2, so entitlements are 2, 6, 4 (12 > 8).
  // Water-filling in proportion to deserved, capped by entitlement: at level 8/16 = 0.5 per unit
  // of deserved a would get 3 > 2, so a is full at 2; the 6 left at weights 6:4 -> b 3.6, c 2.4.
  // (Scaling the entitlements instead would give a 2 * 8/12 = 1.333 although 2 fit in a's cut
  // quota of 3: a queue asking for less than its cut quota would lose some of it.)
  QueueTree tree = tree_of({queue("a", "", {quota(6)}), queue("b", "", {quota(6)}), queue("c", "", {quota(4)})});
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"a", {2}}, {"b", {8}}, {"c", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "a"), 2);
  EXPECT_NEAR(share(tree, shares, "b"), 3.6, kExact);
  EXPECT_NEAR(share(tree, shares, "c"), 2.4, kExact);
}

TEST(FairShare, OverQuotaSplitsByWeight) {
  // Deserved 1 each on 8; 6 left, weights 2:1 -> 4 and 2. a = 5, b = 3.
  QueueTree tree = tree_of({queue("a", "", {quota(1, 2)}), queue("b", "", {quota(1, 1)})});
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"a", {8}}, {"b", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "a"), 5);
  EXPECT_DOUBLE_EQ(share(tree, shares, "b"), 3);
}

TEST(FairShare, ZeroWeightGetsNoOverQuota) {
  // a: deserved 2, weight 0. b: deserved 2, weight 1. 8 GPUs, both demanding 8:
  // a 2 (deserved only), b 2 + all 4 left = 6.
  QueueTree tree = tree_of({queue("a", "", {quota(2, 0)}), queue("b", "", {quota(2, 1)})});
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"a", {8}}, {"b", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "a"), 2);
  EXPECT_DOUBLE_EQ(share(tree, shares, "b"), 6);
  // Even when nobody else wants the rest: b demands 1 -> a 2, b 1, 5 stay unassigned.
  shares = shares_of(tree, {8}, demands(tree, {{"a", {8}}, {"b", {1}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "a"), 2);
  EXPECT_DOUBLE_EQ(share(tree, shares, "b"), 1);
}

TEST(FairShare, HigherPrioritySiblingsOverQuotaFirst) {
  // prod (priority 1) and two dev queues (priority 0), deserved 2 each, 8 GPUs, 2 left after
  // step 2. prod demands 5: its unmet 3 exceeds the 2 left, it takes both -> prod 4, devs 2.
  QueueTree tree =
      tree_of({queue("prod", "", {quota(2)}, 1), queue("dev1", "", {quota(2)}, 0), queue("dev2", "", {quota(2)}, 0)});
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"prod", {5}}, {"dev1", {8}}, {"dev2", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "prod"), 4);
  EXPECT_DOUBLE_EQ(share(tree, shares, "dev1"), 2);
  EXPECT_DOUBLE_EQ(share(tree, shares, "dev2"), 2);
  // prod demands 3: it takes 1, the 1 left goes to priority 0 -> dev1 = dev2 = 2.5.
  shares = shares_of(tree, {8}, demands(tree, {{"prod", {3}}, {"dev1", {8}}, {"dev2", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "prod"), 3);
  EXPECT_DOUBLE_EQ(share(tree, shares, "dev1"), 2.5);
  EXPECT_DOUBLE_EQ(share(tree, shares, "dev2"), 2.5);
}

TEST(FairShare, PriorityDoesNotTouchDeservedQuota) {
  // prod (priority 1, deserved 0) demands everything; dev (deserved 3) still gets its 3 first.
  QueueTree tree = tree_of({queue("prod", "", {quota(0)}, 1), queue("dev", "", {quota(3)}, 0)});
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"prod", {8}}, {"dev", {8}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "prod"), 5);
  EXPECT_DOUBLE_EQ(share(tree, shares, "dev"), 3);
}

TEST(FairShare, TwoLevelTree) {
  // 16 GPUs. Departments: research (deserved 10), infer (deserved 6). research's projects:
  // p1 (deserved 4) demands 10, p2 (deserved 4) demands 2, p3 (deserved 0) demands 10.
  // infer's one project q1 (deserved 6) demands 1.
  // Demands: research 10 + 2 + 10 = 22, infer 1.
  // Root: research min(10, 22) = 10, infer min(6, 1) = 1; 5 left, only research wants more -> 15.
  // research's 15: p1 4, p2 2, p3 0 (9 left); unmet p1 6, p3 10, weights 1:1 -> level 4.5 each,
  // neither full -> p1 8.5, p3 4.5, p2 2. infer's 1: q1 1.
  QueueTree tree = tree_of({queue("research", "", {quota(10)}), queue("infer", "", {quota(6)}),
                            queue("p1", "research", {quota(4)}), queue("p2", "research", {quota(4)}),
                            queue("p3", "research", {quota(0)}), queue("q1", "infer", {quota(6)})});
  FairShares shares = shares_of(tree, {16}, demands(tree, {{"p1", {10}}, {"p2", {2}}, {"p3", {10}}, {"q1", {1}}}));
  EXPECT_DOUBLE_EQ(shares.demand[*tree.find("research")][0], 22);
  EXPECT_DOUBLE_EQ(share(tree, shares, "research"), 15);
  EXPECT_DOUBLE_EQ(share(tree, shares, "infer"), 1);
  EXPECT_DOUBLE_EQ(share(tree, shares, "p1"), 8.5);
  EXPECT_DOUBLE_EQ(share(tree, shares, "p2"), 2);
  EXPECT_DOUBLE_EQ(share(tree, shares, "p3"), 4.5);
  EXPECT_DOUBLE_EQ(share(tree, shares, "q1"), 1);
}

TEST(FairShare, InnerLimitCapsTheDepartment) {
  // research limited to 12: its demand 22 becomes 12, so it gets 10 + 2 of the 5 left; the
  // other 3 stay with the cluster (infer wants only 1). Inside: p1 4, p2 2, 6 left -> 3 and 3.
  QueueTree tree = tree_of({queue("research", "", {quota(10, 1, 12)}), queue("infer", "", {quota(6)}),
                            queue("p1", "research", {quota(4)}), queue("p2", "research", {quota(4)}),
                            queue("p3", "research", {quota(0)}), queue("q1", "infer", {quota(6)})});
  FairShares shares = shares_of(tree, {16}, demands(tree, {{"p1", {10}}, {"p2", {2}}, {"p3", {10}}, {"q1", {1}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "research"), 12);
  EXPECT_DOUBLE_EQ(share(tree, shares, "p1"), 7);
  EXPECT_DOUBLE_EQ(share(tree, shares, "p2"), 2);
  EXPECT_DOUBLE_EQ(share(tree, shares, "p3"), 3);
}

TEST(FairShare, ZeroWeightChildDemandDoesNotWinTheParentOverQuota) {
  // dept's only project is weight 0 (deserved 2) and demands 8; it can never hold more than 2,
  // so dept's demand is 2 and the other top-level queue, other, gets the remaining 6.
  QueueTree tree = tree_of({queue("dept", "", {quota(0)}), queue("other", "", {quota(0)}),
                            queue("frozen", "dept", {quota(2, 0)}), queue("o1", "other", {quota(0)})});
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"frozen", {8}}, {"o1", {8}}}));
  EXPECT_DOUBLE_EQ(shares.demand[*tree.find("dept")][0], 2);
  EXPECT_DOUBLE_EQ(share(tree, shares, "dept"), 2);
  EXPECT_DOUBLE_EQ(share(tree, shares, "frozen"), 2);
  EXPECT_DOUBLE_EQ(share(tree, shares, "other"), 6);
}

TEST(FairShare, ResourcesAreIndependent) {
  // GPU: 8, a and b deserve 2; a demands 8, b 1 -> b 1, a 2 + the 5 left = 7.
  // CPU: 64000 millicores, both deserve 16000; a demands 10000, b 64000 -> a 10000, b 54000.
  QueueTree tree =
      tree_of({queue("a", "", {quota(2), quota(16000)}), queue("b", "", {quota(2), quota(16000)})}, {"gpu", "cpu"});
  FairShares shares = shares_of(tree, {8, 64000}, demands(tree, {{"a", {8, 10000}}, {"b", {1, 64000}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "a", 0), 7);
  EXPECT_DOUBLE_EQ(share(tree, shares, "b", 0), 1);
  EXPECT_DOUBLE_EQ(share(tree, shares, "a", 1), 10000);
  EXPECT_DOUBLE_EQ(share(tree, shares, "b", 1), 54000);
}

TEST(FairShare, PerModelResourceIsIndependentOfGpu) {
  // 16 GPUs of which 8 are H100. a deserves the 8 H100s (and no "gpu"), b deserves 8 "gpu".
  // a's H100 demand 8 is also counted in its "gpu" demand 8; b demands 16 "gpu".
  // gpu: a 0, b 8 in quota; 8 left, unmet a 8, b 8 -> 4 each -> a 4, b 12.
  // gpu/H100: a min(8, 8) = 8, b 0.
  ResourceNames resources{kGpuResource, gpu_model_resource("H100")};
  ASSERT_EQ(resources.name(1), "gpu/H100");
  QueueTree tree = tree_of({queue("a", "", {quota(0), quota(8)}), queue("b", "", {quota(8), quota(0)})}, resources);
  FairShares shares = shares_of(tree, {16, 8}, demands(tree, {{"a", {8, 8}}, {"b", {16, 0}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "a", 0), 4);
  EXPECT_DOUBLE_EQ(share(tree, shares, "b", 0), 12);
  EXPECT_DOUBLE_EQ(share(tree, shares, "a", 1), 8);
  EXPECT_DOUBLE_EQ(share(tree, shares, "b", 1), 0);
}

TEST(FairShare, EmptyTreeAndUnusedCapacity) {
  QueueTree empty = tree_of({});
  EXPECT_TRUE(shares_of(empty, {8}, {}).fair_share.empty());
  // Total demand below capacity: everyone gets its demand, the rest stays unassigned.
  QueueTree tree = tree_of(three_researchers());
  FairShares shares = shares_of(tree, {8}, demands(tree, {{"alice", {1}}, {"bob", {3}}, {"carol", {0.5}}}));
  EXPECT_DOUBLE_EQ(share(tree, shares, "alice"), 1);
  EXPECT_DOUBLE_EQ(share(tree, shares, "bob"), 3);
  EXPECT_DOUBLE_EQ(share(tree, shares, "carol"), 0.5);
}

// --- time-based fairness ---------------------------------------------------------------------

TEST(FairShare, UsagePenaltyIsOffByDefault) {
  QueueTree tree = tree_of({queue("a", "", {quota(0)}), queue("b", "", {quota(0)})});
  std::vector<QueueLoad> loads = demands(tree, {{"a", {8}}, {"b", {8}}});
  loads[0].recent_usage = {8};
  FairShares shares = shares_of(tree, {8}, loads);
  EXPECT_DOUBLE_EQ(share(tree, shares, "a"), 4);
  EXPECT_DOUBLE_EQ(share(tree, shares, "b"), 4);
}

TEST(FairShare, UsagePenaltyLowersTheOverQuotaWeightOfHeavyUsers) {
  // Pass 1: 4 and 4. a used 8 recently: excess 8/4 - 1 = 1; with penalty k = 1 its weight
  // becomes 1 / (1 + 1 * 1) = 0.5. Pass 2: 8 split 0.5:1 -> a 8/3, b 16/3. b used 2 < 4: no change.
  QueueTree tree = tree_of({queue("a", "", {quota(0)}), queue("b", "", {quota(0)})});
  std::vector<QueueLoad> loads = demands(tree, {{"a", {8}}, {"b", {8}}});
  loads[0].recent_usage = {8};
  loads[1].recent_usage = {2};
  FairShares shares = shares_of(tree, {8}, loads, {.usage_penalty = 1});
  EXPECT_NEAR(share(tree, shares, "a"), 8.0 / 3, kExact);
  EXPECT_NEAR(share(tree, shares, "b"), 16.0 / 3, kExact);
  // k = 3: weight 1/4 -> a 8 * 1/5 = 1.6, b 6.4.
  shares = shares_of(tree, {8}, loads, {.usage_penalty = 3});
  EXPECT_NEAR(share(tree, shares, "a"), 1.6, kExact);
  EXPECT_NEAR(share(tree, shares, "b"), 6.4, kExact);
}

TEST(FairShare, UsagePenaltyKeepsDeservedQuota) {
  // a deserves 4 and used 8 recently: only its over-quota part shrinks.
  // Pass 1: a 4 in quota, b 0; the 4 left split 1:1 -> a 6, b 2.
  // a's excess 8/6 - 1 = 1/3, k = 3 -> weight 1 / (1 + 1) = 1/2; pass 2: the 4 left split
  // 0.5:1 -> a 4 + 4/3 = 5.333, b 8/3 = 2.667.
  QueueTree tree = tree_of({queue("a", "", {quota(4)}), queue("b", "", {quota(0)})});
  std::vector<QueueLoad> loads = demands(tree, {{"a", {8}}, {"b", {8}}});
  loads[0].recent_usage = {8};
  FairShares shares = shares_of(tree, {8}, loads, {.usage_penalty = 3});
  EXPECT_NEAR(share(tree, shares, "a"), 4 + 4.0 / 3, kExact);
  EXPECT_NEAR(share(tree, shares, "b"), 8.0 / 3, kExact);
  EXPECT_DOUBLE_EQ(shares.in_quota[0][0], 4);
}

TEST(FairShare, UsagePenaltyAppliesToInnerQueuesThroughTheirLeaves) {
  // Two departments of one project each, no quotas, 8 GPUs: pass 1 gives 4 and 4. x's project
  // used 12: x's usage is 12, excess 2, k = 0.5 -> x's weight 1/2 -> x 8/3, y 16/3.
  QueueTree tree = tree_of({queue("x", "", {quota(0)}), queue("y", "", {quota(0)}), queue("x1", "x", {quota(0)}),
                            queue("y1", "y", {quota(0)})});
  std::vector<QueueLoad> loads = demands(tree, {{"x1", {8}}, {"y1", {8}}});
  loads[*tree.find("x1")].recent_usage = {12};
  FairShares shares = shares_of(tree, {8}, loads, {.usage_penalty = 0.5});
  EXPECT_NEAR(share(tree, shares, "x"), 8.0 / 3, kExact);
  EXPECT_NEAR(share(tree, shares, "x1"), 8.0 / 3, kExact);
  EXPECT_NEAR(share(tree, shares, "y1"), 16.0 / 3, kExact);
}

TEST(FairShare, DecayUsage) {
  // One half-life: half the old, half the new.
  EXPECT_DOUBLE_EQ(decay_usage(10, 0, 60, 60), 5);
  EXPECT_DOUBLE_EQ(decay_usage(0, 8, 60, 60), 4);
  EXPECT_DOUBLE_EQ(decay_usage(10, 2, 120, 60), 10 * 0.25 + 2 * 0.75);
  EXPECT_DOUBLE_EQ(decay_usage(10, 2, 0, 60), 10);  // no time passed
  EXPECT_DOUBLE_EQ(decay_usage(10, 2, 5, 0), 2);    // no memory
  EXPECT_DOUBLE_EQ(decay_usage(3, 3, 17, 60), 3);   // steady state
  // Steps compose: 3 steps of 10 s equal one of 30 s.
  double stepped = 7;
  for (int i = 0; i < 3; ++i) stepped = decay_usage(stepped, 1.5, 10, 45);
  EXPECT_NEAR(stepped, decay_usage(7, 1.5, 30, 45), 1e-12);
  EXPECT_EQ(decay_usage(ResourceVector{10, 4}, ResourceVector{0, 4, 2}, 60, 60), (ResourceVector{5, 4, 1}));
}

// --- input checks ------------------------------------------------------------------------------

TEST(FairShare, RejectsMalformedInput) {
  QueueTree tree = tree_of({queue("a", "", {quota(1)}), queue("b", "", {quota(1)})}, {"gpu", "cpu"});
  std::vector<QueueLoad> loads(2);
  EXPECT_NE(compute_fair_shares(tree, {8}, loads).error().message.find("capacity has 1 entries, expected 2"),
            std::string::npos);
  EXPECT_NE(compute_fair_shares(tree, {8, -1}, loads).error().message.find("capacity[cpu] = -1"), std::string::npos);
  EXPECT_NE(compute_fair_shares(tree, {8, 8}, std::vector<QueueLoad>(1)).error().message.find("1 queue loads for 2"),
            std::string::npos);
  loads[1].demand = {1, -2};
  EXPECT_EQ(compute_fair_shares(tree, {8, 8}, loads).error().message,
            "queue 'b': demand[cpu] = -2 must be a finite number >= 0");
  loads[1].demand = {1};
  EXPECT_NE(compute_fair_shares(tree, {8, 8}, loads).error().message.find("queue 'b': demand has 1 entries"),
            std::string::npos);
  loads[1].demand = {};
  loads[0].recent_usage = {std::nan(""), 0};
  EXPECT_NE(compute_fair_shares(tree, {8, 8}, loads).error().message.find("queue 'a': recent_usage[gpu]"),
            std::string::npos);
  loads[0].recent_usage = {};
  EXPECT_FALSE(compute_fair_shares(tree, {8, 8}, loads, {.usage_penalty = -1}).ok());
  EXPECT_TRUE(compute_fair_shares(tree, {8, 8}, loads).ok());
}

// --- QueueTree ---------------------------------------------------------------------------------

TEST(QueueTree, IndicesChildrenLeavesAndPadding) {
  QueueTree tree = tree_of({queue("p1", "dept", {quota(1)}), queue("dept", "", {}), queue("solo", "", {}),
                            queue("p2", "dept", {}), queue("p11", "p1", {})},
                           {"gpu", "cpu"});
  EXPECT_EQ(tree.size(), 5U);
  EXPECT_EQ(tree.find("dept"), QueueIndex{1});
  EXPECT_EQ(tree.find("nope"), std::nullopt);
  EXPECT_EQ(tree.top_level(), (std::vector<QueueIndex>{1, 2}));
  EXPECT_EQ(tree.parent(0), QueueIndex{1});
  EXPECT_EQ(tree.parent(1), QueueTree::kNoParent);
  EXPECT_EQ(tree.children(1), (std::vector<QueueIndex>{0, 3}));
  EXPECT_EQ(tree.leaves(), (std::vector<QueueIndex>{2, 3, 4}));
  EXPECT_EQ(tree.top_down(), (std::vector<QueueIndex>{1, 2, 0, 3, 4}));
  // Quotas are padded to every resource with the defaults.
  EXPECT_EQ(tree.spec(0).quota.size(), 2U);
  EXPECT_EQ(tree.quota(0, 0), quota(1));
  EXPECT_EQ(tree.quota(0, 1), QueueQuota{});
  EXPECT_EQ(tree.quota(2, 1).over_quota_weight, 1);
}

TEST(QueueTree, ErrorsNameTheQueueAndTheField) {
  EXPECT_EQ(build_error({queue("a", "", {}), queue("", "", {})}), "queue #1: name is empty");
  EXPECT_EQ(build_error({queue("a", "", {}), queue("a", "", {})}), "queue 'a': duplicate name");
  EXPECT_EQ(build_error({queue("a", "", {}), queue("b", "x", {})}), "queue 'b': parent 'x' is not a queue");
  EXPECT_EQ(build_error({queue("a", "", {quota(-1)})}), "queue 'a': deserved[gpu] = -1 must be a finite number >= 0");
  EXPECT_EQ(build_error({queue("a", "", {quota(1), quota(std::numeric_limits<double>::infinity())})}),
            "queue 'a': deserved[cpu] = inf must be a finite number >= 0");
  EXPECT_EQ(build_error({queue("a", "", {quota(1), quota(0, -0.5)})}),
            "queue 'a': over_quota_weight[cpu] = -0.5 must be a finite number >= 0");
  EXPECT_EQ(build_error({queue("a", "", {quota(3, 1, 2)})}), "queue 'a': limit[gpu] = 2 is below deserved[gpu] = 3");
  EXPECT_EQ(build_error({queue("a", "", {quota(3, 1, std::nan(""))})}),
            "queue 'a': limit[gpu] = nan is below deserved[gpu] = 3");
  EXPECT_EQ(build_error({queue("a", "", {quota(1), quota(1), quota(1)})}),
            "queue 'a': quota lists 3 resources, but only 2 are defined (gpu, cpu)");
  // A limit equal to deserved, an infinite limit, and weight 0 are all fine.
  EXPECT_EQ(build_error({queue("a", "", {quota(3, 0, 3), quota(0, 1, std::numeric_limits<double>::infinity())})}),
            "(built)");
}

TEST(QueueTree, CyclesAreNamed) {
  EXPECT_EQ(build_error({queue("a", "a", {})}), "queue 'a': parent forms a cycle (a -> a)");
  EXPECT_EQ(build_error({queue("top", "", {}), queue("a", "b", {}), queue("b", "c", {}), queue("c", "a", {})}),
            "queue 'a': parent forms a cycle (a -> b -> c -> a)");
  // A queue hanging below a cycle: the cycle is named, not the queue.
  EXPECT_EQ(build_error({queue("leaf", "x", {}), queue("x", "y", {}), queue("y", "x", {})}),
            "queue 'x': parent forms a cycle (x -> y -> x)");
}

// --- properties on random trees ------------------------------------------------------------------

struct RandomCase {
  QueueTree tree;
  ResourceVector capacity;
  std::vector<QueueLoad> loads;
};

RandomCase random_case(std::mt19937_64& rng, bool allow_zero_weight) {
  std::uniform_real_distribution<double> unit(0, 1);
  auto chance = [&](double p) { return unit(rng) < p; };
  // Half the draws are whole numbers, so that ties and exact boundaries come up.
  auto amount = [&](double max) { return chance(0.5) ? std::floor(unit(rng) * (max + 1)) : unit(rng) * max; };
  const size_t resources = 1 + rng() % 3;
  const size_t n = 1 + rng() % 12;
  std::vector<QueueSpec> specs;
  for (size_t i = 0; i < n; ++i) {
    QueueSpec spec;
    spec.name = fmt::format("q{}", i);
    if (i > 0 && chance(0.65)) spec.parent = specs[rng() % i].name;  // any earlier queue: any depth
    spec.priority = chance(0.3) ? static_cast<int>(rng() % 3) : 0;
    for (size_t r = 0; r < resources; ++r) {
      QueueQuota q;
      q.deserved = chance(0.3) ? 0 : amount(10);
      q.over_quota_weight = allow_zero_weight && chance(0.15) ? 0 : 0.1 + amount(3);
      if (chance(0.25)) q.limit = q.deserved + amount(10);
      spec.quota.push_back(q);
    }
    if (chance(0.2)) spec.quota.resize(rng() % (resources + 1));  // defaults for the rest
    specs.push_back(std::move(spec));
  }
  ResourceNames names;
  for (size_t r = 0; r < resources; ++r) names.add(fmt::format("r{}", r));
  Result<QueueTree> tree = QueueTree::build(std::move(specs), names);
  EXPECT_TRUE(tree.ok());
  RandomCase result{std::move(tree).value(), {}, {}};
  for (size_t r = 0; r < resources; ++r) result.capacity.push_back(amount(60));
  result.loads.resize(n);
  for (QueueIndex leaf : result.tree.leaves()) {
    for (size_t r = 0; r < resources; ++r) {
      result.loads[leaf].demand.push_back(chance(0.2) ? 0 : amount(20));
      result.loads[leaf].recent_usage.push_back(chance(0.3) ? 0 : amount(20));
    }
  }
  return result;
}

// Checks docs/design.md §3 at every parent (the cluster included) for every resource.
void check_properties(const RandomCase& c, const FairShares& shares, bool weights_as_given) {
  const QueueTree& tree = c.tree;
  const auto& demand = shares.demand;
  const auto& fair = shares.fair_share;
  for (ResourceId r = 0; r < tree.resource_count(); ++r) {
    std::vector<std::pair<double, const std::vector<QueueIndex>*>> parents{{c.capacity[r], &tree.top_level()}};
    for (QueueIndex queue : tree.top_down()) {
      if (!tree.is_leaf(queue)) parents.push_back({fair[queue][r], &tree.children(queue)});
    }
    for (QueueIndex queue : tree.top_down()) {
      const QueueQuota& q = tree.quota(queue, r);
      const double tol = 1e-9 * std::max(1.0, demand[queue][r]);
      // Step 1: demand as defined, never above the limit; fair share within [0, demand].
      double expected_demand = resource_at(c.loads[queue].demand, r);
      if (!tree.is_leaf(queue)) {
        expected_demand = 0;
        for (QueueIndex child : tree.children(queue)) {
          const QueueQuota& cq = tree.quota(child, r);
          expected_demand += cq.over_quota_weight > 0 ? demand[child][r] : std::min(cq.deserved, demand[child][r]);
        }
      }
      EXPECT_NEAR(demand[queue][r], std::min(expected_demand, q.limit_or_infinity()), tol);
      EXPECT_LE(demand[queue][r], q.limit_or_infinity());
      EXPECT_GE(fair[queue][r], 0);
      EXPECT_LE(fair[queue][r], demand[queue][r] + tol) << tree.spec(queue).name;
      EXPECT_LE(shares.in_quota[queue][r], fair[queue][r]);
      EXPECT_LE(shares.in_quota[queue][r], q.deserved);
    }
    for (const auto& [share, children] : parents) {
      const double tol = 1e-9 * std::max(1.0, share);
      double absorbable = 0, entitled = 0, given = 0;
      bool any_zero_weight = false;
      for (QueueIndex child : *children) {
        const QueueQuota& q = tree.quota(child, r);
        const double e = std::min(q.deserved, demand[child][r]);
        entitled += e;
        absorbable += q.over_quota_weight > 0 ? demand[child][r] : e;
        any_zero_weight = any_zero_weight || q.over_quota_weight == 0;
        given += fair[child][r];
      }
      // Work conservation: the children hold all of the parent's share they can absorb.
      EXPECT_NEAR(given, std::min(share, absorbable), tol);
      if (!any_zero_weight) {
        double capped = 0;
        for (QueueIndex child : *children) capped += demand[child][r];
        EXPECT_NEAR(given, std::min(share, capped), tol);
      }
      for (QueueIndex a : *children) {
        const QueueQuota& qa = tree.quota(a, r);
        const double ea = std::min(qa.deserved, demand[a][r]);
        if (entitled <= share) {
          // Quotas fit: every child gets at least min(deserved, demand).
          EXPECT_GE(fair[a][r], ea - tol) << tree.spec(a).name;
          const bool a_hungry = qa.over_quota_weight > 0 && fair[a][r] < demand[a][r] - tol;
          if (!a_hungry) continue;
          for (QueueIndex b : *children) {
            const QueueQuota& qb = tree.quota(b, r);
            const double eb = std::min(qb.deserved, demand[b][r]);
            // A hungry higher-priority sibling leaves lower ones no over-quota share.
            if (tree.spec(b).priority < tree.spec(a).priority) {
              EXPECT_NEAR(fair[b][r], eb, tol);
            }
            // Same level, both hungry: equal over-quota per unit of weight.
            if (weights_as_given && b != a && tree.spec(b).priority == tree.spec(a).priority &&
                qb.over_quota_weight > 0 && fair[b][r] < demand[b][r] - tol) {
              EXPECT_NEAR((fair[a][r] - ea) / qa.over_quota_weight, (fair[b][r] - eb) / qb.over_quota_weight,
                          tol * 100);
            }
          }
        } else {
          // Quotas cut: nobody above its entitlement; the cut ones at one level of fair / deserved.
          EXPECT_LE(fair[a][r], ea + tol);
          EXPECT_NEAR(fair[a][r], shares.in_quota[a][r], tol);
          for (QueueIndex b : *children) {
            const double eb = std::min(tree.quota(b, r).deserved, demand[b][r]);
            if (fair[a][r] < ea - tol && fair[b][r] < eb - tol) {
              EXPECT_NEAR(fair[a][r] / qa.deserved, fair[b][r] / tree.quota(b, r).deserved, tol * 100);
            }
          }
        }
      }
    }
  }
}

RandomCase scaled(const RandomCase& c, double factor) {
  std::vector<QueueSpec> specs;
  for (QueueIndex queue = 0; queue < c.tree.size(); ++queue) {
    QueueSpec spec = c.tree.spec(queue);
    for (QueueQuota& q : spec.quota) {
      q.deserved *= factor;
      if (q.limit) *q.limit *= factor;
    }
    specs.push_back(std::move(spec));
  }
  RandomCase result{std::move(QueueTree::build(std::move(specs), c.tree.resources())).value(), c.capacity, c.loads};
  for (double& x : result.capacity) x *= factor;
  for (QueueLoad& load : result.loads) {
    for (double& x : load.demand) x *= factor;
    for (double& x : load.recent_usage) x *= factor;
  }
  return result;
}

TEST(FairShare, PropertiesOnRandomTrees) {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 4000; ++trial) {
    SCOPED_TRACE(trial);
    const RandomCase c = random_case(rng, trial % 2 == 0);
    const FairShares shares = shares_of(c.tree, c.capacity, c.loads);
    check_properties(c, shares, true);
    // With time-based fairness on, only the weights change: every other property still holds.
    check_properties(c, shares_of(c.tree, c.capacity, c.loads, {.usage_penalty = 2}), false);
    // Scaling every quantity scales every share; exactly for a power of two.
    for (double factor : {1024.0, 0.37, 1e6}) {
      const RandomCase big = scaled(c, factor);
      const FairShares scaled_shares = shares_of(big.tree, big.capacity, big.loads);
      for (QueueIndex queue = 0; queue < c.tree.size(); ++queue) {
        for (ResourceId r = 0; r < c.tree.resource_count(); ++r) {
          const double tol = factor == 1024.0 ? 0 : 1e-9 * factor * std::max(1.0, c.capacity[r]);
          EXPECT_NEAR(scaled_shares.fair_share[queue][r], factor * shares.fair_share[queue][r], tol);
        }
      }
    }
    if (HasFailure()) break;  // one trial's report is enough
  }
}

TEST(FairShare, DeterministicAndIndependentOfSiblingOrder) {
  // The same queues listed in another order get the same shares (ties in water-filling are
  // broken by level, not by position).
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    SCOPED_TRACE(trial);
    RandomCase c = random_case(rng, true);
    const FairShares shares = shares_of(c.tree, c.capacity, c.loads);
    std::vector<QueueSpec> reversed;
    std::vector<QueueLoad> reversed_loads;
    for (QueueIndex queue = c.tree.size(); queue-- > 0;) {
      reversed.push_back(c.tree.spec(queue));
      reversed_loads.push_back(c.loads[queue]);
    }
    QueueTree tree = tree_of(reversed, c.tree.resources());
    const FairShares again = shares_of(tree, c.capacity, reversed_loads);
    for (QueueIndex queue = 0; queue < c.tree.size(); ++queue) {
      for (ResourceId r = 0; r < c.tree.resource_count(); ++r) {
        EXPECT_NEAR(again.fair_share[c.tree.size() - 1 - queue][r], shares.fair_share[queue][r],
                    1e-9 * std::max(1.0, c.capacity[r]));
      }
    }
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace tessera
