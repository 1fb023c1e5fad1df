#include "engine/statement.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/invariants.h"
#include "engine/placer.h"
#include "policy/best_fit_policy.h"
#include "policy/first_fit_policy.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

TEST(Statement, RollbackRestoresUsageAndGroups) {
  ClusterState cluster(uniform_cluster(2, 4));
  const size_t groups_before = cluster.groups().group_count();
  PodId a = cluster.add_pod(pod("a", 1000, GpuRequest::whole(2)));
  PodId b = cluster.add_pod(pod("b", 1000, GpuRequest::portion(300)));
  Statement statement(cluster);
  statement.allocate(a, Binding{0, {0, 1}, 1000});
  Statement::Checkpoint checkpoint = statement.checkpoint();
  statement.allocate(b, Binding{0, {2}, 300});
  EXPECT_EQ(cluster.node_state(0).gpu_used_total(), 2300);
  statement.rollback(checkpoint);
  EXPECT_EQ(cluster.node_state(0).gpu_used_total(), 2000);
  EXPECT_FALSE(cluster.binding(b).has_value());
  statement.rollback(0);
  EXPECT_EQ(cluster.node_state(0), NodeState::empty(cluster.node_spec(0)));
  EXPECT_EQ(cluster.groups().group_count(), groups_before);
  EXPECT_EQ(cluster.totals().gpu_allocated_milli, 0);
}

TEST(Statement, EvictThenRollbackRebindsTheSameDevices) {
  ClusterState cluster(uniform_cluster(1, 4));
  PodId a = cluster.add_pod(pod("a", 1000, GpuRequest::whole(1)));
  cluster.bind(a, Binding{0, {3}, 1000});
  Statement statement(cluster);
  statement.evict(a);
  EXPECT_FALSE(cluster.binding(a).has_value());
  EXPECT_EQ(cluster.node_state(0).gpu_used_total(), 0);
  statement.rollback(0);
  ASSERT_TRUE(cluster.binding(a).has_value());
  EXPECT_EQ(cluster.binding(a)->devices, std::vector<int16_t>{3});
}

TEST(Statement, DestructionWithoutCommitRollsBack) {
  ClusterState cluster(uniform_cluster(1, 2));
  PodId a = cluster.add_pod(pod("a", 1000, GpuRequest::whole(1)));
  {
    Statement statement(cluster);
    statement.allocate(a, Binding{0, {0}, 1000});
  }
  EXPECT_FALSE(cluster.binding(a).has_value());
  {
    Statement statement(cluster);
    statement.allocate(a, Binding{0, {0}, 1000});
    auto committed = statement.commit();
    ASSERT_EQ(committed.size(), 1U);
    EXPECT_EQ(committed[0].kind, Operation::Kind::kAllocate);
  }
  EXPECT_TRUE(cluster.binding(a).has_value());
}

// Records what a statement tells its listener, as "+pod@node" (bound) and "-pod@node" (unbound).
class RecordingListener : public StatementListener {
 public:
  void bound(PodId pod, const Binding& binding) override { told.push_back(fmt::format("+{}@{}", pod, binding.node)); }
  void unbound(PodId pod, const Binding& binding) override { told.push_back(fmt::format("-{}@{}", pod, binding.node)); }
  std::vector<std::string> told;
};

TEST(Statement, TellsItsListenerOfEveryChangeAndEveryUndoing) {
  ClusterState cluster(uniform_cluster(2, 4));
  PodId a = cluster.add_pod(pod("a", 1000, GpuRequest::whole(1)));
  PodId b = cluster.add_pod(pod("b", 1000, GpuRequest::whole(1)));
  PodId c = cluster.add_pod(pod("c", 1000, GpuRequest::whole(1)));
  cluster.bind(a, Binding{0, {0}, 1000});
  RecordingListener listener;
  {
    Statement statement(cluster, &listener);
    statement.evict(a);
    statement.allocate(b, Binding{1, {0}, 1000});
    const Statement::Checkpoint checkpoint = statement.checkpoint();
    statement.allocate(c, Binding{1, {1}, 1000});
    statement.rollback(checkpoint);
    EXPECT_EQ(listener.told, (std::vector<std::string>{"-0@0", "+1@1", "+2@1", "-2@1"}));
    listener.told.clear();
  }  // destroyed uncommitted: undone newest first, and told
  EXPECT_EQ(listener.told, (std::vector<std::string>{"-1@1", "+0@0"}));
  listener.told.clear();
  {
    Statement statement(cluster, &listener);
    statement.allocate(b, Binding{1, {0}, 1000});
    statement.commit();
  }  // committed: nothing more to tell
  EXPECT_EQ(listener.told, (std::vector<std::string>{"+1@1"}));
}

