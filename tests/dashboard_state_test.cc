// The dashboard's picture of a cycle: which queue holds each GPU (fractions included), the queue
// tree with its shares, why work waits, what was evicted for whom, and the JSON the page reads.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dashboard/dashboard_json.h"
#include "dashboard/dashboard_publisher.h"
#include "dashboard/queue_history.h"
#include "dashboard/state_builder.h"
#include "scheduler_world.h"

namespace tessera::dashboard {
namespace {

using testing::gpu_queue;
using testing::SchedulerWorld;
using testing::uniform_cluster;
using testing::WorkloadShape;

std::vector<std::string> keys_of(SchedulerWorld& world) {
  std::vector<std::string> keys;
  for (size_t id = 0; id < world.workloads().size(); ++id) {
    keys.push_back("ml/" + world.workloads()[static_cast<WorkloadId>(id)].spec.name);
  }
  return keys;
}

// Two nodes of two GPUs; team-a's training job and notebook run, team-b's job is over its limit.
struct TwoTeams : ::testing::Test {
  SchedulerWorld world{uniform_cluster(2, 2),
                       {gpu_queue("org", "", 4), gpu_queue("team-a", "org", 2), gpu_queue("team-b", "org", 1, 1, 1)}};
  CycleResult result;
  std::vector<std::string> keys;

  void SetUp() override {
    world.submit("a-train", "team-a", {.pods = 1, .gpus_per_pod = 2});
    world.submit("a-notebook", "team-a", {.pods = 1, .gpus_per_pod = 0, .portion_milli = 500});
    world.submit("b-big", "team-b", {.pods = 1, .gpus_per_pod = 2});
    result = world.cycle(100);
    keys = keys_of(world);
    std::vector<PodSpec> pods;
    for (PodId pod = 0; pod < world.cluster().pod_count(); ++pod) pods.push_back(world.cluster().pod(pod));
    mix = WorkloadMix::from_pods(pods);
  }
  WorkloadMix mix;
  CycleFacts facts() {
    return {world.cluster(), world.workloads(), world.tree(), world.meter(), result, keys, mix, 100};
  }
};

TEST_F(TwoTeams, TheQueueTreeShowsEachQueueAfterItsParentWithItsSharesAndWork) {
  const std::vector<QueueRow> rows = queue_rows(facts());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "org");
  EXPECT_EQ(rows[0].depth, 0);
  EXPECT_FALSE(rows[0].leaf);
  EXPECT_EQ(rows[1].name, "team-a");
  EXPECT_EQ(rows[1].depth, 1);
  EXPECT_DOUBLE_EQ(rows[1].deserved, 2);
  EXPECT_DOUBLE_EQ(rows[1].allocated, 2.5);
  EXPECT_EQ(rows[1].running, 2);
  EXPECT_EQ(rows[2].name, "team-b");
  EXPECT_EQ(rows[2].limit, 1.0);
  EXPECT_EQ(rows[2].pending, 1);
  EXPECT_DOUBLE_EQ(rows[1].requested, 2.5);
  EXPECT_EQ(rows[0].running, 2);
  EXPECT_EQ(rows[0].pending, 1);
}

TEST_F(TwoTeams, TheGpuMapSaysWhichQueueHoldsEachDeviceAndHowMuchOfIt) {
  const std::vector<NodeRow> nodes = node_rows(facts());
  ASSERT_EQ(nodes.size(), 2u);
  int whole = 0, halves = 0, free = 0;
  for (const NodeRow& node : nodes) {
    EXPECT_EQ(node.model, "A100");
    ASSERT_EQ(node.devices.size(), 2u);
    for (const DeviceUse& device : node.devices) {
      if (device.holders.empty()) ++free;
      for (const DeviceHolder& holder : device.holders) {
        EXPECT_EQ(holder.queue, 1) << "team-a is row 1";
        whole += holder.milli == 1000;
        halves += holder.milli == 500;
      }
    }
  }
  EXPECT_EQ(whole, 2);
  EXPECT_EQ(halves, 1);
  EXPECT_EQ(free, 1);
  // FGD against the mix (two 2-GPU pods, one half): the node with the notebook has 1.5 GPUs free,
  // all of which a 2-GPU pod cannot use and none of which a half cannot: 2/3 x 1.5.
  const NodeRow& notebook =
      nodes[0].devices[0].holders.size() == 1 && nodes[0].devices[1].holders.empty() ? nodes[0] : nodes[1];
  EXPECT_DOUBLE_EQ(notebook.fragmented, 1.0);
}

TEST_F(TwoTeams, GpusHeldByPodsOfOtherSchedulersShowAsNoQueuesOnTheMap) {
  const NodeIndex node = world.cluster().node_state(0).idle_devices() > 0 ? 0 : 1;
  int device = 0;
  while (!world.cluster().node_state(node).device_is_idle(device)) ++device;
  const PodId foreign = world.cluster().add_pod(testing::pod("kube-system/other", 100, GpuRequest::portion(300)));
  world.cluster().bind(foreign,
                       Binding{.node = node, .devices = {static_cast<int16_t>(device)}, .milli_per_device = 300});
  const std::vector<NodeRow> nodes = node_rows(facts());
  const auto& holders = nodes[static_cast<size_t>(node)].devices[static_cast<size_t>(device)].holders;
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].queue, -1);
  EXPECT_EQ(holders[0].milli, 300);
}

