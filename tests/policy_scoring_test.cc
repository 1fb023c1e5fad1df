// Each policy's rule on small cases worked out by hand.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/placer.h"
#include "policy/best_fit_policy.h"
#include "policy/dot_product_policy.h"
#include "policy/fgd_policy.h"
#include "policy/first_fit_policy.h"
#include "policy/fragmentation.h"
#include "policy/gpu_packing_policy.h"
#include "policy/leftover_fit_policy.h"
#include "policy/policy_registry.h"
#include "policy/spread_policy.h"
#include "policy/tessera_policy.h"
#include "policy/usable_capacity.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

// Mix: half 0.6-GPU pods, half 1-GPU pods, both with 1 CPU.
WorkloadMix half_and_half() {
  std::vector<PodSpec> pods = {pod("a", 1000, GpuRequest::portion(600)), pod("b", 1000, GpuRequest::whole(1))};
  return WorkloadMix::from_pods(pods);
}

TEST(Fragmentation, FollowsTheFgdDefinition) {
  auto cluster = uniform_cluster(1, 2, 4000);
  NodeState state = NodeState::empty(cluster->nodes[0]);
  state.gpu_used_milli = {500, 0};  // free: 500, 1000
  WorkloadMix mix = half_and_half();
  // 0.6 pods: device 0 (500 free < 600) is a fragment. 1-GPU pods: device 0 is partial, a fragment.
  EXPECT_DOUBLE_EQ(type_fragmentation(cluster->nodes[0], state, mix.types()[0]), 500);
  EXPECT_DOUBLE_EQ(type_fragmentation(cluster->nodes[0], state, mix.types()[1]), 500);
  EXPECT_DOUBLE_EQ(expected_fragmentation(cluster->nodes[0], state, mix), 500);
  // With no CPU left, neither type fits: every free portion is fragmented.
  state.free.cpu_milli = 0;
  EXPECT_DOUBLE_EQ(expected_fragmentation(cluster->nodes[0], state, mix), 1500);
}

TEST(Fragmentation, CpuOnlyTypesUnderEachRuleSet) {
  auto cluster = uniform_cluster(1, 2, 4000);
  NodeState state = NodeState::empty(cluster->nodes[0]);
  PodType cpu_only{{2000, kGiB}, GpuRequest::none(), GpuModelSet::any(), 1.0};
  // The reference FGD: a CPU-only type can use no GPU, so every free GPU is a fragment for it.
  EXPECT_DOUBLE_EQ(type_fragmentation(cluster->nodes[0], state, cpu_only, kFgdRules), 2000);
  // Tessera's reading: only when it no longer fits (its CPU is what strands the GPUs).
  EXPECT_DOUBLE_EQ(type_fragmentation(cluster->nodes[0], state, cpu_only, kResourceAwareRules), 0);
  state.free.cpu_milli = 1000;
  EXPECT_DOUBLE_EQ(type_fragmentation(cluster->nodes[0], state, cpu_only, kResourceAwareRules), 2000);
}

TEST(Fragmentation, MemoryCountsOnlyUnderResourceAwareRules) {
  auto cluster = uniform_cluster(1, 2, 4000, 8 * kGiB);
  NodeState state = NodeState::empty(cluster->nodes[0]);
  PodType big_memory{{1000, 16 * kGiB}, GpuRequest::whole(1), GpuModelSet::any(), 1.0};
  EXPECT_DOUBLE_EQ(type_fragmentation(cluster->nodes[0], state, big_memory, kFgdRules), 0);
  EXPECT_DOUBLE_EQ(type_fragmentation(cluster->nodes[0], state, big_memory, kResourceAwareRules), 2000);
}

TEST(WorkloadMix, TypicalTypesCoverNinetyFivePercentIgnoringMemory) {
  std::vector<PodSpec> pods;
  for (int i = 0; i < 60; ++i) pods.push_back(pod("a", 1000, GpuRequest::whole(1), (i % 2 + 1) * kGiB));  // one type
  for (int i = 0; i < 38; ++i) pods.push_back(pod("b", 2000, GpuRequest::portion(500)));
  for (int i = 0; i < 2; ++i) pods.push_back(pod("c", 8000, GpuRequest::whole(8)));  // the rarest 2%
  WorkloadMix mix = WorkloadMix::from_pods(pods);
  EXPECT_EQ(mix.types().size(), 4U);  // memory tells the two halves of "a" apart here
  WorkloadMix typical = mix.typical();
  ASSERT_EQ(typical.types().size(), 2U);
  EXPECT_DOUBLE_EQ(typical.types()[0].popularity, 60.0 / 98.0);
  EXPECT_DOUBLE_EQ(typical.types()[1].popularity, 38.0 / 98.0);
}

