// Held-out pod lists drawn from a published one (sim/pod_mix.h) and the offline packing the
// arrival experiment measures policies against (sim/offline_packing.h).
#include "sim/pod_mix.h"

#include <gtest/gtest.h>

#include <map>

#include "sim/offline_packing.h"
#include "sim/scenario_loader.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

TEST(PodMix, ReadsItsKeysAndNamesTheOneItCannotRead) {
  auto spec = parse_pod_mix("gpu-spec=0.3,multi-gpu=0.1,cpu-only=0.2,seed=9,pods=500,base=gpushare40");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_DOUBLE_EQ(spec->gpu_spec_share, 0.3);
  EXPECT_DOUBLE_EQ(*spec->kind_share[static_cast<int>(PodKind::kMultiGpu)], 0.1);
  EXPECT_DOUBLE_EQ(*spec->kind_share[static_cast<int>(PodKind::kCpuOnly)], 0.2);
  EXPECT_FALSE(spec->kind_share[static_cast<int>(PodKind::kSharing)].has_value());
  EXPECT_EQ(spec->seed, 9U);
  EXPECT_EQ(spec->pods, 500);
  EXPECT_EQ(spec->base, "builtin:gpushare40");

  for (auto [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"gpu-spec=1.5", "gpu-spec=1.5: expected a share between 0 and 1"},
           {"multigpu=0.1", "unknown key 'multigpu'"},
           {"seed", "'seed': expected key=value"},
           {"pods=0", "pods=0: expected a whole number of at least 1"},
           {"pods=2000000", "pods=2000000: expected at most 1000000"},
           {"portions=250/1000", "portions=250/1000: '1000' is not a portion"},
           {"portions=250//500", "portions=250//500: '' is not a portion"},
           {"portions=most", "portions=most: 'most' is not a portion (expected base, even"}}) {
    auto bad = parse_pod_mix(text);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.error().message.find(expected), std::string::npos) << bad.error().message;
  }
}

// Drawn from the built-in default list on the built-in cluster, as `tessera sim --workload mix:...`.
TEST(PodMix, DrawsTheSharesAskedForAndConstrainsGpuPodsToModelsThatCanHoldThem) {
  ScenarioRequest request;
  request.workload = "mix:gpu-spec=0.3,multi-gpu=0.1,cpu-only=0.25,seed=4,pods=6000";
  request.workload_given = true;
  auto scenario = load_scenario(request);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  EXPECT_FALSE(scenario->untimed.empty());  // a timeline replay is refused with a reason
  ASSERT_EQ(scenario->workloads.size(), 6000U);
  int kinds[kPodKindCount] = {};
  int gpu_pods = 0, constrained = 0;
  for (const WorkloadSpec& workload : scenario->workloads) {
    const PodSpec& drawn = workload.pods.front();
    ++kinds[static_cast<int>(pod_kind(drawn.gpu))];
    if (!drawn.gpu.wants_gpu()) continue;
    ++gpu_pods;
    if (drawn.allowed_models.is_any()) continue;
    ++constrained;
    EXPECT_EQ(std::popcount(drawn.allowed_models.bits()), 1);
    const int wanted = drawn.gpu.kind == GpuRequest::Kind::kWhole ? drawn.gpu.whole_gpus : 1;
    bool some_node_holds_it = false;
    for (const NodeSpec& node : scenario->cluster->nodes) {
      some_node_holds_it |= node.gpu_count() >= wanted && drawn.allowed_models.allows(node.gpus.front().model) &&
                            drawn.request.fits_in(node.allocatable);
    }
    EXPECT_TRUE(some_node_holds_it) << drawn.name;
  }
  EXPECT_NEAR(kinds[static_cast<int>(PodKind::kMultiGpu)] / 6000.0, 0.10, 0.02);
  EXPECT_NEAR(kinds[static_cast<int>(PodKind::kCpuOnly)] / 6000.0, 0.25, 0.02);
  EXPECT_NEAR(static_cast<double>(constrained) / gpu_pods, 0.30, 0.03);

  auto again = load_scenario(request);  // the same text draws the same list
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(again->workloads[i].pods.front().request.cpu_milli,
              scenario->workloads[i].pods.front().request.cpu_milli);
    EXPECT_EQ(again->workloads[i].pods.front().allowed_models, scenario->workloads[i].pods.front().allowed_models);
  }
}