TEST_F(TwoTeams, PendingWorkShowsItsReasonAndTheOverviewCountsIt) {
  const std::vector<WorkloadRow> pending = pending_rows(facts());
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].key, "ml/b-big");
  EXPECT_EQ(pending[0].queue, "team-b");
  EXPECT_DOUBLE_EQ(pending[0].gpus, 2);
  EXPECT_EQ(pending[0].reason, "QueueLimit");
  EXPECT_NE(pending[0].message.find("team-b"), std::string::npos) << pending[0].message;
  const Overview overview = overview_of(node_rows(facts()), queue_rows(facts()), pending);
  EXPECT_EQ(overview.nodes, 2);
  EXPECT_DOUBLE_EQ(overview.gpus, 4);
  EXPECT_DOUBLE_EQ(overview.allocated, 2.5);
  EXPECT_EQ(overview.running, 2);
  EXPECT_EQ(overview.pending, 1);
  EXPECT_EQ(overview.pending_by_reason.at("QueueLimit"), 1);
}

TEST_F(TwoTeams, TheNodesEndpointIsColumnarPagedAndFiltered) {
  DashboardPublisher publisher;
  publisher.publish({queue_rows(facts()), node_rows(facts()), pending_rows(facts()), {}, 100});
  const auto state = publisher.current();
  const nlohmann::json page = nodes_json(*state, {.offset = 1, .limit = 1, .match = ""});
  EXPECT_EQ(page["total"], 2);
  EXPECT_EQ(page["matched"], 2);
  ASSERT_EQ(page["rows"].size(), 1u);
  EXPECT_EQ(page["rows"][0][0], "node-1");
  EXPECT_EQ(page["queues"], nlohmann::json({"org", "team-a", "team-b"}));
  const nlohmann::json filtered = nodes_json(*state, {.offset = 0, .limit = 10, .match = "node-0"});
  EXPECT_EQ(filtered["matched"], 1);
  bool half_seen = false;
  const nlohmann::json all = nodes_json(*state, {});
  for (const auto& row : all["rows"]) {
    for (const auto& device : row[5]) half_seen = half_seen || device == nlohmann::json({1, 500});
  }
  EXPECT_TRUE(half_seen) << all.dump();
  const nlohmann::json workloads = workloads_json(*state, {});
  EXPECT_EQ(workloads["pending"][0]["reason"], "QueueLimit");
  EXPECT_EQ(overview_json(*state)["pendingByReason"]["QueueLimit"], 1);
  EXPECT_EQ(queues_json(*state)["queues"][1]["allocated"], 2.5);
  EXPECT_EQ(nodes_json(*state, {.offset = 0, .limit = 100000, .match = ""})["limit"], kMaxPageRows);
}

