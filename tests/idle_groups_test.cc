// The tessera policy's weight for multi-GPU types: the cluster's GPU nodes counted by idle
// devices in step with every binding, the sizes weighed, the engine handing each size's growth
// back from its per-state cache, and the term worked out by hand. (That the growths read the
// definitions is checked with the measure's, on random states: tessera_measure_test.cc.)
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "engine/cluster_state.h"
#include "engine/invariants.h"
#include "engine/placer.h"
#include "policy/tessera_measure.h"
#include "policy/tessera_policy.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

TEST(IdleGroups, ClusterStateCountsNodesByIdleDevicesInStepWithBindings) {
  ClusterState state(uniform_cluster(3, 8));
  EXPECT_EQ(state.gpu_supply().idle_in_groups(8), 24);
  EXPECT_EQ(state.gpu_supply().idle_in_groups(2), 24);
  const PodId three = state.add_pod(pod("three", 1000, GpuRequest::whole(3)));
  const PodId share = state.add_pod(pod("share", 1000, GpuRequest::portion(500)));
  const PodId other = state.add_pod(pod("other", 1000, GpuRequest::portion(500)));
  state.bind(three, Binding{0, {0, 1, 2}, kMilliPerGpu});  // node 0: 5 idle
  state.bind(share, Binding{1, {7}, 500});                 // node 1: 7 idle
  EXPECT_EQ(state.gpu_supply().idle_in_groups(8), 8);      // node 2 alone
  EXPECT_EQ(state.gpu_supply().idle_in_groups(4), 4 + 4 + 8);
  EXPECT_EQ(state.gpu_supply().idle_in_groups(2), 4 + 6 + 8);
  EXPECT_TRUE(check_invariants(state).empty());

  state.bind(other, Binding{1, {7}, 500});  // the same device, full now: still 7 idle
  EXPECT_EQ(state.gpu_supply().idle_in_groups(2), 4 + 6 + 8);
  state.unbind(share);
  state.unbind(other);  // node 1 idle again
  state.unbind(three);
  EXPECT_EQ(state.gpu_supply().idle_in_groups(8), 24);
  EXPECT_TRUE(check_invariants(state).empty());
}

// Past three sizes, those the mix asks the most GPUs of are weighed; the others count in full.
TEST(IdleGroups, TheSizesWeighedAreThoseTheMixAsksMostGpusOf) {
  auto type = [](int gpus, double popularity) {
    return PodType{{1000, kGiB}, GpuRequest::whole(gpus), GpuModelSet::any(), popularity};
  };
  const WorkloadMix mix({type(1, 0.6), type(2, 0.2), type(3, 0.1), type(4, 0.04), type(8, 0.06)});
  // GPUs asked per pod: 2 -> 0.4, 3 -> 0.3, 4 -> 0.16, 8 -> 0.48.
  EXPECT_EQ(TesseraMeasure::group_sizes(mix), (std::vector<int>{2, 3, 8}));
  EXPECT_TRUE(TesseraMeasure::group_sizes(WorkloadMix({type(1, 1)})).empty());
}

// Hands back parts of its own making, and records what the engine hands to its term.
class PartsPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "parts"; }
  PlacementChoice score(const NodeView& /*node*/, const PodSpec& /*pod*/) override {
    ++scored;
    return {.score = 0, .device = -1, .parts = {1, 2, 3, 4}};
  }
  double cluster_term(const NodeView& /*node*/, const PodSpec& /*pod*/, const GpuSupply& /*supply*/,
                      const PlacementChoice& choice) override {
    asked.push_back(choice.parts);
    return 0;
  }
  bool has_cluster_term() const override { return true; }
  int scored = 0;
  std::vector<std::array<float, kScoreParts>> asked;
};

// The engine scores a node state once and keeps the verdict: the parts come back with it.
TEST(IdleGroups, TheEngineHandsTheScoresPartsBackFromItsCache) {
  ClusterState state(uniform_cluster(4, 8));
  PartsPolicy policy;
  Placer placer(policy);
  const PodSpec one = pod("one", 1000, GpuRequest::whole(1));
  ASSERT_TRUE(placer.find(state, one).has_value());
  ASSERT_TRUE(placer.find(state, one).has_value());
  EXPECT_EQ(policy.scored, 1);  // four like nodes, one state, asked twice
  ASSERT_FALSE(policy.asked.empty());
  for (const auto& parts : policy.asked) EXPECT_EQ(parts, (std::array<float, kScoreParts>{1, 2, 3, 4}));
}

// Three in four pods take one GPU, one in four all eight of a node: the 8-GPU types ask
// 0.25 * 8 / (0.75 + 0.25 * 8) = 8/11 of the GPU demand. A 1-GPU pod on an idle node grows the
// 8-GPU part of T by 0.25 * 7000 (the seven GPUs left can take no 8-GPU pod).
//  - Both nodes idle: F = 16 GPUs, A_8 = 16, w = 8/11 * 16 / 16 = 8/11: the term gives back
//    3/11 of the growth, 477 milli, rounded to 500.
//  - The other node half used: F = 12, A_8 = 8, w = min(1, 8/11 * 12 / 8) = 1: nothing.
TEST(IdleGroups, TheTermGivesBackTheGrowthOfIdleGroupsBeyondWhatTheirPodsNeed) {
  ClusterState state(uniform_cluster(2, 8));
  const std::vector<PodSpec> population = {pod("a", 1000, GpuRequest::whole(1)), pod("b", 1000, GpuRequest::whole(1)),
                                           pod("c", 1000, GpuRequest::whole(1)),
                                           pod("eight", 1000, GpuRequest::whole(8))};
  TesseraPolicy policy(WorkloadMix::from_pods(population));
  const PodSpec next = pod("next", 1000, GpuRequest::whole(1));
  ASSERT_TRUE(policy.has_cluster_term(next));

  const PlacementChoice on_idle = policy.score(state.view(0), next);
  EXPECT_NEAR(on_idle.parts[0], 0.25 * 7000, 1e-3);
  EXPECT_DOUBLE_EQ(policy.cluster_term(state.view(0), next, state.gpu_supply(), on_idle), 500);

  state.bind(state.add_pod(pod("four", 1000, GpuRequest::whole(4))), Binding{1, {0, 1, 2, 3}, kMilliPerGpu});
  EXPECT_DOUBLE_EQ(policy.cluster_term(state.view(0), next, state.gpu_supply(), on_idle), 0);

  // Without multi-GPU pods in the mix there is no such term.
  const std::vector<PodSpec> single_gpu = {population[0]};
  TesseraPolicy single(WorkloadMix::from_pods(single_gpu));
  EXPECT_EQ(single.cluster_term(state.view(0), next, state.gpu_supply(), on_idle), 0);
  EXPECT_FALSE(single.has_cluster_term(next));  // nor, with this cluster, one for pods held to models
}

}  // namespace
}  // namespace tessera
