// The tessera policy's per-node measure: which pod types it counts on a node, and that its fast
// path reads exactly the definitions it stands for (fragmentation.h, usable_capacity.h).
#include "policy/tessera_measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "policy/device_choice.h"
#include "policy/fgd_policy.h"
#include "policy/tessera_policy.h"
#include "policy/usable_capacity.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

PodType type_of(Resources request, GpuRequest gpu, double popularity, GpuModelSet models = GpuModelSet::any()) {
  return PodType{request, gpu, models, popularity};
}

TEST(TesseraMeasure, CountsOnlyTypesThatCouldEverRunOnTheNode) {
  auto cluster = uniform_cluster(1, 2, 16000);
  const GpuModelId h100 = *cluster->models.intern("H100");
  GpuModelSet only_h100;
  only_h100.add(h100);
  const NodeSpec& node = cluster->nodes[0];  // 2 A100s, 16 cores
  EXPECT_TRUE(TesseraMeasure::could_ever_run(node, type_of({1000, kGiB}, GpuRequest::whole(2), 1)));
  EXPECT_FALSE(TesseraMeasure::could_ever_run(node, type_of({1000, kGiB}, GpuRequest::whole(4), 1)));  // 2 GPUs
  EXPECT_FALSE(TesseraMeasure::could_ever_run(node, type_of({32000, kGiB}, GpuRequest::none(), 1)));   // 16 cores
  EXPECT_FALSE(TesseraMeasure::could_ever_run(node, type_of({1000, kGiB}, GpuRequest::portion(300), 1, only_h100)));

  // Half the pods want H100s, which this node has none of: its measure is that of the other half
  // alone, renormalised, so the H100 pods neither pull work toward it nor away from it.
  WorkloadMix mix(
      {type_of({1000, kGiB}, GpuRequest::whole(1), 0.5), type_of({1000, kGiB}, GpuRequest::whole(1), 0.5, only_h100)});
  TesseraMeasure measure(node, mix);
  ASSERT_EQ(measure.mix().types().size(), 1U);
  EXPECT_DOUBLE_EQ(measure.mix().types()[0].popularity, 1.0);
  NodeState state = NodeState::empty(node);
  state.gpu_used_milli = {400, 0};                                // 0.6 free on a device a 1-GPU pod cannot use
  EXPECT_DOUBLE_EQ(measure.unusable_capacity(node, state), 600);  // S: the 0.6 no 1-GPU pod can use
  state.free.cpu_milli = 500;  // and with no CPU for one: R and S both count all 1.6 free GPUs
  EXPECT_DOUBLE_EQ(measure.unusable_capacity(node, state), 1600 + 1600);
}

// Half the pods are CPU-only (16 cores), half take one GPU and 4 cores. With 10 cores left on
// 8 idle GPUs, two 1-GPU pods can still come: six GPUs are stranded for them (S). The CPU-only
// type no longer fits, but no GPU is lost to it: it counts nothing, and keeps its share.
TEST(TesseraMeasure, CpuOnlyTypesCountNothing) {
  auto cluster = uniform_cluster(1, 8, 96000);
  const NodeSpec& node = cluster->nodes[0];
  WorkloadMix mix({type_of({16000, kGiB}, GpuRequest::none(), 0.5), type_of({4000, kGiB}, GpuRequest::whole(1), 0.5)});
  TesseraMeasure measure(node, mix);
  ASSERT_EQ(measure.mix().types().size(), 1U);
  EXPECT_DOUBLE_EQ(measure.mix().types()[0].popularity, 0.5);
  NodeState state = NodeState::empty(node);
  state.free.cpu_milli = 10000;
  EXPECT_DOUBLE_EQ(measure.unusable_capacity(node, state), 0.5 * 6000);
}