TEST(ClusterState, FitsChecksCpuMemoryAndEachDevicesShare) {
  ClusterState cluster(uniform_cluster(1, 2));
  PodId whole = cluster.add_pod(pod("whole", 1000, GpuRequest::whole(1)));
  PodId portion = cluster.add_pod(pod("portion", 1000, GpuRequest::portion(300)));
  cluster.bind(whole, Binding{0, {0}, 1000});
  EXPECT_FALSE(cluster.fits(portion, Binding{0, {0}, 300}));  // the device is taken
  EXPECT_TRUE(cluster.fits(portion, Binding{0, {1}, 300}));
  EXPECT_FALSE(cluster.fits(portion, Binding{0, {2}, 300}));  // no such device
  PodId hungry = cluster.add_pod(pod("hungry", cluster.node_spec(0).allocatable.cpu_milli + 1, GpuRequest::none()));
  EXPECT_FALSE(cluster.fits(hungry, Binding{0, {}, 0}));
}

TEST(Gang, AllOrNothing) {
  // Two nodes of 4 GPUs: a gang of three 3-GPU pods cannot fit (only two such pods fit).
  ClusterState cluster(uniform_cluster(2, 4));
  std::vector<PodId> gang;
  for (int i = 0; i < 3; ++i) gang.push_back(cluster.add_pod(pod(fmt::format("g{}", i), 1000, GpuRequest::whole(3))));
  FirstFitPolicy policy;
  Placer placer(policy);
  Statement statement(cluster);
  FailureSummary why;
  EXPECT_FALSE(placer.place_gang(statement, gang, &why));
  EXPECT_EQ(why.failed_pod_index, 2);
  EXPECT_EQ(why.nodes_by_predicate[static_cast<size_t>(Predicate::kWholeGpus)], 2);
  EXPECT_EQ(why.describe(), "2 nodes: not enough idle GPUs");
  EXPECT_EQ(cluster.totals().gpu_allocated_milli, 0);
  EXPECT_TRUE(check_gang(cluster, gang, 3).empty());

  std::vector<PodId> fits(gang.begin(), gang.begin() + 2);
  EXPECT_TRUE(placer.place_gang(statement, fits));
  statement.commit();
  EXPECT_EQ(cluster.totals().gpu_allocated_milli, 6000);
  EXPECT_TRUE(check_invariants(cluster).empty());
}

TEST(Placer, FindAmongTakesOnlyTheListedNodesAndCountsWhyTheOthersFail) {
  // Four nodes of 4 GPUs: node 0 full, node 1 with 1 free, nodes 2 and 3 with 2 free.
  ClusterState cluster(uniform_cluster(4, 4));
  const int used[] = {4, 3, 2, 2};
  for (NodeIndex node = 0; node < 4; ++node) {
    const PodId filler = cluster.add_pod(pod(fmt::format("f{}", node), 1000, GpuRequest::whole(used[node])));
    std::vector<int16_t> devices;
    for (int16_t device = 0; device < used[node]; ++device) devices.push_back(device);
    cluster.bind(filler, Binding{node, devices, 1000});
  }
  const PodSpec two = pod("two", 1000, GpuRequest::whole(2));
  FirstFitPolicy policy;
  Placer placer(policy);
  const NodeIndex short_of_gpus[] = {0, 1};
  EXPECT_FALSE(placer.find_among(cluster, two, short_of_gpus).has_value());
  FailureSummary why;
  EXPECT_FALSE(placer.find_among(cluster, two, short_of_gpus, &why).has_value());
  EXPECT_EQ(why.describe(), "2 nodes: not enough idle GPUs");
  const NodeIndex later_first[] = {1, 3, 2};
  const auto found = placer.find_among(cluster, two, later_first);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->node, 3) << "equal nodes: the earliest listed";
  EXPECT_EQ(found->devices, (std::vector<int16_t>{2, 3}));
}

