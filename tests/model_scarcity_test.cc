// The tessera policy's cluster-wide term: how scarce a GPU model is for the pods constrained to
// it, and that pods with a choice of models are steered away from the scarce one.
#include "policy/model_scarcity.h"

#include <gtest/gtest.h>

#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "policy/tessera_policy.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

GpuModelSet only(GpuModelId model) {
  GpuModelSet set;
  set.add(model);
  return set;
}

PodSpec constrained_to(GpuModelId model, PodSpec spec) {
  spec.allowed_models = only(model);
  return spec;
}

// Half the pods of the shape may run anywhere, half only on `model`.
std::vector<PodSpec> half_constrained_to(GpuModelId model, int64_t cpu_milli, GpuRequest gpu) {
  return {pod("any", cpu_milli, gpu), constrained_to(model, pod("constrained", cpu_milli, gpu))};
}

// Two nodes alike in all but their GPU model: node 0 of A100s, node 1 of T4s (same memory).
std::shared_ptr<ClusterSpec> two_models(GpuModelId& a100, GpuModelId& t4) {
  auto cluster = uniform_cluster(2, 4, 32000);
  a100 = cluster->nodes[0].gpus[0].model;
  t4 = *cluster->models.intern("T4");
  cluster->nodes[1].gpus.assign(4, GpuDevice{t4, 80 * kGiB});
  return cluster;
}

TEST(ModelScarcity, PressureIsTheShareOfAModelsFreeGpusItsConstrainedPodsNeed) {
  GpuSupply supply;
  const GpuModelId a = 0, b = 1;
  supply.capacity_milli[a] = supply.free_milli[a] = 8000;
  supply.capacity_milli[b] = supply.free_milli[b] = 8000;
  supply.device_memory_bytes[a] = supply.device_memory_bytes[b] = 80 * kGiB;
  supply.free_total_milli = 16000;
  // Per pod, 1250 milli-GPU are asked for: 500 by pods that run anywhere, 250 only on A, 500 only on B.
  WorkloadMix mix({PodType{{1000, kGiB}, GpuRequest::whole(1), GpuModelSet::any(), 0.5},
                   PodType{{1000, kGiB}, GpuRequest::whole(1), only(a), 0.25},
                   PodType{{1000, kGiB}, GpuRequest::whole(2), only(b), 0.25},
                   PodType{{1000, kGiB}, GpuRequest::none(), only(a), 0.1}});  // asks no GPU: no demand
  ModelScarcity scarcity(mix);
  ASSERT_TRUE(scarcity.any_constrained());
  EXPECT_DOUBLE_EQ(scarcity.constrained_share(a, supply), 0.2);
  EXPECT_DOUBLE_EQ(scarcity.constrained_share(b, supply), 0.4);
  EXPECT_DOUBLE_EQ(scarcity.pressure(a, supply), 0.2 * 16000 / 8000);
  EXPECT_DOUBLE_EQ(scarcity.pressure(b, supply), 0.4 * 16000 / 8000);

  // Half of A taken by pods that could have run anywhere: A's pods now need 60% of what is left
  // of it, and B's only 60% too; with all of A gone, nothing of it is left to weigh.
  supply.free_milli[a] = 4000;
  supply.free_total_milli = 12000;
  EXPECT_DOUBLE_EQ(scarcity.pressure(a, supply), 0.2 * 12000 / 4000);
  EXPECT_DOUBLE_EQ(scarcity.pressure(b, supply), 0.4 * 12000 / 8000);
  supply.free_milli[a] = 0;
  EXPECT_DOUBLE_EQ(scarcity.pressure(a, supply), 0);
}

TEST(ModelScarcity, WithoutConstrainedPodsNothingCosts) {
  GpuModelId a100 = 0, t4 = 0;
  auto cluster = two_models(a100, t4);
  ClusterState state(cluster);
  ModelScarcity scarcity(WorkloadMix::from_pods(std::vector<PodSpec>{pod("any", 1000, GpuRequest::whole(1))}));
  EXPECT_EQ(
      scarcity.cost(cluster->nodes[0], state.node_state(0), pod("p", 1000, GpuRequest::whole(2)), state.gpu_supply()),
      0);
  EXPECT_FALSE(scarcity.any_constrained());  // known once the cluster's nodes are seen
}