// Random states of random nodes: the measure equals R + S over the node's renormalised types,
// the measure after a placement equals the measure of state_after (worked out from the counts of
// the devices taken in any order), and each group size's growth
// (TesseraMeasure::group_growth) equals the growth of R + S over the node's types of that size.
// The types draw their GPU requests from a few per node, so that types of one GPU need (which the
// measure counts together where their CPU and memory allow) differ in what else they ask.
TEST(TesseraMeasure, FastPathMatchesTheDefinitionsOnRandomStates) {
  std::mt19937_64 random(7);
  int group_growths = 0;
  auto uniform = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  for (int trial = 0; trial < 300; ++trial) {
    const int gpus = uniform(1, 8);
    auto cluster = uniform_cluster(1, gpus, 1000L * uniform(8, 96), kGiB * uniform(16, 512));
    const NodeSpec& node = cluster->nodes[0];
    std::vector<GpuRequest> requests;
    for (int r = 0; r < 3; ++r) {
      const int kind = uniform(0, 3);
      requests.push_back(kind == 0   ? GpuRequest::none()
                         : kind == 1 ? GpuRequest::whole(uniform(1, 8))
                         : kind == 2 ? GpuRequest::portion(uniform(1, 999))
                                     : GpuRequest::memory(kGiB * uniform(1, 80), 0));
    }
    std::vector<PodType> types;
    for (int t = 0; t < 8; ++t) {
      const Resources request{250L * uniform(0, 40), kGiB * uniform(0, 64)};
      types.push_back(type_of(request, requests[static_cast<size_t>(uniform(0, 2))], uniform(1, 10)));
    }
    double total = 0;
    for (const PodType& type : types) total += type.popularity;
    for (PodType& type : types) type.popularity /= total;
    TesseraMeasure measure(node, WorkloadMix(types));
    const std::vector<int> sizes = TesseraMeasure::group_sizes(WorkloadMix(types));

    NodeState state = NodeState::empty(node);
    for (int device = 0; device < gpus; ++device) {
      // Some devices left with just room for a few portions of one of the requests.
      const GpuRequest& some = requests[static_cast<size_t>(uniform(0, 2))];
      const int exact = some.kind == GpuRequest::Kind::kPortion ? std::max(0, 1000 - uniform(1, 3) * some.portion_milli)
                                                                : uniform(0, 1000);
      const int pick = uniform(0, 5);
      state.gpu_used_milli[static_cast<size_t>(device)] = static_cast<int16_t>(pick == 0   ? 1000
                                                                               : pick == 1 ? 0
                                                                               : pick == 2 ? exact
                                                                                           : uniform(0, 1000));
    }
    state.free.cpu_milli = node.allocatable.cpu_milli * uniform(0, 100) / 100;
    state.free.memory_bytes = node.allocatable.memory_bytes / 100 * uniform(0, 100);

    const WorkloadMix& counted = measure.mix();
    const double definition =
        stranded_behind_resources(state, counted) + expected_stranded_capacity(node, state, counted);
    ASSERT_NEAR(measure.unusable_capacity(node, state), definition, 1e-6) << "trial " << trial;

    for (const PodType& type : types) {  // CPU-only pods placed too, though their types are not counted
      PodSpec placed = pod("placed", type.request.cpu_milli, type.gpu, type.request.memory_bytes);
      if (check_node(node, state, placed) != Predicate::kFits) continue;
      std::vector<int> devices =
          placed.gpu.is_fractional() ? fraction_candidates(node, state, placed) : std::vector<int>{-1};
      for (int device : devices) {
        const NodeState after = state_after(node, state, placed, device);
        const double expected =
            stranded_behind_resources(after, counted) + expected_stranded_capacity(node, after, counted);
        ASSERT_NEAR(measure.unusable_capacity_after(node, state, placed, device), expected, 1e-6)
            << "trial " << trial << ", device " << device;
        // From the counts of another node of the group, its devices in another order, as the
        // tessera policy's cache hands them: the very same.
        NodeState permuted = state;
        std::mt19937_64 order(static_cast<uint64_t>(trial));  // its own, to leave the states drawn as they were
        std::shuffle(permuted.gpu_used_milli.begin(), permuted.gpu_used_milli.end(), order);
        std::vector<int32_t> slots(measure.need_count());
        const TesseraMeasure::DeviceCounts counts = measure.count_devices(node, permuted, slots);
        TesseraMeasure::NeedParts parts_before;
        TesseraMeasure::NeedParts parts_after;
        ASSERT_EQ(measure.unusable_capacity(node, state, counts, slots, parts_before),
                  measure.unusable_capacity(node, state))
            << "trial " << trial;
        ASSERT_EQ(measure.unusable_capacity_after(node, state, counts, slots, placed, device, parts_after),
                  measure.unusable_capacity_after(node, state, placed, device))
            << "trial " << trial << ", device " << device;
        // The group growths from the needs' parts those wrote, as the policy reads them.
        const TesseraMeasure::GroupGrowth growth = measure.group_growth(parts_after, measure.group_parts(parts_before));
        for (size_t i = 0; i < sizes.size(); ++i) {
          std::vector<PodType> of_size;
          for (const PodType& type_counted : counted.types()) {
            if (type_counted.gpu.kind == GpuRequest::Kind::kWhole && type_counted.gpu.whole_gpus == sizes[i])
              of_size.push_back(type_counted);
          }
          const WorkloadMix part(of_size);
          const double part_growth =
              stranded_behind_resources(after, part) + expected_stranded_capacity(node, after, part) -
              stranded_behind_resources(state, part) - expected_stranded_capacity(node, state, part);
          ASSERT_NEAR(growth[i], part_growth, 1e-6) << "trial " << trial << ", size " << sizes[i];
          ++group_growths;
        }
      }
    }
  }
  EXPECT_GT(group_growths, 100);
}

