#include "engine/statement.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/invariants.h"
#include "engine/placer.h"
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
  void unbound(PodId pod, const Binding& binding) override {
    told.push_back(fmt::format("-{}@{}", pod, binding.node));
  }
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