// Node 0 of model G3 with 128 cores; nodes 1 and 2 of model G2 with 96; eight GPUs each.
std::shared_ptr<ClusterSpec> large_and_common_nodes(GpuModelId& g3, GpuModelId& g2) {
  auto cluster = uniform_cluster(3, 8, 96000);
  g3 = *cluster->models.intern("G3");
  g2 = *cluster->models.intern("G2");
  cluster->nodes[0].allocatable.cpu_milli = 128000;
  cluster->nodes[0].gpus.assign(8, GpuDevice{g3, 80 * kGiB});
  for (size_t node : {1, 2}) cluster->nodes[node].gpus.assign(8, GpuDevice{g2, 80 * kGiB});
  return cluster;
}

TEST(ModelScarcity, TheSupplyListsEachShapeOfGpuNodeOnce) {
  GpuModelId g3 = 0, g2 = 0;
  auto cluster = large_and_common_nodes(g3, g2);
  ClusterState state(cluster);
  const std::vector<GpuSupply::NodeShape>& shapes = state.gpu_supply().node_shapes;
  ASSERT_EQ(shapes.size(), 2U);
  EXPECT_EQ(shapes[0], (GpuSupply::NodeShape{g3, 8, {128000, 256 * kGiB}}));
  EXPECT_EQ(shapes[1], (GpuSupply::NodeShape{g2, 8, {96000, 256 * kGiB}}));
}

// A pod that asks for more CPU than nodes of its GPU count mostly have can run only on the larger
// ones: it counts as constrained to their model, as if it had named it.
TEST(ModelScarcity, APodTooLargeForMostNodesOfItsGpuCountIsConstrainedToTheLargerNodesModel) {
  GpuModelId g3 = 0, g2 = 0;
  auto cluster = large_and_common_nodes(g3, g2);
  ClusterState state(cluster);
  const PodSpec small = pod("small", 2000, GpuRequest::whole(1));
  const PodSpec wide = pod("wide", 100000, GpuRequest::whole(8));
  ModelScarcity scarcity(WorkloadMix::from_pods(std::vector<PodSpec>{small, wide}));
  EXPECT_GT(scarcity.constrained_share(g3, state.gpu_supply()), 0.8);  // 8 of the 9 GPUs asked for per pair
  EXPECT_EQ(scarcity.constrained_share(g2, state.gpu_supply()), 0);
  EXPECT_TRUE(scarcity.any_constrained());
  EXPECT_GT(scarcity.cost(cluster->nodes[0], state.node_state(0), small, state.gpu_supply()), 0);
  EXPECT_EQ(scarcity.cost(cluster->nodes[1], state.node_state(1), small, state.gpu_supply()), 0);

  // The small pod leaves the large node to the pod that can run nowhere else.
  TesseraPolicy tessera_policy(WorkloadMix::from_pods(std::vector<PodSpec>{small, wide}));
  ASSERT_TRUE(Placer(tessera_policy).find(state, small).has_value());
  EXPECT_NE(Placer(tessera_policy).find(state, small)->node, 0);

  // An eight-GPU pod every node can hold constrains nothing; nor does one no node can hold; nor
  // one so large that, filling the GPUs, the mix would run out of CPU first (CPU decides then).
  for (int64_t cpu_milli : {90000, 200000, 120000}) {
    ModelScarcity fits_all(
        WorkloadMix::from_pods(std::vector<PodSpec>{small, pod("big", cpu_milli, GpuRequest::whole(8))}));
    EXPECT_EQ(fits_all.cost(cluster->nodes[0], state.node_state(0), small, state.gpu_supply()), 0) << cpu_milli;
    EXPECT_FALSE(fits_all.any_constrained()) << cpu_milli;
  }

  // Where the nodes that can take it hold most of the GPUs, it is not held to their model either.
  cluster->nodes[1].allocatable.cpu_milli = 128000;
  cluster->nodes[1].gpus.assign(8, GpuDevice{g3, 80 * kGiB});
  ClusterState mostly_large(cluster);
  ModelScarcity most(WorkloadMix::from_pods(std::vector<PodSpec>{small, wide}));
  EXPECT_EQ(most.cost(cluster->nodes[0], mostly_large.node_state(0), small, mostly_large.gpu_supply()), 0);
  EXPECT_FALSE(most.any_constrained());
}