// A third of the pods want a whole A100; the rest a half of any GPU. A half-GPU pod arrives: it
// completes a half-used A100 (node 1), or starts on an idle T4 (node 0). FGD's measure also sees
// the A100 pods' view of the T4 node, where every free GPU is lost to them, and placing there
// shrinks that loss by as much as completing the A100 gains: a tie, which the lower index wins.
// Tessera's leaves them out of the T4 node, so it completes the A100.
TEST(TesseraPolicy, ModelConstraintsOfOtherPodsDoNotPullPlacements) {
  auto cluster = uniform_cluster(2, 2, 16000);
  const GpuModelId a100 = cluster->nodes[1].gpus[0].model;
  const GpuModelId t4 = *cluster->models.intern("T4");
  cluster->nodes[0].gpus.assign(2, GpuDevice{t4, 16 * kGiB});
  GpuModelSet only_a100;
  only_a100.add(a100);
  PodSpec constrained = pod("a100", 1000, GpuRequest::whole(1));
  constrained.allowed_models = only_a100;
  std::vector<PodSpec> population = {pod("half", 1000, GpuRequest::portion(500)),
                                     pod("half-2", 1000, GpuRequest::portion(500)), constrained};
  ClusterState state(cluster);
  const PodId running = state.add_pod(pod("running", 1000, GpuRequest::portion(500)));
  state.bind(running, Binding{1, {0}, 500});
  const PodSpec next = pod("next", 1000, GpuRequest::portion(500));

  TesseraPolicy tessera_policy(WorkloadMix::from_pods(population));
  auto binding = Placer(tessera_policy).find(state, next);
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 1);
  EXPECT_EQ(binding->devices, std::vector<int16_t>{0});

  FgdPolicy fgd(WorkloadMix::from_pods(population));
  EXPECT_EQ(Placer(fgd).find(state, next)->node, 0);
}

// Where CPU runs out before GPUs, a CPU-only pod should take CPU that no idle GPU needs. Half the
// pods are CPU-only (8 cores), half take one GPU and 2 cores. Node 0 has 6 idle GPUs and 16
// cores: 8 cores left there feed only 4 of them. Node 1 has 2 idle GPUs and 12 cores: 4 cores
// left still feed both. Counting the CPU-only type's own loss (it no longer fits on node 1) would
// send the pod to node 0 and strand two GPUs; it goes to node 1.
TEST(TesseraPolicy, CpuOnlyPodsTakeCpuNoIdleGpuNeeds) {
  auto cluster = uniform_cluster(2, 6, 16000);
  cluster->nodes[1].allocatable.cpu_milli = 12000;
  cluster->nodes[1].gpus.resize(2);
  std::vector<PodSpec> population = {pod("cpu", 8000, GpuRequest::none()), pod("gpu", 2000, GpuRequest::whole(1))};
  TesseraPolicy tessera_policy(WorkloadMix::from_pods(population));
  ClusterState state(cluster);
  auto binding = Placer(tessera_policy).find(state, pod("next", 8000, GpuRequest::none()));
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 1);
}

}  // namespace
}  // namespace tessera