TEST(StrandedCapacity, CountsCpuLimitsAndRemainders) {
  auto cluster = uniform_cluster(1, 4, 4000);
  NodeState state = NodeState::empty(cluster->nodes[0]);
  PodType one_gpu{{2000, kGiB}, GpuRequest::whole(1), GpuModelSet::any(), 1.0};
  // 4 idle GPUs but CPU for two 1-GPU pods: two GPUs are stranded. FGD sees none.
  EXPECT_DOUBLE_EQ(stranded_capacity(cluster->nodes[0], state, one_gpu), 2000);
  EXPECT_DOUBLE_EQ(type_fragmentation(cluster->nodes[0], state, one_gpu), 0);
  // 0.4 pods on devices with 1000 free: two per device, 200 left on each.
  PodType share{{1, 1}, GpuRequest::portion(400), GpuModelSet::any(), 1.0};
  EXPECT_DOUBLE_EQ(stranded_capacity(cluster->nodes[0], state, share), 800);
}

TEST(FgdPolicy, PicksTheDeviceThatLeavesNoFragment) {
  auto cluster = uniform_cluster(1, 2, 4000);
  NodeState state = NodeState::empty(cluster->nodes[0]);
  state.gpu_used_milli = {500, 0};
  FgdPolicy policy(half_and_half());
  // Onto device 0: free becomes {0, 1000}, F = 0 (growth -500). Onto device 1: free {500, 500},
  // F = 0.5*1000 + 0.5*1000 (no idle device left for 1-GPU pods) = 1000 (growth +500).
  PlacementChoice choice =
      policy.score(NodeView{0, cluster->nodes[0], state}, pod("x", 1000, GpuRequest::portion(500)));
  EXPECT_EQ(choice.device, 0);
  EXPECT_DOUBLE_EQ(choice.score, 62);  // floor(100 * sigmoid(0.5))
  EXPECT_DOUBLE_EQ(FgdPolicy::score_of_growth(500), 37);
  EXPECT_DOUBLE_EQ(FgdPolicy::score_of_growth(0), 50);
  EXPECT_DOUBLE_EQ(FgdPolicy::score_of_growth(-10), 50);  // small growths tie, as in the reference
}

TEST(TesseraPolicy, AvoidsStrandingGpusBehindCpu) {
  // Node 0: 4 GPUs and 4 cores; node 1: 4 GPUs and 64 cores. A CPU-only pod of 3 cores leaves
  // node 0 with 1 core for its 4 idle GPUs. FGD sees no fragmentation either way when 1-GPU
  // pods need 1 core; tessera sees 3 stranded GPUs on node 0.
  auto cluster = uniform_cluster(2, 4, 64000);
  cluster->nodes[0].allocatable.cpu_milli = 4000;
  std::vector<PodSpec> population = {pod("gpu", 1000, GpuRequest::whole(1)), pod("cpu", 3000, GpuRequest::none())};
  WorkloadMix mix = WorkloadMix::from_pods(population);
  ClusterState state(cluster);
  TesseraPolicy tessera_policy(mix);
  Placer placer(tessera_policy);
  auto binding = placer.find(state, pod("cpu", 3000, GpuRequest::none()));
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 1);
}

// Node 0: 4 GPUs and 8 cores; node 1: 4 GPUs and 12 cores. A 1-GPU pod of 4 cores grows T by
// nothing on either (node 0 feeds 2 GPUs before and 1 after, node 1 3 and 2): a tie.
TEST(TesseraPolicy, SpreadsGpuPodsByCpuOnlyWhereTheMixAsksClearlyMoreCpuThanThereIs) {
  auto cluster = uniform_cluster(2, 4, 8000);
  cluster->nodes[1].allocatable.cpu_milli = 12000;
  const ClusterState state(cluster);
  // 8 GPUs at 4 cores each ask 32 cores of 20: the tie goes to the node with more CPU left.
  const PodSpec hungry = pod("hungry", 4000, GpuRequest::whole(1));
  TesseraPolicy cpu_short(WorkloadMix::from_pods(std::vector<PodSpec>{hungry}));
  Placer spreading(cpu_short);
  EXPECT_EQ(spreading.find(state, hungry)->node, 1);
  // A CPU-only pod keeps the node order (it grows T by a GPU on either).
  EXPECT_EQ(spreading.find(state, pod("cpu", 1000, GpuRequest::none()))->node, 0);
  // At a core per GPU the mix asks 8 of 20 cores: GPUs run out first, and the tie keeps the node order.
  const PodSpec light = pod("light", 1000, GpuRequest::whole(1));
  TesseraPolicy gpu_short(WorkloadMix::from_pods(std::vector<PodSpec>{light}));
  Placer packing(gpu_short);
  EXPECT_EQ(packing.find(state, hungry)->node, 0);
  EXPECT_EQ(packing.find(state, light)->node, 0);
}