TEST(Placer, APodThatFitNowhereIsFoundRoomWhereRoomOpens) {
  ClusterState cluster(uniform_cluster(3, 2));
  std::vector<PodId> fillers;
  for (NodeIndex node = 0; node < 3; ++node) {
    fillers.push_back(cluster.add_pod(pod(fmt::format("f{}", node), 1000, GpuRequest::whole(2))));
    cluster.bind(fillers.back(), Binding{node, {0, 1}, 1000});
  }
  const PodSpec one = pod("one", 1000, GpuRequest::whole(1));
  FirstFitPolicy policy;
  Placer placer(policy);
  EXPECT_FALSE(placer.find(cluster, one).has_value());
  // Node 2 freed, then reserved for a holder this pod's pass is not: still nowhere.
  cluster.unbind(fillers[2]);
  cluster.reserve(2, NodeReservation{7});
  EXPECT_FALSE(placer.find(cluster, one).has_value());
  EXPECT_FALSE(placer.find(cluster, one).has_value());
  // The holder's pass may use it.
  const auto for_holder = placer.find(cluster, one, nullptr, PlacementPass{7});
  ASSERT_TRUE(for_holder.has_value());
  EXPECT_EQ(for_holder->node, 2);
  // A pod leaving node 1 opens room there, and the reservation's release opens node 2.
  cluster.unbind(fillers[1]);
  const auto after_leaving = placer.find(cluster, one);
  ASSERT_TRUE(after_leaving.has_value());
  EXPECT_EQ(after_leaving->node, 1);
  cluster.bind(fillers[1], Binding{1, {0, 1}, 1000});
  EXPECT_FALSE(placer.find(cluster, one).has_value());
  cluster.reserve(2, NodeReservation{});
  const auto after_release = placer.find(cluster, one);
  ASSERT_TRUE(after_release.has_value());
  EXPECT_EQ(after_release->node, 2);
  // Binding only takes room: with node 2 full again, nothing fits, after many nodes changed too.
  cluster.bind(fillers[2], Binding{2, {0, 1}, 1000});
  for (int round = 0; round < 40; ++round) {
    cluster.unbind(fillers[0]);
    cluster.bind(fillers[0], Binding{0, {0, 1}, 1000});
  }
  EXPECT_FALSE(placer.find(cluster, one).has_value());
  cluster.unbind(fillers[0]);
  EXPECT_TRUE(placer.find(cluster, one).has_value());
}

TEST(Invariants, DetectOvercommitAndSharing) {
  ClusterState cluster(uniform_cluster(1, 2));
  PodId whole = cluster.add_pod(pod("whole", 1000, GpuRequest::whole(1)));
  PodId share = cluster.add_pod(pod("share", 1000, GpuRequest::portion(10)));
  cluster.bind(whole, Binding{0, {0}, 1000});
  EXPECT_TRUE(check_invariants(cluster).empty());
  // Bypass the placer to force a whole-GPU device to be shared: the checker must see it.
  cluster.bind(share, Binding{0, {0}, 10});
  auto violations = check_invariants(cluster);
  ASSERT_FALSE(violations.empty());
  std::string all;
  for (const auto& v : violations) all += v + "\n";
  EXPECT_NE(all.find("holds 1010 milli"), std::string::npos) << all;
  EXPECT_NE(all.find("shared by a whole-GPU pod"), std::string::npos) << all;
}

