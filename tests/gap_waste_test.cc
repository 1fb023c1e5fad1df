// The waste of a device's gap against the mix's common portions, and the tessera policy's use of
// it: a fraction is kept from leaving a gap that only rare portions fit.
#include "policy/gap_waste.h"

#include <gtest/gtest.h>

#include <vector>

#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "policy/tessera_policy.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

// Twenty 470s, twenty 320s and one 160: the 160 is under kCommonShare of the fractions.
std::vector<PodSpec> mostly_470_and_320() {
  std::vector<PodSpec> pods;
  for (int i = 0; i < 20; ++i) {
    pods.push_back(pod("s470", 1000, GpuRequest::portion(470)));
    pods.push_back(pod("s320", 1000, GpuRequest::portion(320)));
  }
  pods.push_back(pod("s160", 1000, GpuRequest::portion(160)));
  return pods;
}

TEST(GapWaste, TheGapLessTheLargestSumOfCommonPortions) {
  const GapWaste waste(WorkloadMix::from_pods(mostly_470_and_320()));
  ASSERT_FALSE(waste.empty());
  EXPECT_EQ(waste.waste(0), 0);
  EXPECT_EQ(waste.waste(1000), 40);  // 3 x 320
  EXPECT_EQ(waste.waste(940), 0);    // 2 x 470
  EXPECT_EQ(waste.waste(530), 60);   // 470
  EXPECT_EQ(waste.waste(680), 40);   // 2 x 320
  EXPECT_EQ(waste.waste(210), 210);  // only the rare 160 fits
  EXPECT_EQ(waste.waste(319), 319);
  // 470 on 530 free closes to 60, as the 470 alone did; 320 there leaves 210 nothing common fills.
  EXPECT_EQ(waste.change(530, 470), 0);
  EXPECT_EQ(waste.change(530, 320), 150);
  EXPECT_EQ(waste.change(1000, 320), 0);
}

TEST(GapWaste, EmptyWithoutFractions) {
  const GapWaste waste(WorkloadMix::from_pods(std::vector<PodSpec>{pod("whole", 1000, GpuRequest::whole(1))}));
  EXPECT_TRUE(waste.empty());
  EXPECT_EQ(waste.waste(530), 0);
  EXPECT_EQ(waste.change(1000, 320), 0);
}

// Two one-GPU nodes, node 0 with a 470 on it (530 free), node 1 idle. A 320 on node 0 would leave
// 210 that only the rare 160 fits, and the sum of squares would take it there (it moves node 0's
// gap from the 470 class to the empty 160 class, where node 1 would add a second 470-class gap);
// the gap term sends it to node 1, where 680 is left for two more 320s.
TEST(GapWaste, TesseraLeavesGapsTheCommonPortionsFill) {
  ClusterState state(uniform_cluster(2, 1));
  state.bind(state.add_pod(pod("p0", 1000, GpuRequest::portion(470))), Binding{0, {0}, 470});
  TesseraPolicy policy(WorkloadMix::from_pods(mostly_470_and_320()));
  const PodSpec next = pod("next", 1000, GpuRequest::portion(320));
  const double on_gap = policy.cluster_term(state.view(0), next, state.gpu_supply(), PlacementChoice{.device = 0});
  const double on_idle = policy.cluster_term(state.view(1), next, state.gpu_supply(), PlacementChoice{.device = 0});
  EXPECT_DOUBLE_EQ(on_gap, -TesseraPolicy::kSquaresWeight * 0 - TesseraPolicy::kGapWeight * 150);
  EXPECT_DOUBLE_EQ(on_idle, -TesseraPolicy::kSquaresWeight * 3 - TesseraPolicy::kGapWeight * 0);
  const auto binding = Placer(policy).find(state, next);
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 1);
}

// Where CPU runs out before the GPUs, the gaps are not what limits the packing: off, as the sum
// of squares is.
TEST(GapWaste, OffWhereCpuRunsOutBeforeTheGpus) {
  ClusterState state(uniform_cluster(2, 1));
  state.bind(state.add_pod(pod("p0", 1000, GpuRequest::portion(470))), Binding{0, {0}, 470});
  std::vector<PodSpec> population = mostly_470_and_320();
  for (int i = 0; i < 40; ++i) population.push_back(pod("cpu-only", 60000, GpuRequest::none()));
  TesseraPolicy policy(WorkloadMix::from_pods(population));
  EXPECT_DOUBLE_EQ(policy.cluster_term(state.view(0), pod("next", 1000, GpuRequest::portion(320)), state.gpu_supply(),
                                       PlacementChoice{.device = 0}),
                   0);
}

}  // namespace
}  // namespace tessera
