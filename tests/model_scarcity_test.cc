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
  EXPECT_FALSE(scarcity.any_constrained());
  EXPECT_EQ(
      scarcity.cost(cluster->nodes[0], state.node_state(0), pod("p", 1000, GpuRequest::whole(2)), state.gpu_supply()),
      0);
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
