// The sum-of-squares term for fractions: the cluster's partial devices counted by free share in
// step with every binding, the change a placement makes to the sum of their squares, and the
// tessera policy's use of it (the exact fit preferred; the device the score chose read).
#include "policy/sum_of_squares.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/cluster_state.h"
#include "engine/invariants.h"
#include "engine/placer.h"
#include "policy/device_choice.h"
#include "policy/tessera_policy.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

// A mix of fractions of 200, 300 and 500 milli: gap classes from 200, 300 and 500.
std::vector<PodSpec> portions_200_300_500() {
  return {pod("s200", 1000, GpuRequest::portion(200)), pod("s300", 1000, GpuRequest::portion(300)),
          pod("s500", 1000, GpuRequest::portion(500))};
}

TEST(SumOfSquares, ClusterStateCountsPartialDevicesByFreeShareInStepWithBindings) {
  ClusterState state(uniform_cluster(2, 2));
  const GpuModelId model = state.node_spec(0).gpus[0].model;
  const PodId a = state.add_pod(pod("a", 1000, GpuRequest::portion(300)));
  const PodId b = state.add_pod(pod("b", 1000, GpuRequest::portion(300)));
  const PodId c = state.add_pod(pod("c", 1000, GpuRequest::portion(700)));
  const PodId whole = state.add_pod(pod("whole", 1000, GpuRequest::whole(1)));
  state.bind(a, Binding{0, {0}, 300});
  state.bind(b, Binding{1, {1}, 300});
  state.bind(whole, Binding{0, {1}, kMilliPerGpu});  // a full device is not counted
  EXPECT_EQ(state.gpu_supply().partial_count(model, 700), 2);
  EXPECT_TRUE(check_invariants(state).empty());

  state.bind(c, Binding{0, {0}, 700});  // device 0 of node 0 is now full
  EXPECT_EQ(state.gpu_supply().partial_count(model, 700), 1);
  EXPECT_EQ(state.gpu_supply().partial_count(model, 0), 0);
  EXPECT_TRUE(check_invariants(state).empty());

  state.unbind(a);  // back to 300 free
  EXPECT_EQ(state.gpu_supply().partial_count(model, 300), 1);
  EXPECT_EQ(state.gpu_supply().partial_count(model, 700), 1);
  state.unbind(b);  // idle again: not counted
  state.unbind(whole);
  EXPECT_EQ(state.gpu_supply().partial_count(model, 700), 0);
  EXPECT_EQ(state.gpu_supply().partial_count(model, 300), 1);
  EXPECT_TRUE(check_invariants(state).empty());
}

TEST(SumOfSquares, ChangeOfAPlacementByExactFreeShare) {
  GpuSupply supply;
  const GpuModelId model = 1;
  supply.move_partial(model, 0, 700);  // three devices with 300 free, one with 500
  supply.move_partial(model, 0, 700);
  supply.move_partial(model, 0, 700);
  supply.move_partial(model, 0, 500);
  ASSERT_EQ(supply.partial_count(model, 300), 3);
  ASSERT_EQ(supply.partial_count(0, 300), 0);  // another model's devices are apart

  // An exact fit closes a gap: 2^2 - 3^2.
  EXPECT_EQ(sum_of_squares_change(supply, model, 300, 300), 1 - 2 * 3);
  // 500 free less 200: (1 - 1)^2 - 1^2 for the 500s, (3 + 1)^2 - 3^2 for the 300s.
  EXPECT_EQ(sum_of_squares_change(supply, model, 500, 200), -1 + 7);
  // An idle device opens a gap of 700: 1^2 - 0^2.
  EXPECT_EQ(sum_of_squares_change(supply, model, kMilliPerGpu, 300), 1);
  EXPECT_EQ(sum_of_squares_change(supply, model, kMilliPerGpu, 700), 2 * 3 + 1);
}

TEST(SumOfSquares, ChangeByGapClass) {
  GpuSupply supply;
  const GpuModelId model = 0;
  const std::array<int, 3> classes = {200, 300, 500};  // gaps of 200-299, 300-499, 500-999
  supply.move_partial(model, 0, 650);                  // 350 free: class 300
  supply.move_partial(model, 0, 700);                  // 300 free: class 300
  supply.move_partial(model, 0, 400);                  // 600 free: class 500

  // 350 less 300 leaves 50, below every class: the device leaves the count as a full one does.
  EXPECT_EQ(sum_of_squares_change(supply, model, 350, 300, GapClasses(classes)), 1 - 2 * 2);
  // 600 less 250 leaves 350: from class 500 (1 device) to class 300 (2 devices).
  EXPECT_EQ(sum_of_squares_change(supply, model, 600, 250, GapClasses(classes)), (1 - 2 * 1) + (2 * 2 + 1));
  // 600 less 50 leaves 550: the same class, no change.
  EXPECT_EQ(sum_of_squares_change(supply, model, 600, 50, GapClasses(classes)), 0);
  // An idle device less 700 opens a gap of 300.
  EXPECT_EQ(sum_of_squares_change(supply, model, kMilliPerGpu, 700, GapClasses(classes)), 2 * 2 + 1);
}

