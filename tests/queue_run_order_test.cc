// Each action takes a queue's candidates in runs_before order. The cycle sorts its pending
// workloads once, and split_by_queue_in_run_order sorts again only the queues whose candidates
// come out of order: the lists must be those a full sort gives, whatever order comes in. A
// picker over workloads pending at the start orders them by their places in the cycle's sorted
// list instead, without reading the workloads: it must hand out the same lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>

#include "policy/fair_share.h"
#include "scheduler/cycle_context.h"
#include "scheduler/queue_picker.h"
#include "scheduler_world.h"

namespace tessera {
namespace {

using testing::SchedulerWorld;
using testing::WorkloadShape;

// What the split must equal: the full sort, cut where the queue changes.
std::vector<std::vector<WorkloadId>> sorted_then_cut(const WorkloadSet& workloads, std::vector<WorkloadId> ids,
                                                     size_t queue_count) {
  sort_by_queue_and_run_order(workloads, ids);
  std::vector<std::vector<WorkloadId>> by_queue(queue_count);
  for (WorkloadId id : ids) by_queue[workloads[id].queue].push_back(id);
  return by_queue;
}

// A department of one to six projects on two nodes, and from `least` to 120 workloads, each in a
// project drawn at random, of few priorities and submission times: many ties, broken by
// submission, then id.
struct DrawnWorld {
  std::unique_ptr<SchedulerWorld> world;
  std::vector<WorkloadId> ids;
};
DrawnWorld draw_world(std::mt19937_64& random, int least) {
  auto draw = [&random](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  std::vector<QueueSpec> queues;
  std::vector<std::string> leaves;
  const int projects = draw(1, 6);
  queues.push_back(testing::gpu_queue("dept", "", 8));
  for (int p = 0; p < projects; ++p) {
    leaves.push_back(fmt::format("p{}", p));
    queues.push_back(testing::gpu_queue(leaves.back(), "dept", 1));
  }
  DrawnWorld drawn{std::make_unique<SchedulerWorld>(testing::uniform_cluster(2, 8), queues), {}};
  const int count = draw(least, 120);
  for (int w = 0; w < count; ++w) {
    WorkloadShape shape;
    shape.priority = 50 * draw(0, 2);
    const std::string& leaf = leaves[static_cast<size_t>(draw(0, projects - 1))];
    drawn.ids.push_back(drawn.world->submit(fmt::format("w{}", w), leaf, shape, 10.0 * draw(0, 5)));
  }
  return drawn;
}

TEST(QueueRunOrder, SplitByQueueGivesWhatTheFullSortGivesInAnyOrder) {
  std::mt19937_64 random(4711);
  auto draw = [&random](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  int presorted_lists = 0, shuffled_lists = 0;
  for (int round = 0; round < 60; ++round) {
    DrawnWorld drawn = draw_world(random, 0);
    SchedulerWorld& world = *drawn.world;
    const std::vector<WorkloadId>& ids = drawn.ids;
    const size_t queue_count = world.tree().size();
    const std::vector<std::vector<WorkloadId>> expected = sorted_then_cut(world.workloads(), ids, queue_count);
    // In order already (part of a sorted list, as the actions' candidates are): one pass.
    std::vector<WorkloadId> sorted = ids;
    sort_by_queue_and_run_order(world.workloads(), sorted);
    std::vector<WorkloadId> part;
    for (WorkloadId id : sorted) {
      if (draw(0, 3) != 0) part.push_back(id);
    }
    EXPECT_EQ(split_by_queue_in_run_order(world.workloads(), part, queue_count),
              sorted_then_cut(world.workloads(), part, queue_count))
        << "round " << round;
    presorted_lists += part.empty() ? 0 : 1;
    // Any order: shuffled, reversed, queues interleaved.
    std::vector<WorkloadId> shuffled = ids;
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    EXPECT_EQ(split_by_queue_in_run_order(world.workloads(), shuffled, queue_count), expected) << "round " << round;
    std::reverse(sorted.begin(), sorted.end());
    EXPECT_EQ(split_by_queue_in_run_order(world.workloads(), sorted, queue_count), expected) << "round " << round;
    shuffled_lists += ids.size() > 1 ? 1 : 0;
  }
  EXPECT_GT(presorted_lists, 40);
  EXPECT_GT(shuffled_lists, 40);
}

// Each queue's candidates as a picker hands them out, whatever order it takes the queues in.
std::vector<std::vector<WorkloadId>> picked_by_queue(CycleContext& context, const std::vector<WorkloadId>& candidates) {
  std::vector<std::vector<WorkloadId>> by_queue(context.tree().size());
  QueuePicker picker(context, candidates);
  for (WorkloadId id = picker.next(); id >= 0; id = picker.next())
    by_queue[context.workloads()[id].queue].push_back(id);
  return by_queue;
}

TEST(QueueRunOrder, APickerOverPendingWorkloadsHandsOutEachQueueInRunOrderInAnyOrder) {
  std::mt19937_64 random(90210);
  auto draw = [&random](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  int checked = 0;
  for (int round = 0; round < 40; ++round) {
    DrawnWorld drawn = draw_world(random, 1);
    SchedulerWorld& world = *drawn.world;
    const QueueTree& tree = world.tree();
    std::vector<QueueLoad> loads(tree.size());
    for (QueueLoad& load : loads) {
      load.demand.assign(tree.resource_count(), 0.0);
      load.allocated.assign(tree.resource_count(), 0.0);
    }
    Result<FairShares> shares = compute_fair_shares(tree, world.meter().capacity(), loads);
    ASSERT_TRUE(shares.ok());
    Placer placer(world.policy());
    const CycleOptions options;
    CycleContext context({world.cluster(), placer, world.workloads(), tree, world.meter(), 0}, options,
                         std::move(*shares), loads,
                         std::vector<ResourceVector>(tree.size(), ResourceVector(tree.resource_count(), 0.0)));
    ASSERT_EQ(context.pending().size(), drawn.ids.size());
    std::vector<WorkloadId> part;
    for (WorkloadId id : context.pending()) {
      if (draw(0, 3) != 0) part.push_back(id);
    }
    std::vector<WorkloadId> shuffled = part;
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    std::vector<WorkloadId> reversed(part.rbegin(), part.rend());
    const auto expected = split_by_queue_in_run_order(world.workloads(), part, tree.size());
    EXPECT_EQ(picked_by_queue(context, part), expected) << "round " << round;
    EXPECT_EQ(picked_by_queue(context, shuffled), expected) << "round " << round;
    EXPECT_EQ(picked_by_queue(context, reversed), expected) << "round " << round;
    checked += part.size() > 1 ? 1 : 0;
  }
  EXPECT_GT(checked, 30);
}

}  // namespace
}  // namespace tessera
