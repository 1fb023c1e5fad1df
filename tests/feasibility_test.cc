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
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::memory(24 * kGiB, 24 * kGiB))), Predicate::kFits);
  EXPECT_EQ(check_node(node, state, pod("p", 1, GpuRequest::memory(24 * kGiB + 1, 24 * kGiB + 1))),
            Predicate::kGpuFraction);
}

TEST_F(FeasibilityTest, LimitsAddUpToTheNodesOvercommitAtMost) {
  state.gpu_used_milli = {700, 700, 700, 700};
  // 24 GiB request (300 milli) with a 40 GiB limit (500): the device has room for the request; the
  // limits would reach 700 + 500 = 1200 milli of it.
  const PodSpec bursting = pod("p", 1, GpuRequest::memory(24 * kGiB, 40 * kGiB));
  EXPECT_EQ(check_node(node, state, bursting), Predicate::kGpuMemoryLimit);
  node.gpu_memory_overcommit_milli = 1199;
  EXPECT_EQ(check_node(node, state, bursting), Predicate::kGpuMemoryLimit);
  node.gpu_memory_overcommit_milli = 1200;
  EXPECT_EQ(check_node(node, state, bursting), Predicate::kFits);
  // Once placed, its burst counts against the cap for every later pod, portions included.
  NodeState after = state_after(node, state, bursting, 0);
  EXPECT_EQ(after.gpu_used_milli[0], 1000);
  EXPECT_EQ(after.device_burst_milli(0), 200);
  EXPECT_EQ(after.device_limit_milli(0), 1200);
  after.gpu_used_milli[0] = 900;            // as if 100 milli of requests left the device
  node.gpu_memory_overcommit_milli = 1100;  // and the pool's overcommit were lowered
  EXPECT_FALSE(device_fits_fraction(node, after, pod("q", 1, GpuRequest::portion(100)), 0));
  EXPECT_TRUE(device_fits_fraction(node, after, pod("q", 1, GpuRequest::portion(100)), 1));
  // A limit beyond the device's memory fits no device, whatever the cap.
  node.gpu_memory_overcommit_milli = 8000;
  EXPECT_EQ(check_node(node, NodeState::empty(node), pod("p", 1, GpuRequest::memory(24 * kGiB, 81 * kGiB))),
            Predicate::kGpuMemoryLimit);
}

TEST_F(FeasibilityTest, ABurstIsTheLimitsRoundedShareBeyondTheRequests) {
  EXPECT_EQ(GpuRequest::memory(20 * kGiB, 40 * kGiB).limit_milli_on_device(80 * kGiB), 500);
  EXPECT_EQ(GpuRequest::memory(20 * kGiB, 40 * kGiB).burst_milli_on_device(80 * kGiB), 250);
  EXPECT_EQ(GpuRequest::memory(20 * kGiB, 40 * kGiB + 1).burst_milli_on_device(80 * kGiB), 251);
  EXPECT_EQ(GpuRequest::memory(20 * kGiB, 0).burst_milli_on_device(80 * kGiB), 0);  // no limit: the request
  EXPECT_EQ(GpuRequest::portion(250).limit_milli_on_device(80 * kGiB), 250);
  // Releasing the last burst leaves the state as if none had been there.
  NodeState released = state;
  const PodSpec bursting = pod("p", 1, GpuRequest::memory(20 * kGiB, 40 * kGiB));
  const Binding binding = Binding::on_device(0, 2, bursting.gpu, 80 * kGiB);
  released.apply(bursting, binding);
  EXPECT_EQ(released.device_burst_milli(2), 250);
  released.release(bursting, binding);
  EXPECT_EQ(released, state);
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