// The table answers as the definition reads: the greatest start at or below the share, to the
// next start (or 1000), for random sets of starts and every share.
TEST(SumOfSquares, GapClassesFollowTheirStarts) {
  std::mt19937 random(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<int> starts;
    const int count = std::uniform_int_distribution<int>(0, 12)(random);
    for (int i = 0; i < count; ++i) starts.push_back(std::uniform_int_distribution<int>(1, kMilliPerGpu - 1)(random));
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    const GapClasses classes(starts);
    for (int free = 0; free <= kMilliPerGpu; ++free) {
      int low = -1, high = -1;
      for (size_t i = 0; i < starts.size() && free > 0 && free < kMilliPerGpu; ++i) {
        if (starts[i] > free) break;
        low = starts[i];
        high = i + 1 < starts.size() ? starts[i + 1] : kMilliPerGpu;
      }
      ASSERT_EQ(classes.of(free).low, low) << free;
      ASSERT_EQ(classes.of(free).high, high) << free;
    }
  }
  EXPECT_EQ(GapClasses().of(437).low, 437);  // without starts, each exact share
  EXPECT_EQ(GapClasses().of(437).high, 438);
  EXPECT_EQ(GapClasses().of(kMilliPerGpu).low, -1);
}

// Within a search the policy reuses a fraction's changes per model and free share; they must be
// what a policy outside any search works out, search after search as the cluster fills (the
// counts change between them), for portions and for pods asking GPU memory (never reused).
TEST(SumOfSquares, TheTermWithinASearchIsTheTermWorkedOutAfresh) {
  ClusterState state(uniform_cluster(24, 4));
  std::vector<PodSpec> population = portions_200_300_500();
  population.push_back(pod("s470", 1000, GpuRequest::portion(470)));
  population.push_back(pod("m", 1000, GpuRequest::memory(8 * kGiB, 8 * kGiB)));
  TesseraPolicy searching(WorkloadMix::from_pods(population));
  TesseraPolicy fresh(WorkloadMix::from_pods(population));
  std::mt19937 random(11);
  int compared = 0;
  for (int step = 0; step < 150; ++step) {
    PodSpec next = population[std::uniform_int_distribution<size_t>(0, population.size() - 1)(random)];
    next.name += "-" + std::to_string(step);
    std::vector<std::pair<NodeIndex, int>> fits;
    searching.search_begins(state.gpu_supply());
    for (NodeIndex node = 0; node < state.node_count(); ++node) {
      for (int device : fraction_candidates(state.node_spec(node), state.node_state(node), next)) {
        fits.emplace_back(node, device);
        ASSERT_EQ(searching.cluster_term(state.view(node), next, state.gpu_supply(), PlacementChoice{.device = device}),
                  fresh.cluster_term(state.view(node), next, state.gpu_supply(), PlacementChoice{.device = device}))
            << "step " << step << " node " << node << " device " << device;
        ++compared;
      }
    }
    searching.search_ends();
    if (fits.empty()) continue;
    const auto [node, device] = fits[std::uniform_int_distribution<size_t>(0, fits.size() - 1)(random)];
    const PodId id = state.add_pod(next);
    state.bind(id, Binding::on_device(node, device, next.gpu, state.node_spec(node).gpus[device].memory_bytes));
  }
  EXPECT_GT(compared, 1000);
}

// Three one-GPU nodes: 300 free on node 0, 500 on node 1, node 2 idle; the mix's portions are
// 200, 300 and 500. A pod of 300 closes node 0's gap exactly; on node 1 it leaves a 200 gap no
// other device has, and on node 2 it opens a second 700 gap of the 500 class.
TEST(SumOfSquares, TesseraPrefersTheExactFit) {
  ClusterState state(uniform_cluster(3, 1));
  const std::vector<PodSpec> population = portions_200_300_500();
  state.bind(state.add_pod(pod("p0", 1000, GpuRequest::portion(700))), Binding{0, {0}, 700});
  state.bind(state.add_pod(pod("p1", 1000, GpuRequest::portion(500))), Binding{1, {0}, 500});
  TesseraPolicy policy(WorkloadMix::from_pods(population));
  ASSERT_TRUE(policy.has_cluster_term());
  const PodSpec next = pod("next", 1000, GpuRequest::portion(300));
  const double exact = policy.cluster_term(state.view(0), next, state.gpu_supply(), PlacementChoice{.device = 0});
  const double leaves_gap = policy.cluster_term(state.view(1), next, state.gpu_supply(), PlacementChoice{.device = 0});
  const double opens = policy.cluster_term(state.view(2), next, state.gpu_supply(), PlacementChoice{.device = 0});
  EXPECT_DOUBLE_EQ(exact, TesseraPolicy::kSquaresWeight * 1);   // closes the only 300-class gap
  EXPECT_DOUBLE_EQ(leaves_gap, 0);                              // one 500-class gap for one 200-class gap
  EXPECT_DOUBLE_EQ(opens, -TesseraPolicy::kSquaresWeight * 3);  // a second 500-class gap
  auto binding = Placer(policy).find(state, next);
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 0);
  // Whole-GPU pods leave the counts alone: no term for them.
  EXPECT_DOUBLE_EQ(policy.cluster_term(state.view(2), pod("whole", 1000, GpuRequest::whole(1)), state.gpu_supply(),
                                       PlacementChoice{.device = -1}),
                   0);
}