TEST(ModelScarcity, ClusterStateKeepsTheSupplyInStepWithBindings) {
  GpuModelId a100 = 0, t4 = 0;
  auto cluster = two_models(a100, t4);
  ClusterState state(cluster);
  EXPECT_EQ(state.gpu_supply().capacity_milli[a100], 4000);
  EXPECT_EQ(state.gpu_supply().free_milli[t4], 4000);
  EXPECT_EQ(state.gpu_supply().free_total_milli, 8000);
  EXPECT_EQ(state.gpu_supply().device_memory_bytes[t4], 80 * kGiB);

  const PodId two = state.add_pod(pod("two", 1000, GpuRequest::whole(2)));
  const PodId share = state.add_pod(pod("share", 1000, GpuRequest::portion(300)));
  state.bind(two, Binding{1, {0, 1}, kMilliPerGpu});
  state.bind(share, Binding{0, {3}, 300});
  EXPECT_EQ(state.gpu_supply().free_milli[t4], 2000);
  EXPECT_EQ(state.gpu_supply().free_milli[a100], 3700);
  EXPECT_EQ(state.gpu_supply().free_total_milli, 5700);
  state.unbind(two);
  EXPECT_EQ(state.gpu_supply().free_milli[t4], 4000);
  EXPECT_EQ(state.gpu_supply().free_total_milli, 7700);
}

// Half the pods may run only on A100s. A pod that may run anywhere finds both nodes equally good
// by the per-node measure; the lowest index would send it to the A100s, which the constrained
// pods need, and the cluster-wide term sends it to the T4s instead.
TEST(ModelScarcity, AnUnconstrainedPodGoesToThePlentifulModelWhenScoresOtherwiseTie) {
  GpuModelId a100 = 0, t4 = 0;
  auto cluster = two_models(a100, t4);
  const std::vector<PodSpec> population = half_constrained_to(a100, 4000, GpuRequest::whole(1));
  ClusterState state(cluster);
  const PodSpec next = pod("next", 4000, GpuRequest::whole(1));
  TesseraPolicy tessera_policy(WorkloadMix::from_pods(population));
  ASSERT_EQ(tessera_policy.score(state.view(0), next).score, tessera_policy.score(state.view(1), next).score);
  EXPECT_LT(tessera_policy.cluster_term(state.view(0), next, state.gpu_supply(), PlacementChoice{.device = -1}), 0);
  EXPECT_EQ(tessera_policy.cluster_term(state.view(1), next, state.gpu_supply(), PlacementChoice{.device = -1}), 0);
  auto binding = Placer(tessera_policy).find(state, next);
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 1);

  // The constrained pods themselves still take the A100s: the term costs them alike everywhere.
  auto constrained = Placer(tessera_policy).find(state, population[1]);
  ASSERT_TRUE(constrained.has_value());
  EXPECT_EQ(constrained->node, 0);

  // With no pod constrained to a model, the tie goes to the lowest index as before.
  TesseraPolicy unconstrained(WorkloadMix::from_pods(std::vector<PodSpec>{population[0]}));
  EXPECT_EQ(Placer(unconstrained).find(state, next)->node, 0);
}

// A fraction that fits on an A100 already in use takes no idle A100 from the constrained whole-GPU
// pods: the term leaves the packing to the measure there.
TEST(ModelScarcity, AFractionFillingARemainderOfTheScarceModelCostsNothing) {
  GpuModelId a100 = 0, t4 = 0;
  auto cluster = two_models(a100, t4);
  std::vector<PodSpec> population = half_constrained_to(a100, 1000, GpuRequest::portion(500));
  population[1].gpu = GpuRequest::whole(1);
  ClusterState state(cluster);
  const PodId running = state.add_pod(pod("running", 1000, GpuRequest::portion(500)));
  state.bind(running, Binding{0, {0}, 500});
  const PodSpec next = pod("next", 1000, GpuRequest::portion(500));
  TesseraPolicy tessera_policy(WorkloadMix::from_pods(population));
  ModelScarcity scarcity(WorkloadMix::from_pods(population));
  EXPECT_EQ(scarcity.cost(cluster->nodes[0], state.node_state(0), next, state.gpu_supply()), 0);
  auto binding = Placer(tessera_policy).find(state, next);
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 0);
  EXPECT_EQ(binding->devices, std::vector<int16_t>{0});
}

}  // namespace
}  // namespace tessera