TEST(DashboardEvictions, AReclaimIsShownWithTheWorkloadItMadeRoomFor) {
  SchedulerWorld world{uniform_cluster(1, 4), {gpu_queue("team-a", "", 2), gpu_queue("team-b", "", 2)}};
  for (int i = 0; i < 4; ++i) world.submit(fmt::format("a-{}", i), "team-a", {.pods = 1, .gpus_per_pod = 1});
  world.cycle(0);
  world.submit("b-job", "team-b", {.pods = 1, .gpus_per_pod = 2}, 10);
  const CycleResult result = world.cycle(100);
  const std::vector<std::string> keys = keys_of(world);
  const WorkloadMix mix;
  const CycleFacts facts{world.cluster(), world.workloads(), world.tree(), world.meter(), result, keys, mix, 100};
  const auto rows = eviction_rows(facts, [](const std::string&) { return true; });
  ASSERT_FALSE(rows.empty());
  for (const EvictionRow& row : rows) {
    EXPECT_EQ(row.queue, "team-a");
    EXPECT_EQ(row.action, "reclaim");
    EXPECT_EQ(row.made_room_for, "ml/b-job");
    EXPECT_DOUBLE_EQ(row.gpus, 1);
    EXPECT_DOUBLE_EQ(row.at, 100);
  }
  EXPECT_TRUE(eviction_rows(facts, [](const std::string&) { return false; }).empty())
      << "an eviction the API server refused is not shown";
}

TEST(DashboardHistory, SamplesAreTakenEveryIntervalKeptToCapacityAndForgottenWithTheirQueue) {
  QueueHistory history(3, 10);
  std::vector<QueueRow> rows(1);
  rows[0].name = "team-a";
  for (double now : {0.0, 5.0, 10.0, 20.0, 30.0}) {
    rows[0].allocated = now;
    history.record(rows, now);
  }
  ASSERT_EQ(rows[0].history.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0].history.front().at, 10);
  EXPECT_DOUBLE_EQ(rows[0].history.back().allocated, 30);
  std::vector<QueueRow> renamed(1);
  renamed[0].name = "team-b";
  history.record(renamed, 40);
  history.record(rows, 50);
  EXPECT_EQ(rows[0].history.size(), 1u) << "team-a was gone for a cycle: its history starts again";
}

TEST(DashboardPublisher, ReadersKeepTheirPictureWhileANewOneIsPublished) {
  DashboardPublisher publisher(QueueHistory(), 2);
  EXPECT_EQ(publisher.current()->cycle, 0);
  CycleRows first;
  first.now = 10;
  first.evictions = {EvictionRow{10, "ml/a", "team-a", "reclaim", "ml/b", 1, 1}};
  publisher.publish(first);
  const auto held = publisher.current();
  CycleRows second;
  second.now = 20;
  publisher.add_evictions({EvictionRow{15, "ml/c", "team-a", "preempt", "ml/d", 1, 1}});
  EXPECT_EQ(publisher.current()->evictions.size(), 1u) << "kept for the next picture";
  second.evictions = {EvictionRow{20, "ml/e", "team-a", "preempt", "ml/d", 1, 1}};
  publisher.publish(second);
  EXPECT_EQ(held->cycle, 1);
  EXPECT_DOUBLE_EQ(held->cycle_at, 10);
  ASSERT_EQ(held->evictions.size(), 1u);
  const auto now = publisher.current();
  EXPECT_EQ(now->cycle, 2);
  ASSERT_EQ(now->evictions.size(), 2u) << "kept to the last 2";
  EXPECT_EQ(now->evictions[0].workload, "ml/e");
  EXPECT_EQ(now->evictions[1].workload, "ml/c");
}

}  // namespace
}  // namespace tessera::dashboard
