// Topology-aware placement (docs/topology.md), on worlds small enough to check by hand: which
// domain a gang goes to under each rule, required and preferred levels, subgroups, the reason a
// required gang waits, and scenario validation.
#include <gtest/gtest.h>

#include <map>

#include "engine/invariants.h"
#include "engine/statement.h"
#include "engine/topology_placement.h"
#include "policy/domain_choice.h"
#include "scheduler/domain_plans.h"
#include "scheduler_world.h"
#include "sim/cycle_replay.h"
#include "sim/scenario_loader.h"
#include "sim/scenario_yaml.h"
#include "sim/synthetic_cluster.h"
#include "sim/topology_cost.h"

namespace tessera {
namespace {

using testing::gpu_queue;
using testing::SchedulerWorld;
using testing::uniform_cluster;

constexpr int64_t kGpu = 1000;

TEST(DomainChoice, FragmentationKeepsTheRoomBiggerGangsNeedWhereThePeersRulesSpendIt) {
  // Rack 0 has 48 of 64 GPUs free, rack 1 32 of 64; a 16-GPU gang comes, and the gangs seen are
  // 32 GPUs. In rack 0 it leaves 32 free, exactly one 32-GPU gang (fragmentation 16 -> 0); in
  // rack 1 it leaves 16 no 32-GPU gang can use (0 -> 16).
  const std::vector<DomainRoom> rooms = {{48 * kGpu, 64 * kGpu}, {32 * kGpu, 64 * kGpu}};
  GangSizeMix mix;
  mix.add(32 * kGpu);
  EXPECT_EQ(order_domains(rooms, 16 * kGpu, DomainRule::kFragmentation, mix), (std::vector<int32_t>{0, 1}));
  // Best fit leaves the least free: rack 1 (16 left). Fullest: rack 1 (half used against a quarter).
  EXPECT_EQ(order_domains(rooms, 16 * kGpu, DomainRule::kBestFit, mix), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(order_domains(rooms, 16 * kGpu, DomainRule::kFullest, mix), (std::vector<int32_t>{1, 0}));
}

TEST(DomainChoice, DomainsWithoutRoomAreNoCandidatesAndTiesGoToTheFullest) {
  // A: 24 of 64 free, B: 64 of 64, C: 8 of 64; an 8-GPU gang among 8- and 64-GPU gangs.
  // Fragmentation: A 12 -> 8 (-4), B 0 -> 28 (+28), C 4 -> 0 (-4); A and C tie, C is left fuller.
  const std::vector<DomainRoom> rooms = {{24 * kGpu, 64 * kGpu}, {64 * kGpu, 64 * kGpu}, {8 * kGpu, 64 * kGpu}};
  GangSizeMix mix;
  mix.add(8 * kGpu);
  mix.add(64 * kGpu);
  EXPECT_EQ(order_domains(rooms, 8 * kGpu, DomainRule::kFragmentation, mix), (std::vector<int32_t>{2, 0, 1}));
  EXPECT_EQ(order_domains(rooms, 16 * kGpu, DomainRule::kFragmentation, mix), (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(order_domains(rooms, 65 * kGpu, DomainRule::kBestFit, mix).empty());
  EXPECT_EQ(parse_domain_rule("best-fit"), DomainRule::kBestFit);
  EXPECT_FALSE(parse_domain_rule("nearest").has_value());
}

// 2 blocks x 2 racks x 2 nodes of 8 GPUs: nodes 0-1 rack r0, 2-3 r1 (block b0), 4-5 r2, 6-7 r3 (b1).
std::shared_ptr<ClusterSpec> racked_cluster() {
  auto cluster = uniform_cluster(8, 8);
  for (size_t node = 0; node < cluster->nodes.size(); ++node) {
    cluster->nodes[node].labels["block"] = fmt::format("b{}", node / 4);
    cluster->nodes[node].labels["rack"] = fmt::format("r{}", node / 2);
    cluster->nodes[node].labels["host"] = fmt::format("h{}", node);
  }
  cluster->topologies.push_back({"net", {"block", "rack"}});
  return cluster;
}

WorkloadSpec gang(const std::string& name, int pods, int gpus, TopologyConstraint constraint = {}) {
  WorkloadSpec spec;
  spec.name = name;
  spec.queue = "q";
  spec.min_member = pods;
  if (!constraint.empty()) spec.topology = std::make_shared<const WorkloadTopology>(WorkloadTopology{constraint, {}});
  for (int i = 0; i < pods; ++i) {
    spec.pods.push_back(testing::pod(fmt::format("{}-p{}", name, i), 1000, GpuRequest::whole(gpus)));
  }
  return spec;
}

class TopologyWorld : public ::testing::Test {
 protected:
  SchedulerWorld world{racked_cluster(), {gpu_queue("q", "", 64)}};

  WorkloadId submit(WorkloadSpec spec) { return world.workloads().add(std::move(spec), 0, world.cluster(), 0); }
  std::vector<NodeIndex> nodes_of(WorkloadId id) {
    std::vector<NodeIndex> nodes;
    for (PodId pod : world.workloads()[id].pods) {
      if (const auto& binding = world.cluster().binding(pod)) nodes.push_back(binding->node);
    }
    return nodes;
  }
  // Fills whole GPUs on one node with a one-pod workload, through a cycle.
  void occupy(NodeIndex node, int gpus) {
    WorkloadSpec spec = gang(fmt::format("fill-{}", node), 1, gpus);
    spec.pods[0].node_selector["host"] = fmt::format("h{}", node);
    const WorkloadId id = submit(std::move(spec));
    world.cycle(0);
    ASSERT_EQ(nodes_of(id), std::vector<NodeIndex>{node});
  }
};

TEST_F(TopologyWorld, ARequiredRackGangGoesWholeIntoOneRackTheFragmentationRuleChooses) {
  occupy(0, 8);  // r0: 8 free, on node 1
  occupy(2, 4);  // r1: 12 free (4 on node 2, 8 on node 3)
  // A 16-GPU gang (two 8-GPU pods) needing one rack: r0 and r1 cannot hold it; r2 and r3 are
  // empty and alike, so the lower index wins.
  const WorkloadId big = submit(gang("big", 2, 8, {"net", "rack", ""}));
  world.cycle(1);
  EXPECT_EQ(nodes_of(big), (std::vector<NodeIndex>{4, 5}));
  // A 4-GPU pod needing a rack. The gangs seen take 4 (twice), 8 and 16 GPUs (shares 1/2, 1/4,
  // 1/4); a domain's fragmentation is sum share * (free mod size). r0: 8 free -> 4, 2 -> 2 (0).
  // r1: 12 -> 8, 4 -> 2 (-2). r3: 16 -> 12, 0 -> 4 (+4). r1 wins, and in it the policy fills
  // the partly used node 2.
  const WorkloadId small = submit(gang("small", 1, 4, {"net", "rack", ""}));
  world.cycle(2);
  EXPECT_EQ(nodes_of(small), std::vector<NodeIndex>{2});
}

TEST_F(TopologyWorld, ARequiredRackGangThatFitsNoRackWaitsAndSaysWhere) {
  occupy(0, 8);
  occupy(2, 4);
  occupy(4, 8);
  occupy(6, 8);
  // 32 GPUs free in all, but at most 12 in one rack.
  const WorkloadId waiting = submit(gang("wide", 2, 8, {"net", "rack", ""}));
  CycleResult result = world.cycle(1);
  EXPECT_TRUE(nodes_of(waiting).empty());
  ASSERT_FALSE(result.pending.empty());
  const PendingWorkload& pending = result.pending.back();
  ASSERT_EQ(pending.workload, waiting);
  EXPECT_EQ(describe(pending.reason, world.tree()).substr(0, 70),
            "needs 16 GPUs within one rack; the most free in a rack is 12 (rack r1)");
  // Without topology it would fit on nodes 1 and 3 (or any two with 8 free).
  CycleOptions off;
  off.topology.enabled = false;
  world.cycle(2, off);
  EXPECT_EQ(nodes_of(waiting).size(), 2u);
}

TEST_F(TopologyWorld, AConstraintOnAnUndeclaredLevelWaitsAndSaysSo) {
  const WorkloadId id = submit(gang("lost", 1, 1, {"net", "zone", ""}));
  CycleResult result = world.cycle(1);
  EXPECT_TRUE(nodes_of(id).empty());
  ASSERT_EQ(result.pending.size(), 1u);
  const std::string text = describe(result.pending[0].reason, world.tree());
  EXPECT_TRUE(
      text.starts_with("its topology constraint cannot be met: workload 'lost': topology.required: zone is "
                       "not a level of topology 'net'"))
      << text;
}

TEST_F(TopologyWorld, APreferredRackWidensToOneBlockBeforeTheCluster) {
  occupy(1, 8);
  // Three 8-GPU pods fit in no rack (two nodes each); block b0 has three empty nodes (0, 2, 3).
  const WorkloadId id = submit(gang("three", 3, 8, {"net", "", "rack"}));
  world.cycle(1);
  const std::vector<NodeIndex> nodes = nodes_of(id);
  ASSERT_EQ(nodes.size(), 3u);
  for (NodeIndex node : nodes) EXPECT_LT(node, 4) << "outside block b0";
}

TEST_F(TopologyWorld, SubgroupsKeepTheirOwnRackInsideTheGangsBlock) {
  occupy(0, 4);  // r0 can no longer take a subgroup of two 8-GPU pods
  WorkloadSpec spec = gang("tp", 4, 8);
  spec.topology = std::make_shared<const WorkloadTopology>(
      WorkloadTopology{{"net", "block", ""}, {{"a", 2, {"net", "rack", ""}}, {"b", 2, {"net", "rack", ""}}}});
  for (int i = 0; i < 4; ++i) spec.pods[static_cast<size_t>(i)].subgroup = i < 2 ? 0 : 1;
  const WorkloadId id = submit(std::move(spec));
  world.cycle(1);
  std::vector<NodeIndex> nodes = nodes_of(id);
  std::sort(nodes.begin(), nodes.end());
  // b0 has one free rack (r1) for two subgroups: the gang goes to b1, one subgroup per rack.
  EXPECT_EQ(nodes, (std::vector<NodeIndex>{4, 5, 6, 7}));
  EXPECT_TRUE(check_topology(world.cluster(), world.workloads()[id].spec, world.workloads()[id].pods).empty());
}

TEST_F(TopologyWorld, ReclaimForARequiredRackGangEvictsInTheRackThatNeedsFewestEvictions) {
  // Queue "other" borrows the whole cluster: r0..r2 hold two 8-GPU jobs each (one per node), r3
  // holds one 16-GPU job of two pods. A 16-GPU required-rack gang of queue "q" (deserved 16)
  // reclaims: one eviction in r3 frees a rack, two anywhere else.
  SchedulerWorld reclaim_world(racked_cluster(), {gpu_queue("q", "", 16), gpu_queue("other", "", 0)});
  auto add = [&](WorkloadSpec spec, const std::string& queue, double at) {
    spec.queue = queue;
    return reclaim_world.workloads().add(std::move(spec), *reclaim_world.tree().find(queue), reclaim_world.cluster(),
                                         at);
  };
  for (int node = 0; node < 6; ++node) {
    WorkloadSpec spec = gang(fmt::format("o{}", node), 1, 8);
    spec.pods[0].node_selector["rack"] = fmt::format("r{}", node / 2);
    add(std::move(spec), "other", 0);
  }
  add(gang("pair", 2, 8, {"net", "rack", ""}), "other", 0);
  reclaim_world.cycle(0);
  ASSERT_DOUBLE_EQ(reclaim_world.gpus_of("other"), 64);
  const WorkloadId id = add(gang("needs-rack", 2, 8, {"net", "rack", ""}), "q", 1);
  CycleResult result = reclaim_world.cycle(100);
  ASSERT_TRUE(reclaim_world.running(id));
  ASSERT_EQ(result.evictions.size(), 1u);
  EXPECT_EQ(reclaim_world.workloads()[result.evictions[0].workload].spec.name, "pair");
  for (PodId pod : reclaim_world.workloads()[id].pods) EXPECT_GE(reclaim_world.cluster().binding(pod)->node, 6);
}

TEST_F(TopologyWorld, RequiredRackGangsReserveTheRacksCheapestToDrainTiesToTheLowerRack) {
  // Work that must end by itself (not preemptible) on every node, in GPUs: no rack has 16 free,
  // and no action may make room. The drain order (fewest such GPUs first, then index) is nodes
  // 1, 4, 2, 3, 5, 6, 7, 0, so the racks cost 0 + 7 (r0), 2 + 3 (r1), 1 + 4 (r2) and 5 + 6 (r3).
  const int stuck[] = {8, 1, 2, 2, 1, 3, 4, 5};
  for (NodeIndex node = 0; node < 8; ++node) {
    WorkloadSpec spec = gang(fmt::format("stuck-{}", node), 1, stuck[node]);
    spec.preemptible = false;
    spec.pods[0].preemptible = false;
    spec.pods[0].node_selector["host"] = fmt::format("h{}", node);
    submit(std::move(spec));
  }
  world.cycle(0);
  const WorkloadId first = submit(gang("first", 2, 8, {"net", "rack", ""}));
  const WorkloadId second = submit(gang("second", 2, 8, {"net", "rack", ""}));
  CycleOptions options;
  options.reservations.max_reserved_node_fraction = 1;
  world.cycle(400, options);
  // r1 and r2 tie at 5: the first gang takes the lower, r1; the second the next cheapest, r2.
  std::map<WorkloadId, std::vector<NodeIndex>> reserved;
  for (const Reservation& reservation : world.reservations()) reserved[reservation.workload] = reservation.nodes;
  EXPECT_EQ(reserved, (std::map<WorkloadId, std::vector<NodeIndex>>{{first, {2, 3}}, {second, {4, 5}}}));
}

TEST(RoomPlans, APlanNeedsAtLeastWhatItsDomainLacksOverTheLargestUnitInEvictions) {
  DomainPlan plan;
  plan.level = 1;
  plan.free_milli = 20 * kGpu;
  EXPECT_EQ(min_evictions(plan, 64 * kGpu, 8 * kGpu), 6);   // 44 lacking, 8 at most per unit
  EXPECT_EQ(min_evictions(plan, 64 * kGpu, 64 * kGpu), 1);  // one unit might hold all of it
  EXPECT_EQ(min_evictions(plan, 20 * kGpu, 8 * kGpu), 0);   // free room holds it
  EXPECT_EQ(min_evictions(plan, 64 * kGpu, 0), 0);          // no bound asked for
  plan.level = -1;
  EXPECT_EQ(min_evictions(plan, 64 * kGpu, 8 * kGpu), 0);  // the whole cluster: no domain's room
}

TEST_F(TopologyWorld, ReclaimPassesOverARackWhoseWorkIsOfAQueueAtItsFairShare) {
  // r0 is held by "steady" (deserved 16, at its share: it may lose nothing); "other" (deserved
  // nothing) borrows the six other nodes. An 8-GPU required-rack gang of "q" cannot be served in
  // r0; one eviction of "other" frees a node of r1, the first rack after it.
  SchedulerWorld reclaim_world(racked_cluster(),
                               {gpu_queue("q", "", 16), gpu_queue("steady", "", 16), gpu_queue("other", "", 0)});
  auto add = [&](WorkloadSpec spec, const std::string& queue, NodeIndex node, double at) {
    spec.queue = queue;
    if (node >= 0) spec.pods[0].node_selector["host"] = fmt::format("h{}", node);
    return reclaim_world.workloads().add(std::move(spec), *reclaim_world.tree().find(queue), reclaim_world.cluster(),
                                         at);
  };
  for (NodeIndex node = 0; node < 8; ++node)
    add(gang(fmt::format("j{}", node), 1, 8), node < 2 ? "steady" : "other", node, 0);
  reclaim_world.cycle(0);
  ASSERT_DOUBLE_EQ(reclaim_world.gpus_of("other"), 48);
  const WorkloadId id = add(gang("needs-rack", 2, 4, {"net", "rack", ""}), "q", -1, 1);
  const CycleResult result = reclaim_world.cycle(100);
  ASSERT_TRUE(reclaim_world.running(id));
  ASSERT_EQ(result.evictions.size(), 1u);
  EXPECT_EQ(reclaim_world.workloads()[result.evictions[0].workload].spec.name, "j2");
  for (PodId pod : reclaim_world.workloads()[id].pods) EXPECT_EQ(reclaim_world.cluster().binding(pod)->node, 2);
  EXPECT_DOUBLE_EQ(reclaim_world.gpus_of("steady"), 16);
}

// Queue "q" (deserved `q_deserved`) beside queue "other" (deserved the rest of the 64 GPUs), whose
// one-pod 8-GPU jobs are pinned to their nodes (they cannot move) on the nodes listed.
class RoomWorld : public ::testing::Test {
 protected:
  void build(double q_deserved, std::initializer_list<int> other_nodes, double other_deserved) {
    world = std::make_unique<SchedulerWorld>(
        racked_cluster(),
        std::vector<QueueSpec>{gpu_queue("q", "", q_deserved), gpu_queue("other", "", other_deserved)});
    for (int node : other_nodes) add(pinned(fmt::format("o{}", node), node), "other", 0);
  }
  static WorkloadSpec pinned(const std::string& name, int node, int gpus = 8) {
    WorkloadSpec spec = gang(name, 1, gpus);
    spec.pods[0].node_selector["host"] = fmt::format("h{}", node);
    return spec;
  }
  WorkloadId add(WorkloadSpec spec, const std::string& queue, double at) {
    spec.queue = queue;
    return world->workloads().add(std::move(spec), *world->tree().find(queue), world->cluster(), at);
  }
  // A 16-GPU gang of "q" (two 8-GPU pods) that needs one rack.
  WorkloadId add_rack_gang(double at) { return add(gang("needs-rack", 2, 8, {"net", "rack", ""}), "q", at); }
  static WorkloadSpec not_preemptible(WorkloadSpec spec) {
    spec.preemptible = false;
    for (PodSpec& pod : spec.pods) pod.preemptible = false;
    return spec;
  }
  static WorkloadSpec in_rack(WorkloadSpec spec, const std::string& rack) {
    for (PodSpec& pod : spec.pods) pod.node_selector["rack"] = rack;
    return spec;
  }
  // The node of the first pod of the running workload of that name (-1: none runs).
  NodeIndex node_of(const std::string& name) {
    for (WorkloadId id = 0; id < static_cast<WorkloadId>(world->workloads().size()); ++id) {
      const Workload& workload = world->workloads()[id];
      if (workload.spec.name == name && world->cluster().binding(workload.pods[0]))
        return world->cluster().binding(workload.pods[0])->node;
    }
    return -1;
  }
  std::vector<NodeIndex> nodes_of_workload(WorkloadId id) {
    std::vector<NodeIndex> nodes;
    for (PodId pod : world->workloads()[id].pods) nodes.push_back(world->cluster().binding(pod)->node);
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }
  std::string reason_of(const CycleResult& result, WorkloadId id) {
    for (const PendingWorkload& pending : result.pending) {
      if (pending.workload == id) return describe(pending.reason, world->tree());
    }
    return "not pending";
  }
  // A gang of four pods in one block, each half (subgroups "a", "b") in one rack.
  static WorkloadSpec tensor_parallel(const std::string& name, int gpus_per_pod) {
    WorkloadSpec spec = gang(name, 4, gpus_per_pod);
    spec.topology = std::make_shared<const WorkloadTopology>(
        WorkloadTopology{{"net", "block", ""}, {{"a", 2, {"net", "rack", ""}}, {"b", 2, {"net", "rack", ""}}}});
    for (int i = 0; i < 4; ++i) spec.pods[static_cast<size_t>(i)].subgroup = i < 2 ? 0 : 1;
    return spec;
  }
  std::unique_ptr<SchedulerWorld> world;
};

TEST_F(RoomWorld, ARequiredRackGangSaysWhichRackReclaimCouldFreeAndThatTheQueueIsAtItsFairShare) {
  // "other" holds its deserved 48 GPUs on nodes 0, 2, 4-7; racks r0 and r1 have 8 GPUs free
  // each. A 16-GPU gang of "q" needing one rack: evicting o0 would free r0 (the most free rack,
  // tried first), but "other" may lose nothing.
  build(16, {0, 2, 4, 5, 6, 7}, 48);
  world->cycle(0);
  const WorkloadId id = add_rack_gang(1);
  const CycleResult result = world->cycle(100);
  EXPECT_FALSE(world->running(id));
  EXPECT_TRUE(result.evictions.empty());
  EXPECT_EQ(reason_of(result, id),
            "needs 16 GPUs within one rack; the most free in a rack is 8 (rack r0); reclaim could free rack r0 by "
            "evicting 1 workload of queue 'other', but 'other' is at its fair share; no lower-priority preemptible "
            "work in its queue frees enough room");
}

TEST_F(RoomWorld, APreemptionThatWouldTakeWorkOfTheSamePrioritySaysSo) {
  // "q" itself holds nodes 0, 2 and 4-7 with jobs of the gang's priority: preemption could free
  // r0 by evicting o0, but it is not of lower priority.
  build(64, {}, 0);
  for (int node : {0, 2, 4, 5, 6, 7}) add(pinned(fmt::format("mine{}", node), node), "q", 0);
  world->cycle(0);
  const WorkloadId id = add_rack_gang(1);
  const CycleResult result = world->cycle(100);
  EXPECT_FALSE(world->running(id));
  EXPECT_TRUE(
      reason_of(result, id)
          .ends_with(
              "; preemption could free rack r0 by evicting 1 workload of queue 'q', but it is not of lower priority"))
      << reason_of(result, id);
}

TEST_F(RoomWorld, NoRackCanBeFreedWhenItsWorkIsNotPreemptible) {
  build(16, {}, 48);
  for (int node : {0, 2, 4, 5, 6, 7}) add(not_preemptible(pinned(fmt::format("o{}", node), node)), "other", 0);
  world->cycle(0);
  const WorkloadId id = add_rack_gang(1);
  const CycleResult result = world->cycle(100);
  EXPECT_TRUE(
      reason_of(result, id)
          .ends_with(
              "(rack r0); no rack could be freed: too little preemptible work past its minimum runtime in any rack"))
      << reason_of(result, id);
}

TEST_F(RoomWorld, PreemptionTriesALessFreeRackWhoseLargerWorkMayFreeItWithFewerEvictions) {
  // All of "q", of lower priority than the gang unless said: r0 has node 1 free and two 4-GPU
  // jobs on node 0; r1 holds a 16-GPU pair; r2 two jobs of the gang's priority, r3 one beside 8
  // free GPUs. r0, the most free, needs 2 evictions; r3 cannot be freed; r1, with nothing free,
  // needs at least 1 (the pair is the largest unit) and takes 1, so it is searched and chosen.
  build(64, {}, 0);
  auto low = [](WorkloadSpec spec) {
    spec.priority = -1;
    for (PodSpec& pod : spec.pods) pod.priority = -1;
    return spec;
  };
  add(low(pinned("small-a", 0, 4)), "q", 0);
  add(low(pinned("small-b", 0, 4)), "q", 0);
  add(low(in_rack(gang("pair", 2, 8, {"net", "rack", ""}), "r1")), "q", 0);
  for (int node : {4, 5, 6}) add(pinned(fmt::format("mine{}", node), node), "q", 0);
  world->cycle(0);
  ASSERT_EQ(node_of("pair"), 2);
  const WorkloadId id = add_rack_gang(1);
  const CycleResult result = world->cycle(100);
  ASSERT_TRUE(world->running(id)) << reason_of(result, id);
  ASSERT_EQ(result.evictions.size(), 1u);
  EXPECT_EQ(world->workloads()[result.evictions[0].workload].spec.name, "pair");
  EXPECT_EQ(nodes_of_workload(id), (std::vector<NodeIndex>{2, 3}));
}

TEST_F(RoomWorld, PreemptionPassesOverTheFreestRackWhenItsWorkIsNotOfLowerPriority) {
  // All of "q": r0 and r3 have 8 GPUs free beside a job of the gang's priority; r1 holds two
  // jobs of lower priority, r2 two of the gang's. Only r1 can be freed.
  build(64, {}, 0);
  for (int node : {0, 4, 5, 6}) add(pinned(fmt::format("mine{}", node), node), "q", 0);
  for (int node : {2, 3}) {
    WorkloadSpec spec = pinned(fmt::format("low{}", node), node);
    spec.priority = -1;
    for (PodSpec& pod : spec.pods) pod.priority = -1;
    add(std::move(spec), "q", 0);
  }
  world->cycle(0);
  const WorkloadId id = add_rack_gang(1);
  const CycleResult result = world->cycle(100);
  ASSERT_TRUE(world->running(id)) << reason_of(result, id);
  std::vector<std::string> evicted;
  for (const Eviction& eviction : result.evictions) evicted.push_back(world->workloads()[eviction.workload].spec.name);
  std::sort(evicted.begin(), evicted.end());
  EXPECT_EQ(evicted, (std::vector<std::string>{"low2", "low3"}));
  EXPECT_EQ(nodes_of_workload(id), (std::vector<NodeIndex>{2, 3}));
}

TEST_F(RoomWorld, ReclaimForSubgroupsFreesARackForEachInsideTheBlockThatNeedsFewestEvictions) {
  // "other" (deserved 32) borrows all 64 GPUs. Block b0: four one-node jobs (4 evictions to
  // free both racks). Block b1: a two-pod job fills r2 (one eviction frees it), r3 holds two
  // one-node jobs (two). The tensor-parallel gang of "q" (deserved 32) needs a rack per subgroup
  // within one block: b1, by 3 evictions.
  build(32, {0, 1, 2, 3, 6, 7}, 32);
  WorkloadSpec pair = gang("pair", 2, 8, {"net", "rack", ""});
  for (PodSpec& pod : pair.pods) pod.node_selector["rack"] = "r2";
  add(std::move(pair), "other", 0);
  world->cycle(0);
  ASSERT_DOUBLE_EQ(world->gpus_of("other"), 64);
  const WorkloadId id = add(tensor_parallel("tp", 8), "q", 1);
  const CycleResult result = world->cycle(100);
  ASSERT_TRUE(world->running(id)) << reason_of(result, id);
  std::vector<std::string> evicted;
  for (const Eviction& eviction : result.evictions) evicted.push_back(world->workloads()[eviction.workload].spec.name);
  std::sort(evicted.begin(), evicted.end());
  EXPECT_EQ(evicted, (std::vector<std::string>{"o6", "o7", "pair"}));
  const Workload& tp = world->workloads()[id];
  EXPECT_TRUE(check_topology(world->cluster(), tp.spec, tp.pods).empty());
  for (PodId pod : tp.pods) EXPECT_GE(world->cluster().binding(pod)->node, 4);
}

TEST_F(RoomWorld, NoWorkIsEvictedForSubgroupsThatNoRackCouldHoldThen) {
  // Nodes 0 and 4 (one per block) run non-preemptible jobs. Evicting the rest would free 24 GPUs
  // in a block, all the gang needs, but in one rack of it only 8, where each subgroup (two 6-GPU
  // pods) needs 12 of its own: the block could not hold the subgroups then, so nothing is evicted.
  build(32, {}, 32);
  for (int node = 0; node < 8; ++node) {
    WorkloadSpec spec = pinned(fmt::format("o{}", node), node);
    add(node % 4 == 0 ? not_preemptible(std::move(spec)) : std::move(spec), "other", 0);
  }
  world->cycle(0);
  const WorkloadId id = add(tensor_parallel("tp", 6), "q", 1);
  const CycleResult result = world->cycle(100);
  EXPECT_FALSE(world->running(id));
  EXPECT_TRUE(result.evictions.empty());
  EXPECT_TRUE(
      reason_of(result, id)
          .ends_with(
              "(block b0); no block could be freed: too little preemptible work past its minimum runtime in any block"))
      << reason_of(result, id);
}

TEST_F(RoomWorld, ConsolidationMovesAWorkloadIntoRoomThatMovingAnotherMakes) {
  // One queue, so neither reclaim nor preemption (all alike in priority) can help. Rack r0: A (8
  // GPUs) on node 0, node 1 free. Rack r1: B (4) and 4 free on node 2, a non-preemptible 4 and 4
  // free on node 3. Racks r2, r3: pinned 8-GPU jobs. A 16-GPU gang needs a rack: A must leave r0,
  // but no node has 8 free; moving B to node 3 makes room for A on node 2.
  build(64, {}, 0);
  add(gang("A", 1, 8), "q", 0);
  for (int node = 4; node < 8; ++node) add(pinned(fmt::format("p{}", node), node), "q", 0);
  world->cycle(0);
  add(in_rack(gang("B", 1, 4), "r1"), "q", 1);
  world->cycle(1);
  add(not_preemptible(pinned("fixed", 3, 4)), "q", 2);
  world->cycle(2);
  ASSERT_EQ(node_of("A"), 0);
  ASSERT_EQ(node_of("B"), 2);
  ASSERT_EQ(node_of("fixed"), 3);
  const WorkloadId id = add_rack_gang(3);
  const CycleResult result = world->cycle(100);
  ASSERT_TRUE(world->running(id)) << reason_of(result, id);
  EXPECT_EQ(nodes_of_workload(id), (std::vector<NodeIndex>{0, 1}));
  EXPECT_EQ(node_of("A"), 2);
  EXPECT_EQ(node_of("B"), 3);
  ASSERT_EQ(result.evictions.size(), 2u);
  for (const Eviction& eviction : result.evictions) {
    EXPECT_TRUE(eviction.moved);
    EXPECT_EQ(eviction.action, Action::kConsolidate);
  }
}

TEST_F(RoomWorld, NothingMovesWhenAChainOfMovesEndsWithoutFreeRoom) {
  // Rack r1 holds B and C (5 GPUs each, 3 free beside each), node 4 a pinned 6-GPU job: 16 GPUs
  // free in all, but A can leave r0 only by taking B's or C's node, and neither finds 5 free
  // GPUs then. The gang waits and nothing is evicted or moved.
  build(64, {}, 0);
  add(gang("A", 1, 8), "q", 0);
  add(pinned("six", 4, 6), "q", 0);
  for (int node = 5; node < 8; ++node) add(pinned(fmt::format("p{}", node), node), "q", 0);
  world->cycle(0);
  add(in_rack(gang("B", 1, 5), "r1"), "q", 1);
  add(in_rack(gang("C", 1, 5), "r1"), "q", 1);
  world->cycle(1);
  ASSERT_EQ(node_of("A"), 0);
  ASSERT_GE(node_of("B"), 2);
  ASSERT_GE(node_of("C"), 2);
  const WorkloadId id = add_rack_gang(3);
  const CycleResult result = world->cycle(100);
  EXPECT_FALSE(world->running(id));
  EXPECT_TRUE(result.evictions.empty());
}

Result<ScenarioParts> parse(std::string_view yaml) {
  return parse_scenario_yaml(
      yaml, "s.yaml", [](std::string_view) -> Result<std::string> { return Error{"none"}; }, nullptr);
}

constexpr std::string_view kCluster = R"(cluster:
  nodes:
    - {name: n, count: 8, cpu: 64, memory: 256Gi, gpus: 8, gpu_model: H100, gpu_memory: 80Gi}
topology:
  - name: net
    levels: [tessera.dev/block, tessera.dev/rack]
    nodes_per_domain: [4, 2]
)";

TEST(TopologyScenario, NodesAreLabelledAndWorkloadsCarryTheirConstraintsAndSubgroups) {
  const std::string yaml = std::string(kCluster) + R"(workloads:
  - name: job
    pods: 4
    pod: {cpu: 1, memory: 1Gi, gpus: 8}
    topology: {name: net, required: tessera.dev/block, preferred: tessera.dev/rack}
    subgroups:
      - {name: tp, count: 2, pods: 2, topology: {required: tessera.dev/rack}}
)";
  auto parts = parse(yaml);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  const ClusterSpec& cluster = *parts->cluster;
  ASSERT_EQ(cluster.topologies.size(), 1u);
  EXPECT_EQ(cluster.nodes[5].labels.at("tessera.dev/block"), "b1");
  EXPECT_EQ(cluster.nodes[5].labels.at("tessera.dev/rack"), "r2");
  const WorkloadSpec& job = parts->workloads->at(0);
  EXPECT_EQ(job.topology_constraint().required_level, "tessera.dev/block");
  ASSERT_EQ(job.subgroups().size(), 2u);
  EXPECT_EQ(job.subgroups()[1].name, "tp-1");
  EXPECT_EQ(job.subgroups()[1].constraint.topology, "net");
  // Copies of one workload entry share their terms.
  EXPECT_EQ(parts->workloads->at(0).topology, job.topology);
  EXPECT_EQ(job.pods[3].subgroup, 1);  // tp-1
}

TEST(TopologyScenario, BadConstraintsAreRefusedNamingTheField) {
  auto with = [](std::string_view workload) {
    return parse(std::string(kCluster) + "workloads:\n  - name: job\n    pods: 4\n    pod: {cpu: 1, gpus: 8}\n" +
                 std::string(workload));
  };
  auto expect_error = [](const Result<ScenarioParts>& result, std::string_view text) {
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find(text), std::string::npos) << result.error().message;
  };
  expect_error(with("    topology: {name: fabric, required: rack}\n"),
               "field 'workloads[0].topology.name': 'fabric' is not a topology of the scenario");
  expect_error(with("    topology: {name: net, required: rack}\n"),
               "field 'workloads[0].topology.required': 'rack' is not a level of topology 'net'");
  expect_error(with("    topology: {name: net, required: tessera.dev/rack, preferred: tessera.dev/block}\n"),
               "'tessera.dev/block' is wider than the required level");
  expect_error(with("    subgroups: [{name: a, pods: 3, topology: {name: net, required: tessera.dev/rack}}, "
                    "{name: b, pods: 2}]\n"),
               "makes the subgroups hold more than the workload's 4 pods");
  expect_error(parse(std::string(kCluster).replace(std::string(kCluster).find("[4, 2]"), 6, "[4, 3]")),
               "3 does not divide 4");
}

TEST(TopologyDomains, EachDomainsFreeGpusFollowThePodsThatComeAndGo) {
  ClusterState cluster(racked_cluster());  // 8 nodes of 8 GPUs; blocks b0, b1 of racks r0-r1, r2-r3
  auto free_in = [&cluster](int level) {
    const std::span<const int64_t> free = cluster.domain_free_gpu_milli(0, level);
    return std::vector<int64_t>(free.begin(), free.end());
  };
  EXPECT_EQ(free_in(0), (std::vector<int64_t>{32 * kGpu, 32 * kGpu}));
  EXPECT_EQ(free_in(1), (std::vector<int64_t>{16 * kGpu, 16 * kGpu, 16 * kGpu, 16 * kGpu}));
  const PodId whole = cluster.add_pod(testing::pod("whole", 1000, GpuRequest::whole(3)));
  const PodId portion = cluster.add_pod(testing::pod("portion", 1000, GpuRequest::portion(250)));
  cluster.bind(whole, Binding{5, {0, 1, 2}, 1000});
  {
    Statement statement(cluster);
    statement.allocate(portion, Binding{2, {4}, 250});
    EXPECT_EQ(free_in(0), (std::vector<int64_t>{31750, 29 * kGpu}));
    EXPECT_EQ(free_in(1), (std::vector<int64_t>{16 * kGpu, 15750, 13 * kGpu, 16 * kGpu}));
    statement.evict(whole);
    EXPECT_EQ(free_in(1), (std::vector<int64_t>{16 * kGpu, 15750, 16 * kGpu, 16 * kGpu}));
  }  // rolled back
  EXPECT_EQ(free_in(0), (std::vector<int64_t>{32 * kGpu, 29 * kGpu}));
  EXPECT_EQ(free_in(1), (std::vector<int64_t>{16 * kGpu, 16 * kGpu, 13 * kGpu, 16 * kGpu}));
  EXPECT_TRUE(check_invariants(cluster).empty());
  cluster.unbind(whole);
  EXPECT_EQ(free_in(0), (std::vector<int64_t>{32 * kGpu, 32 * kGpu}));
}

TEST(TopologyCost, AGangRunsSlowerTheWiderTheNarrowestDomainThatHoldsIt) {
  const auto cluster = racked_cluster();
  const TopologyDomains domains(*cluster);
  const NodeIndex one_rack[] = {0, 1};
  const NodeIndex one_block[] = {0, 3};
  const NodeIndex two_blocks[] = {1, 4};
  EXPECT_EQ(narrowest_common_level(domains, 0, one_rack), 1);
  EXPECT_EQ(narrowest_common_level(domains, 0, one_block), 0);
  EXPECT_EQ(narrowest_common_level(domains, 0, two_blocks), -1);
  const TopologyCost cost{"net", {1.4, 1.15, 1.0}};
  EXPECT_DOUBLE_EQ(run_time_factor(cost, -1), 1.4);
  EXPECT_DOUBLE_EQ(run_time_factor(cost, 0), 1.15);
  EXPECT_DOUBLE_EQ(run_time_factor(cost, 1), 1.0);
  EXPECT_DOUBLE_EQ(run_time_factor(TopologyCost{}, -1), 1.0);
}

TEST(TopologyCost, TheReplayStretchesTheRunOfAGangThatSpansBlocks) {
  // Two one-node blocks: a two-node gang of 100 s can only span them, and runs 140 s.
  auto parts = parse(R"(cluster:
  nodes:
    - {name: n, count: 2, cpu: 64, memory: 256Gi, gpus: 8, gpu_model: H100, gpu_memory: 80Gi}
topology:
  - {name: net, levels: [block, rack], nodes_per_domain: [1, 1], run_time_factors: [1.4, 1.15, 1.0]}
queues:
  - {name: q, quota: {gpu: {deserved: 16}}}
workloads:
  - {name: job, queue: q, pods: 2, duration: 100, pod: {cpu: 1, gpus: 8}}
)");
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  Scenario scenario;
  scenario.cluster = parts->cluster;
  scenario.workloads = *parts->workloads;
  scenario.queues = *parts->queues;
  scenario.resources = parts->resources;
  scenario.topology_cost = parts->topology_cost;
  auto result = run_cycle_replay(scenario, "tessera", TimelineOptions{});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_DOUBLE_EQ(result->cycle->jct_seconds.max, 140);
  EXPECT_EQ(result->cycle->topology.multi_node_gangs, 1);
  EXPECT_EQ(result->cycle->topology.within, (std::vector<int64_t>{0, 0}));
}

TEST(TopologyScenario, TheShippedScenarioKeepsEveryRequiredGangInOneRack) {
  ScenarioRequest request;
  request.cluster = std::string(TESSERA_SOURCE_DIR) + "/scenarios/racks-and-blocks.yaml";
  auto scenario = load_scenario(request);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  TimelineOptions options;
  options.check_invariants = true;  // includes check_topology after every cycle
  auto result = run_cycle_replay(*scenario, "tessera", options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const TopologySummary& topology = result->cycle->topology;
  EXPECT_EQ(topology.required_started, topology.required_gangs);
  EXPECT_GT(topology.required_gangs, 0);
  // At least every required gang ran within one rack.
  EXPECT_GE(topology.within.back(), topology.required_gangs);
}

TEST(TopologySynthetic, TheBenchmarkWorldGetsLevelsAndConstrainedGangsFromTheSameDraws) {
  SyntheticSpec plain{.nodes = 600, .pending_pods = 2000, .running_pods = 1000, .queues = 20, .seed = 3};
  SyntheticSpec racked = plain;
  racked.topology_levels = 4;
  const SyntheticWorld without = make_synthetic_world(plain);
  const SyntheticWorld with = make_synthetic_world(racked);
  ASSERT_EQ(with.cluster->topologies.size(), 1u);
  EXPECT_EQ(with.cluster->topologies[0].levels.size(), 4u);
  EXPECT_EQ(with.cluster->nodes[300].labels.at("tessera.dev/block"), "1");
  EXPECT_EQ(with.cluster->nodes[300].labels.at("tessera.dev/rack"), "18");
  ASSERT_EQ(with.workloads.size(), without.workloads.size());
  int constrained = 0;
  for (size_t i = 0; i < with.workloads.size(); ++i) {
    EXPECT_EQ(with.workloads[i].spec.pods.size(), without.workloads[i].spec.pods.size());
    const bool gang = with.workloads[i].spec.min_member > 1;
    EXPECT_EQ(with.workloads[i].spec.topology_constraint().required_level, gang ? "tessera.dev/block" : "");
    constrained += gang;
  }
  EXPECT_GT(constrained, 0);
}

}  // namespace
}  // namespace tessera