TEST(Invariants, DetectPartialGang) {
  ClusterState cluster(uniform_cluster(1, 4));
  std::vector<PodId> gang = {cluster.add_pod(pod("a", 1, GpuRequest::whole(1))),
                             cluster.add_pod(pod("b", 1, GpuRequest::whole(1)))};
  cluster.bind(gang[0], Binding{0, {0}, 1000});
  EXPECT_FALSE(check_gang(cluster, gang, 2).empty());
  EXPECT_TRUE(check_gang(cluster, gang, 1).empty());
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(NodeGroups, LabelsCountOnlyOnceAPodSelectsOnThem) {
  auto spec = testing::uniform_cluster(4, 2);
  for (int i = 0; i < 4; ++i) {
    spec->nodes[static_cast<size_t>(i)].labels = {{"kubernetes.io/hostname", fmt::format("node-{}", i)},
                                                  {"rack", i < 2 ? "r1" : "r2"}};
  }
  ClusterState cluster(spec);
  EXPECT_EQ(cluster.groups().group_count(), 1U);  // hostnames and racks do not split idle nodes

  FirstFitPolicy policy;
  Placer placer(policy);
  PodSpec in_r2 = testing::pod("in-r2", 1000, GpuRequest::whole(1));
  in_r2.node_selector = {{"rack", "r2"}};
  // Not added to the cluster: the placer checks node by node and still honours the selector.
  EXPECT_FALSE(cluster.distinguishes_selector_of(in_r2));
  auto binding = placer.find(cluster, in_r2);
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 2);

  cluster.add_pod(in_r2);  // now racks tell nodes apart
  EXPECT_TRUE(cluster.distinguishes_selector_of(in_r2));
  EXPECT_EQ(cluster.groups().group_count(), 2U);
  binding = placer.find(cluster, in_r2);
  ASSERT_TRUE(binding.has_value());
  EXPECT_EQ(binding->node, 2);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Two nodes of two 80 GiB devices; node 0's pool lets limits reach 1.5 times a device, node 1's
// lets them reach it only.
std::shared_ptr<ClusterSpec> two_pool_cluster() {
  auto spec = uniform_cluster(2, 2);
  spec->nodes[0].gpu_memory_overcommit_milli = 1500;
  return spec;
}

TEST(GpuMemoryLimits, PlacementHoldsLimitsWithinEachNodesOvercommit) {
  ClusterState cluster(two_pool_cluster());
  BestFitPolicy policy;
  Placer placer(policy);
  // 20 GiB requests (250 milli) with 40 GiB limits (500): limits of 6 fit under node 0's cap of 1500
  // per device (3 per device), 4 under node 1's (2 per device); requests alone would let 16 in.
  int placed = 0;
  for (int i = 0; i < 12; ++i) {
    PodId id = cluster.add_pod(pod(fmt::format("infer-{}", i), 100, GpuRequest::memory(20 * kGiB, 40 * kGiB)));
    FailureSummary why;
    std::optional<Binding> binding = placer.find(cluster, cluster.pod(id), &why);
    if (!binding) {
      EXPECT_EQ(why.describe(),
                "GPU memory limits: 2 nodes have room for the 20Gi request but not for the 40Gi limit at overcommit "
                "1 to 1.5");
      continue;
    }
    EXPECT_EQ(binding->burst_milli, 250);
    EXPECT_TRUE(cluster.fits(id, *binding));
    cluster.bind(id, std::move(*binding));
    ++placed;
  }
  EXPECT_EQ(placed, 10);
  EXPECT_EQ(cluster.node_state(0).gpu_used_milli, (std::vector<int16_t>{750, 750}));
  EXPECT_EQ(cluster.node_state(0).gpu_burst_milli, (std::vector<int16_t>{750, 750}));
  EXPECT_EQ(cluster.node_state(1).gpu_used_milli, (std::vector<int16_t>{500, 500}));
  EXPECT_TRUE(check_invariants(cluster).empty());
  // A portion's limit is its portion: room for it among the requests, none among the limits.
  PodId portion = cluster.add_pod(pod("portion", 100, GpuRequest::portion(250)));
  FailureSummary why;
  EXPECT_FALSE(placer.find(cluster, cluster.pod(portion), &why).has_value());
  EXPECT_EQ(why.describe(), "2 nodes: room for the GPU memory request but not for its limit at the node's overcommit");
}

TEST(GpuMemoryLimits, PodsThatDifferOnlyInTheirLimitGetTheirOwnVerdicts) {
  ClusterState cluster(uniform_cluster(1, 1));
  BestFitPolicy policy;
  Placer placer(policy);
  PodId first = cluster.add_pod(pod("first", 100, GpuRequest::memory(20 * kGiB, 60 * kGiB)));
  cluster.bind(first, Binding::on_device(0, 0, cluster.pod(first).gpu, 80 * kGiB));
  // Limits at 750 of the device's cap of 1000: another 20 GiB request fits with a 20 GiB limit
  // (250), not with a 60 GiB one (750), though both ask for the same 250 milli.
  PodId flat = cluster.add_pod(pod("flat", 100, GpuRequest::memory(20 * kGiB, 20 * kGiB)));
  PodId bursting = cluster.add_pod(pod("bursting", 100, GpuRequest::memory(20 * kGiB, 60 * kGiB)));
  EXPECT_TRUE(placer.find(cluster, cluster.pod(flat)).has_value());
  FailureSummary why;
  EXPECT_FALSE(placer.find(cluster, cluster.pod(bursting), &why).has_value());
  EXPECT_EQ(why.nodes_by_predicate[static_cast<size_t>(Predicate::kGpuMemoryLimit)], 1);
  // And the other way round, with a placer that met the bursting pod first.
  Placer fresh(policy);
  EXPECT_FALSE(fresh.find(cluster, cluster.pod(bursting)).has_value());
  EXPECT_TRUE(fresh.find(cluster, cluster.pod(flat)).has_value());
}

TEST(GpuMemoryLimits, EvictingABurstingPodFreesItsLimitRoom) {
  ClusterState cluster(uniform_cluster(1, 1));
  PodId first = cluster.add_pod(pod("first", 100, GpuRequest::memory(20 * kGiB, 60 * kGiB)));
  PodId second = cluster.add_pod(pod("second", 100, GpuRequest::memory(20 * kGiB, 60 * kGiB)));
  cluster.bind(first, Binding::on_device(0, 0, cluster.pod(first).gpu, 80 * kGiB));
  // 250 milli requested of 1000, but limits at 750 of a cap of 1000: no room for another 750.
  EXPECT_EQ(check_node(cluster.node_spec(0), cluster.node_state(0), cluster.pod(second)), Predicate::kGpuMemoryLimit);
  EXPECT_FALSE(cluster.fits(second, Binding::on_device(0, 0, cluster.pod(second).gpu, 80 * kGiB)));
  cluster.unbind(first);
  EXPECT_TRUE(cluster.node_state(0).gpu_burst_milli.empty());
  EXPECT_EQ(check_node(cluster.node_spec(0), cluster.node_state(0), cluster.pod(second)), Predicate::kFits);
}

TEST(GpuMemoryLimits, NodesWithDifferentBurstsGroupApart) {
  ClusterState cluster(uniform_cluster(2, 1));
  PodId bursting = cluster.add_pod(pod("bursting", 100, GpuRequest::memory(20 * kGiB, 40 * kGiB)));
  PodId flat = cluster.add_pod(pod("flat", 100, GpuRequest::memory(20 * kGiB, 20 * kGiB)));
  cluster.bind(bursting, Binding::on_device(0, 0, cluster.pod(bursting).gpu, 80 * kGiB));
  cluster.bind(flat, Binding::on_device(1, 0, cluster.pod(flat).gpu, 80 * kGiB));
  // Same portion used on both, but node 0's device holds a burst: not interchangeable.
  EXPECT_EQ(cluster.node_state(0).gpu_used_milli, cluster.node_state(1).gpu_used_milli);
  EXPECT_NE(cluster.groups().group_of(0).uid, cluster.groups().group_of(1).uid);
  EXPECT_NE(cluster.device_code(0, 0), cluster.device_code(1, 0));
}

TEST(GpuMemoryLimits, InvariantsCatchLimitsOverTheCap) {
  ClusterState cluster(uniform_cluster(1, 1));
  PodId a = cluster.add_pod(pod("a", 100, GpuRequest::memory(20 * kGiB, 60 * kGiB)));
  PodId b = cluster.add_pod(pod("b", 100, GpuRequest::memory(20 * kGiB, 60 * kGiB)));
  cluster.bind(a, Binding::on_device(0, 0, cluster.pod(a).gpu, 80 * kGiB));
  cluster.bind(b, Binding::on_device(0, 0, cluster.pod(b).gpu, 80 * kGiB));  // a snapshot may show it
  const std::vector<std::string> violations = check_invariants(cluster);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0], "node node-0 GPU 0 holds limits of 1500 milli, over its overcommit cap of 1000");
}

}  // namespace
}  // namespace tessera