// The fractions' sizes: the default list's most common portion (810) makes up about a third of its
// fractions; drawn evenly over the distinct portions it is one size among dozens, and a list of
// portions replaces every fraction's size while the other pods stay as drawn.
TEST(PodMix, DrawsFractionSizesEvenlyOrFromTheListGiven) {
  auto spec = parse_pod_mix("portions=250/500/750");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->portion_draw, PortionDraw::kListed);
  EXPECT_EQ(spec->listed_portions, (std::vector<int>{250, 500, 750}));

  ScenarioRequest request;
  request.workload_given = true;
  auto portions_of = [&](const std::string& text) {
    request.workload = text;
    auto scenario = load_scenario(request);
    EXPECT_TRUE(scenario.ok()) << scenario.error().message;
    std::map<int, int> count;
    int whole = 0;
    for (const WorkloadSpec& workload : scenario->workloads) {
      const GpuRequest& gpu = workload.pods.front().gpu;
      if (gpu.kind == GpuRequest::Kind::kPortion) ++count[gpu.portion_milli];
      whole += gpu.kind == GpuRequest::Kind::kWhole;
    }
    return std::pair{count, whole};
  };
  auto share_of = [](const std::map<int, int>& count, int milli) {
    int total = 0;
    for (const auto& [portion, pods] : count) total += pods;
    return static_cast<double>(count.count(milli) ? count.at(milli) : 0) / total;
  };
  const auto [as_base, whole_as_base] = portions_of("mix:sharing=0.5,seed=3,pods=8000");
  const auto [even, whole_even] = portions_of("mix:sharing=0.5,seed=3,pods=8000,portions=even");
  EXPECT_GT(share_of(as_base, 810), 0.3);
  EXPECT_GT(even.size(), 10U);
  EXPECT_LT(share_of(even, 810), 1.5 / static_cast<double>(even.size()) + 0.02);
  EXPECT_GT(share_of(even, 810), 0.5 / static_cast<double>(even.size()));
  EXPECT_NEAR(whole_even / 8000.0, whole_as_base / 8000.0, 0.03);

  const auto [listed, whole_listed] = portions_of("mix:sharing=0.5,seed=3,pods=8000,portions=250/500/750");
  ASSERT_EQ(listed.size(), 3U);
  for (int milli : {250, 500, 750}) EXPECT_NEAR(share_of(listed, milli), 1.0 / 3, 0.04) << milli;
  EXPECT_NEAR(whole_listed / 8000.0, whole_as_base / 8000.0, 0.03);
}

TEST(PodMix, RefusesSharesThatCannotBeDrawn) {
  ScenarioRequest request;
  request.workload_given = true;
  request.workload = "mix:multi-gpu=0.7,cpu-only=0.5";
  auto too_much = load_scenario(request);
  ASSERT_FALSE(too_much.ok());
  EXPECT_NE(too_much.error().message.find("add up to 1.2"), std::string::npos) << too_much.error().message;
  request.workload = "mix:base=no-such-list";
  auto unknown = load_scenario(request);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("builtin:no-such-list: no such built-in trace"), std::string::npos)
      << unknown.error().message;
}