TEST(ClassicPolicies, ChooseAsDescribed) {
  // Node 0 is half full, node 1 is empty; both have 4 GPUs.
  auto cluster = uniform_cluster(2, 4);
  ClusterState state(cluster);
  PodId existing = state.add_pod(pod("existing", 32000, GpuRequest::whole(2)));
  state.bind(existing, Binding{0, {0, 1}, 1000});
  PodId shared = state.add_pod(pod("shared", 1000, GpuRequest::portion(500)));
  state.bind(shared, Binding{1, {3}, 500});
  const PodSpec one_gpu = pod("new", 1000, GpuRequest::whole(1));
  const PodSpec share = pod("new-share", 1000, GpuRequest::portion(300));

  auto place = [&](PlacementPolicy& policy, const PodSpec& p) { return *Placer(policy).find(state, p); };
  FirstFitPolicy first_fit;
  BestFitPolicy best_fit;
  LeftoverFitPolicy leftover_fit;
  SpreadPolicy spread;
  GpuPackingPolicy packing;
  DotProductPolicy dot;
  EXPECT_EQ(place(first_fit, one_gpu).node, 0);
  EXPECT_EQ(place(best_fit, one_gpu).node, 0);      // less CPU and GPU left over
  EXPECT_EQ(place(leftover_fit, one_gpu).node, 0);  // less left over
  EXPECT_EQ(place(spread, one_gpu).node, 1);        // more left over
  EXPECT_EQ(place(packing, share).node, 1);         // onto the already shared device
  EXPECT_EQ(place(packing, share).devices, std::vector<int16_t>{3});
  EXPECT_EQ(place(first_fit, share).devices, std::vector<int16_t>{2});  // node 0's first free device
  EXPECT_EQ(place(best_fit, share).node, 0);
  EXPECT_EQ(place(leftover_fit, share).node, 0);
  // Dot product: node 1 has more free CPU and GPU, so the request aligns better with it.
  EXPECT_EQ(place(dot, one_gpu).node, 1);
}

// The FGD paper's BestFit, as its simulator computes it: CPU against 128 cores and GPU against 8
// GPUs, half each, as a whole number; memory does not count.
TEST(BestFitPolicy, ScoresAsThePapersSimulator) {
  auto cluster = uniform_cluster(1, 8, 96000, 8 * kGiB);
  NodeState state = NodeState::empty(cluster->nodes[0]);
  state.gpu_used_milli = {1000, 500, 0, 0, 0, 0, 0, 0};
  state.free.cpu_milli = 40000;
  BestFitPolicy best_fit;
  NodeView view{0, cluster->nodes[0], state};
  // After a 1-GPU, 8-core pod: 32 cores and 5.5 GPUs free: 100 * (1 - 0.5*32/128 - 0.5*5.5/8) = 53.1
  const PlacementChoice whole = best_fit.score(view, pod("one", 8000, GpuRequest::whole(1), 64 * kGiB));
  EXPECT_DOUBLE_EQ(whole.score, 53);
  // A 0.3 share goes to the device with the least room that holds it (device 1, 0.5 free).
  const PlacementChoice share = best_fit.score(view, pod("share", 8000, GpuRequest::portion(300)));
  EXPECT_EQ(share.device, 1);
}

// Every node the same: each tie is up to the engine.
class IndifferentPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "indifferent"; }
  PlacementChoice score(const NodeView&, const PodSpec&) override { return {}; }
};

// Prefers the node with more CPU free, scoring every node alike except those of 512 GiB, which score 1.
class CpuPreferringPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "cpu-preferring"; }
  PlacementChoice score(const NodeView& node, const PodSpec&) override {
    return {.score = node.spec.allocatable.memory_bytes == 512 * kGiB ? 1.0 : 0.0,
            .preference = static_cast<float>(node.state.free.cpu_milli)};
  }
};

