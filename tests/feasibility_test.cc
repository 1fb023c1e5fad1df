#include "policy/feasibility.h"

#include <gtest/gtest.h>

#include "policy/device_choice.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

class FeasibilityTest : public ::testing::Test {
 protected:
  std::shared_ptr<ClusterSpec> cluster = uniform_cluster(1, 4, 16000, 64 * kGiB);
  NodeSpec& node = cluster->nodes[0];
  NodeState state = NodeState::empty(cluster->nodes[0]);
};

TEST_F(FeasibilityTest, CpuMemoryAndWholeGpus) {
  EXPECT_EQ(check_node(node, state, pod("p", 16000, GpuRequest::whole(4), 64 * kGiB)), Predicate::kFits);
  EXPECT_EQ(check_node(node, state, pod("p", 16001, GpuRequest::none())), Predicate::kCpu);
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::none(), 64 * kGiB + 1)), Predicate::kMemory);
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::whole(5))), Predicate::kWholeGpus);
  state.gpu_used_milli[2] = 1;  // a device with any share on it is not idle
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::whole(4))), Predicate::kWholeGpus);
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::whole(3))), Predicate::kFits);
  EXPECT_EQ(pick_whole_devices(node, state, pod("p", 1, GpuRequest::whole(3))), (std::vector<int16_t>{0, 1, 3}));
}

TEST_F(FeasibilityTest, FractionNeedsOneDevice) {
  state.gpu_used_milli = {700, 700, 700, 700};  // 1.2 GPUs free in total, 0.3 on each
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::portion(300))), Predicate::kFits);
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::portion(301))), Predicate::kGpuFraction);
  // 80 GiB devices: 24 GiB is 300 milli, rounded up.
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::memory(24 * kGiB, 40 * kGiB))), Predicate::kFits);
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::memory(24 * kGiB + 1, 40 * kGiB))),
            Predicate::kGpuFraction);
}

TEST_F(FeasibilityTest, MemoryRequestRoundsUpToMilli) {
  EXPECT_EQ(GpuRequest::memory(40 * kGiB, 0).milli_on_device(80 * kGiB), 500);
  EXPECT_EQ(GpuRequest::memory(40 * kGiB + 1, 0).milli_on_device(80 * kGiB), 501);
  EXPECT_EQ(GpuRequest::portion(250).milli_on_device(80 * kGiB), 250);
  EXPECT_EQ(GpuRequest::whole(2).nominal_milli(), 2000);
}

TEST_F(FeasibilityTest, SelectorTaintsAndModels) {
  node.labels = {{"rack", "r1"}};
  node.taints = {Taint{"dedicated", "infer", TaintEffect::kNoSchedule},
                 Taint{"soft", "x", TaintEffect::kPreferNoSchedule}};
  PodSpec p = pod("p", 1, GpuRequest::whole(1));
  EXPECT_EQ(check_node(node, state, p), Predicate::kTaint);
  p.tolerations = {Toleration{"dedicated", Toleration::Operator::kEqual, "infer", std::nullopt}};
  EXPECT_EQ(check_node(node, state, p), Predicate::kFits);
  p.tolerations = {Toleration{"dedicated", Toleration::Operator::kEqual, "train", std::nullopt}};
  EXPECT_EQ(check_node(node, state, p), Predicate::kTaint);
  p.tolerations = {Toleration{"", Toleration::Operator::kExists, "", std::nullopt}};
  EXPECT_EQ(check_node(node, state, p), Predicate::kFits);
  p.node_selector = {{"rack", "r2"}};
  EXPECT_EQ(check_node(node, state, p), Predicate::kNodeSelector);
  p.node_selector = {{"rack", "r1"}};
  GpuModelId h100 = *cluster->models.intern("H100");
  p.allowed_models = GpuModelSet();
  p.allowed_models.add(h100);
  EXPECT_EQ(check_node(node, state, p), Predicate::kGpuModel);
  p.allowed_models.add(*cluster->models.find("A100"));
  EXPECT_EQ(check_node(node, state, p), Predicate::kFits);
  node.schedulable = false;
  EXPECT_EQ(check_node(node, state, p), Predicate::kUnschedulable);
}

TEST_F(FeasibilityTest, FractionCandidatesSkipEquivalentDevices) {
  state.gpu_used_milli = {500, 0, 500, 900};
  EXPECT_EQ(fraction_candidates(node, state, pod("p", 1, GpuRequest::portion(100))), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(tightest_device(node, state, pod("p", 1, GpuRequest::portion(100))), 3);
  EXPECT_EQ(loosest_device(node, state, pod("p", 1, GpuRequest::portion(100))), 1);
  EXPECT_EQ(tightest_device(node, state, pod("p", 1, GpuRequest::portion(200))), 0);
}

}  // namespace
}  // namespace tessera