// Where the mix, filling the GPUs, would ask for more CPU than the cluster has, CPU runs out
// first and the gaps are not what limits the packing: the term is off.
TEST(SumOfSquares, OffWhereCpuRunsOutBeforeTheGpus) {
  ClusterState state(uniform_cluster(3, 1));
  std::vector<PodSpec> population = portions_200_300_500();
  for (int i = 0; i < 6; ++i) population.push_back(pod("cpu-only", 60000, GpuRequest::none()));
  state.bind(state.add_pod(pod("p0", 1000, GpuRequest::portion(700))), Binding{0, {0}, 700});
  state.bind(state.add_pod(pod("p1", 1000, GpuRequest::portion(500))), Binding{1, {0}, 500});
  TesseraPolicy policy(WorkloadMix::from_pods(population));
  const PodSpec next = pod("next", 1000, GpuRequest::portion(300));
  for (NodeIndex node = 0; node < 3; ++node) {
    EXPECT_DOUBLE_EQ(policy.cluster_term(state.view(node), next, state.gpu_supply(), PlacementChoice{.device = 0}), 0);
  }
}

// Asks the tessera policy and records, per node, the device the engine asked the term about.
class RecordingPolicy final : public PlacementPolicy {
 public:
  explicit RecordingPolicy(PlacementPolicy& inner) : inner_(inner) {}
  std::string_view name() const override { return "recording"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override { return inner_.score(node, pod); }
  double cluster_term(const NodeView& node, const PodSpec& pod, const GpuSupply& supply,
                      const PlacementChoice& choice) override {
    asked[node.index] = choice.device;
    return inner_.cluster_term(node, pod, supply, choice);
  }
  bool has_cluster_term() const override { return true; }
  std::map<NodeIndex, int> asked;

 private:
  PlacementPolicy& inner_;
};

// On nodes whose devices differ in free share, the engine (which caches the score's verdict per
// node state) asks the term about the device the verdict stands for — the one the pod is bound
// to — and the term counts the gap of that device.
TEST(SumOfSquares, TheTermReadsTheDeviceTheScoreChose) {
  ClusterState state(uniform_cluster(2, 4));
  const std::vector<PodSpec> population = portions_200_300_500();
  state.bind(state.add_pod(pod("p0", 1000, GpuRequest::portion(700))), Binding{0, {1}, 700});
  state.bind(state.add_pod(pod("p1", 1000, GpuRequest::portion(500))), Binding{0, {2}, 500});
  state.bind(state.add_pod(pod("p2", 1000, GpuRequest::portion(500))), Binding{1, {3}, 500});
  const PodSpec next = pod("next", 1000, GpuRequest::portion(300));
  const std::array<int, 3> classes = {200, 300, 500};

  TesseraPolicy tessera(WorkloadMix::from_pods(population));
  const PlacementChoice choice = tessera.score(state.view(0), next);
  ASSERT_GE(choice.device, 0);
  const double expected = -TesseraPolicy::kSquaresWeight *
                          static_cast<double>(sum_of_squares_change(
                              state.gpu_supply(), state.node_spec(0).gpus[0].model,
                              state.node_state(0).gpu_free_milli(choice.device), 300, GapClasses(classes)));
  EXPECT_DOUBLE_EQ(tessera.cluster_term(state.view(0), next, state.gpu_supply(), choice), expected);

  RecordingPolicy recording(tessera);
  Placer placer(recording);
  for (int round = 0; round < 2; ++round) {  // the second time from the cached verdicts
    recording.asked.clear();
    const std::optional<Binding> binding = placer.find(state, next);
    ASSERT_TRUE(binding.has_value());
    ASSERT_TRUE(recording.asked.count(binding->node));
    const int asked = recording.asked[binding->node];
    ASSERT_GE(asked, 0);
    EXPECT_EQ(state.node_state(binding->node).gpu_used_milli[static_cast<size_t>(asked)],
              state.node_state(binding->node).gpu_used_milli[static_cast<size_t>(binding->devices.front())]);
    for (const auto& [node, device] : recording.asked) {
      EXPECT_EQ(
          state.node_state(node).gpu_used_milli[static_cast<size_t>(device)],
          state.node_state(node).gpu_used_milli[static_cast<size_t>(tessera.score(state.view(node), next).device)]);
    }
  }
}

}  // namespace
}  // namespace tessera