// Two nodes of 2 GPUs and pods of 1, 2 and 1 GPUs: a scheduler that spreads the 1-GPU pods as
// they come has no node left for the 2-GPU pod; knowing them all, the packing places every pod.
// CPU-only pods come first, as a scheduler serves them when they arrive.
TEST(OfflinePacking, PlacesLargestFirstKnowingEveryPod) {
  auto cluster = uniform_cluster(2, 2);
  std::vector<PodSpec> pods = {pod("small-a", 1000, GpuRequest::whole(1)), pod("big", 1000, GpuRequest::whole(2)),
                               pod("small-b", 1000, GpuRequest::whole(1))};
  EXPECT_EQ(offline_packed_gpu_milli(cluster, pods), 4000);
  // A CPU-only pod that leaves a node too little CPU for any GPU pod is still served: only the
  // 2-GPU pod's node is left to the GPU pods.
  pods.push_back(pod("cpu", 63500, GpuRequest::none()));
  EXPECT_EQ(offline_packed_gpu_milli(cluster, pods), 2000);
  std::vector<PodSpec> halves = {pod("h1", 100, GpuRequest::portion(500)), pod("h2", 100, GpuRequest::portion(700)),
                                 pod("h3", 100, GpuRequest::portion(300)), pod("h4", 100, GpuRequest::portion(500))};
  EXPECT_EQ(offline_packed_gpu_milli(uniform_cluster(1, 2), halves), 2000);  // 0.7+0.3 and 0.5+0.5
}

// Shares that largest-first placement leaves 0.2 short of two devices (0.5+0.4 and 0.3+0.3+0.3):
// packed device by device they fill both. A device's pods must also find their CPU on its node:
// where the pair that fills a GPU asks more CPU than the node has, it does not go together.
TEST(OfflinePacking, FillsDevicesWithSharesThatAddUpAndRespectsCpu) {
  std::vector<PodSpec> shares;
  for (const int milli : {300, 500, 200, 400, 300, 300})
    shares.push_back(pod("s" + std::to_string(milli), 100, GpuRequest::portion(milli)));
  EXPECT_EQ(offline_packed_gpu_milli(uniform_cluster(1, 2), shares), 2000);

  auto small_cpu = uniform_cluster(1, 1);  // 64 cores
  const std::vector<PodSpec> hungry = {pod("a", 40000, GpuRequest::portion(600)),
                                       pod("b", 40000, GpuRequest::portion(400))};
  EXPECT_EQ(offline_packed_gpu_milli(small_cpu, hungry), 600);
}

// One node of 8 GPUs and five of 2 (four with 16 cores, one with 104), an 8-GPU pod, six 1-GPU
// pods and eight fractions: 17.9 GPUs asked of 18. Once the 8-GPU pod and the 1-GPU pods are
// placed, measured against every pod the policy still keeps devices idle for 1-GPU pods that will
// not come, and the fractions strand CPU the others needed (17.2 GPUs); measured against the pods
// still to place, the packing allocates 17.5.
TEST(OfflinePacking, MeasuresAgainstThePodsStillToPlace) {
  auto cluster = uniform_cluster(1, 8, 96000);
  for (const int64_t cpu : {16000, 16000, 104000, 16000, 16000}) {
    NodeSpec node = uniform_cluster(1, 2, cpu)->nodes.front();
    node.name = fmt::format("small-{}", cluster->nodes.size());
    cluster->nodes.push_back(node);
  }
  std::vector<PodSpec> pods = {pod("eight", 40000, GpuRequest::whole(8))};
  for (const int64_t cpu : {4000, 14000, 12000, 16000, 4000, 10000})
    pods.push_back(pod(fmt::format("one-{}", pods.size()), cpu, GpuRequest::whole(1)));
  for (const auto& [milli, cpu] : std::vector<std::pair<int, int64_t>>{
           {300, 7000}, {400, 6000}, {800, 5000}, {100, 1000}, {900, 6000}, {700, 8000}, {100, 4000}, {600, 3000}})
    pods.push_back(pod(fmt::format("share-{}", pods.size()), cpu, GpuRequest::portion(milli)));
  EXPECT_GE(offline_packed_gpu_milli(cluster, pods), 17500);
}

}  // namespace
}  // namespace tessera