// A policy's preference settles ties of score before the node order, and at random only among
// the nodes it ties too; a higher score still wins over it.
TEST(Placer, APreferenceSettlesTiesOfScoreBeforeTheNodeOrder) {
  auto cluster = uniform_cluster(4, 2);
  cluster->nodes[1].allocatable.cpu_milli = 96000;
  cluster->nodes[3].allocatable.cpu_milli = 96000;
  cluster->nodes[2].allocatable.memory_bytes = 512 * kGiB;
  ClusterState state(cluster);
  const PodSpec next = pod("next", 1000, GpuRequest::whole(1));
  CpuPreferringPolicy preferring;
  EXPECT_EQ(Placer(preferring).find(state, next)->node, 2);  // the higher score
  const PodId cordoned = state.add_pod(pod("cordon", 1000, GpuRequest::whole(2)));
  state.bind(cordoned, Binding{2, {0, 1}, 1000});  // node 2 full: nodes 1 and 3 tie on CPU
  const PodId memory_only = state.add_pod(pod("memory", 0, GpuRequest::none(), kGiB));
  state.bind(memory_only, Binding{3, {}, 0});  // in a state of its own, with the CPU of node 1
  EXPECT_EQ(Placer(preferring).find(state, next)->node, 1);
  std::set<NodeIndex> chosen;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Placer placer(preferring);
    placer.break_ties_at_random(seed);
    chosen.insert(placer.find(state, next)->node);
  }
  EXPECT_EQ(chosen, (std::set<NodeIndex>{1, 3}));
}

// Ties at random: every tied node is chosen for some seed, in proportion to the nodes of each
// kind tied; first-fit keeps the lowest index, its rule.
TEST(Placer, BreaksTiesAtRandomWhenAskedExceptForFirstFit) {
  auto cluster = uniform_cluster(4, 2);
  ClusterState state(cluster);
  const PodId running = state.add_pod(pod("running", 1000, GpuRequest::none()));
  state.bind(running, Binding{0, {}, 0});  // node 0 in a state of its own; nodes 1-3 alike
  const PodSpec next = pod("next", 1000, GpuRequest::whole(1));
  IndifferentPolicy indifferent;
  FirstFitPolicy first_fit;
  int on_node_0 = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Placer placer(indifferent);
    placer.break_ties_at_random(seed);
    on_node_0 += placer.find(state, next)->node == 0 ? 1 : 0;
    Placer ordered(first_fit);
    ordered.break_ties_at_random(seed);
    EXPECT_EQ(ordered.find(state, next)->node, 0);
  }
  // One node in four: 100 expected; the seeds are fixed, so the count is too.
  EXPECT_GT(on_node_0, 60);
  EXPECT_LT(on_node_0, 140);
  EXPECT_EQ(Placer(indifferent).find(state, next)->node, 0);  // without it: the lowest index
}

// Ties in a random order of the nodes, as the FGD paper's simulator breaks them: one seed sends
// every tie to the same node, the one first in its order (so equal choices pile up as with the
// lowest index), other seeds to other nodes; first-fit keeps the lowest index.
TEST(Placer, BreaksTiesInARandomNodeOrderKeptForItsLifetime) {
  auto cluster = uniform_cluster(8, 8);
  IndifferentPolicy indifferent;
  FirstFitPolicy first_fit;
  std::set<NodeIndex> firsts;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    ClusterState state(cluster);
    Placer placer(indifferent);
    placer.break_ties_in_random_order(seed, state.node_count());
    NodeIndex first = -1;
    for (int i = 0; i < 4; ++i) {
      const PodId next = state.add_pod(pod("p" + std::to_string(i), 1000, GpuRequest::whole(1)));
      const auto binding = placer.find(state, state.pod(next));
      ASSERT_TRUE(binding);
      if (i == 0) first = binding->node;
      // The node is in a state of its own after the first pod; the next ties go to it again.
      EXPECT_EQ(binding->node, first) << "seed " << seed << ", pod " << i;
      state.bind(next, *binding);
    }
    firsts.insert(first);
    Placer ordered(first_fit);
    ordered.break_ties_in_random_order(seed, state.node_count());
    EXPECT_EQ(ordered.find(state, pod("q", 1000, GpuRequest::whole(1)))->node, 0);
  }
  EXPECT_GT(firsts.size(), 4u);  // 40 seeds over 8 nodes: most nodes come first for some seed
}

TEST(PolicyRegistry, KnowsEveryNameAndRejectsOthers) {
  for (const std::string& name : policy_names()) {
    auto policy = make_policy(name, half_and_half());
    ASSERT_TRUE(policy.ok()) << name;
    EXPECT_EQ((*policy)->name(), name);
  }
  auto unknown = make_policy("worst-fit", half_and_half());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown policy 'worst-fit'"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("fgd"), std::string::npos);
}

}  // namespace
}  // namespace tessera
