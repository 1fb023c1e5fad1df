// Start-time estimates on worlds small enough to work out by hand: one 8-GPU node, time limits
// in round numbers, and the estimate each workload must get.
#include "scheduler/start_estimates.h"

#include <gtest/gtest.h>

#include "scheduler_world.h"

namespace tessera::testing {
namespace {

std::vector<double> runtimes(SchedulerWorld& world) {
  std::vector<double> out;
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(world.workloads().size()); ++id) {
    out.push_back(expected_runtime_of(world.workloads()[id].spec, -1));
  }
  return out;
}

StartEstimates estimate(SchedulerWorld& world, double now, const EstimateOptions& options = {}) {
  const std::vector<double> expected = runtimes(world);
  auto result = estimate_starts({world.cluster(), world.policy(), world.workloads(), world.tree(), world.meter(), now,
                                 &world.carried(), expected},
                                CycleOptions{}, options);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  return result.ok() ? *result : StartEstimates{};
}

const StartEstimate* find(const StartEstimates& estimates, WorkloadId id) {
  for (const StartEstimate& estimate : estimates.estimates) {
    if (estimate.workload == id) return &estimate;
  }
  return nullptr;
}

// One node of 8 GPUs and one queue. r1 (4 GPUs) ends by 600 s, r2 (4 GPUs) by 1800 s. The 8-GPU
// gang p waits for both; q (4 GPUs, limit 1200 s) takes r1's room at 600 s — by then p has waited
// 600 s and reserves the node, due at 1800 s, and q backfills it since it ends by then too.
TEST(StartEstimates, AGangWaitsForBothJobsAndASmallJobTakesTheFirstRoom) {
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("team", "", 8)});
  world.submit("r1", "team", {.pods = 1, .gpus_per_pod = 4, .time_limit = 600});
  world.submit("r2", "team", {.pods = 1, .gpus_per_pod = 4, .time_limit = 1800});
  world.cycle(0);
  ASSERT_EQ(world.gpus_of("team"), 8);
  const WorkloadId p = world.submit("p", "team", {.pods = 2, .gpus_per_pod = 4}, 50);
  const WorkloadId q = world.submit("q", "team", {.pods = 1, .gpus_per_pod = 4, .time_limit = 1200}, 60);
  world.cycle(100);
  ASSERT_FALSE(world.running(p));

  const StartEstimates estimates = estimate(world, 100);
  EXPECT_EQ(estimates.stop, EstimateStop::kAllEstimated);
  EXPECT_TRUE(estimates.unreached.empty());
  const StartEstimate* for_q = find(estimates, q);
  ASSERT_NE(for_q, nullptr);
  EXPECT_DOUBLE_EQ(for_q->start, 600);
  EXPECT_EQ(for_q->cause, EstimateCause::kWorkEnds);
  EXPECT_EQ(describe(*for_q, world.tree(), 100), "when 4 GPUs of queue team's work end (r1), ~8 min");
  const StartEstimate* for_p = find(estimates, p);
  ASSERT_NE(for_p, nullptr);
  EXPECT_DOUBLE_EQ(for_p->start, 1800);
  EXPECT_DOUBLE_EQ(for_p->cause_gpus, 8);  // r2 and q end together
  EXPECT_EQ(describe(*for_p, world.tree(), 100), "when 8 GPUs of queue team's work end (q and r2), ~28 min");
  // The live world is untouched: the forward run works on copies.
  EXPECT_FALSE(world.running(p));
  EXPECT_FALSE(world.running(q));
  EXPECT_EQ(world.gpus_of("team"), 8);
}

// Queue b borrows a's half of the node, and may not be reclaimed before 2 h: a's job starts when
// b's first job reaches its limit, and the cause names b's borrowed work.
TEST(StartEstimates, BorrowedWorkThatCannotBeReclaimedYetIsWaitedFor) {
  QueueSpec b = gpu_queue("b", "", 4);
  b.reclaim_min_runtime_seconds = 7200;
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("a", "", 4), b});
  world.submit("b1", "b", {.pods = 1, .gpus_per_pod = 4, .time_limit = 1000});
  world.submit("b2", "b", {.pods = 1, .gpus_per_pod = 4, .time_limit = 5000});
  world.cycle(0);
  const WorkloadId a1 = world.submit("a1", "a", {.pods = 1, .gpus_per_pod = 4}, 10);
  world.cycle(10);
  ASSERT_FALSE(world.running(a1));

  const StartEstimates estimates = estimate(world, 10);
  const StartEstimate* for_a1 = find(estimates, a1);
  ASSERT_NE(for_a1, nullptr);
  EXPECT_DOUBLE_EQ(for_a1->start, 1000);
  EXPECT_TRUE(for_a1->cause_borrowed);
  EXPECT_EQ(describe(*for_a1, world.tree(), 10), "when 4 GPUs of queue b's borrowed work end (b1), ~16 min");
}

// The same world without the minimum runtime: the next cycle reclaims for it.
TEST(StartEstimates, ReclaimableBorrowedWorkMakesRoomInTheNextCycle) {
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("a", "", 4), gpu_queue("b", "", 4)});
  world.submit("b1", "b", {.pods = 1, .gpus_per_pod = 4, .time_limit = 1000});
  world.submit("b2", "b", {.pods = 1, .gpus_per_pod = 4, .time_limit = 5000});
  world.cycle(0);
  const WorkloadId a1 = world.submit("a1", "a", {.pods = 1, .gpus_per_pod = 4}, 10);

  const StartEstimates estimates = estimate(world, 10);
  const StartEstimate* for_a1 = find(estimates, a1);
  ASSERT_NE(for_a1, nullptr);
  EXPECT_DOUBLE_EQ(for_a1->start, 10);
  EXPECT_EQ(for_a1->cause, EstimateCause::kEvictions);
  // Either of b's jobs frees the room; the cause names the one reclaimed.
  const std::string cause = describe(*for_a1, world.tree(), 10);
  EXPECT_TRUE(cause == "by reclaiming 4 GPUs of queue b's borrowed work (b1), in the next cycle" ||
              cause == "by reclaiming 4 GPUs of queue b's borrowed work (b2), in the next cycle")
      << cause;
}

// The cause names the workloads that made room, the largest first: one, two, or one and a count.
TEST(StartEstimates, TheCauseNamesTheWorkloadsThatMakeRoom) {
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("team", "", 8)});
  StartEstimate estimate{.workload = 0,
                         .start = 600,
                         .cause = EstimateCause::kWorkEnds,
                         .cause_queue = 0,
                         .cause_gpus = 8,
                         .cause_workloads = {"ml/pretrain"},
                         .cause_workload_count = 1};
  EXPECT_EQ(describe_cause(estimate, world.tree()), "when 8 GPUs of queue team's work end (ml/pretrain)");
  estimate.cause_workloads = {"ml/a", "ml/b"};
  estimate.cause_workload_count = 2;
  EXPECT_EQ(describe_cause(estimate, world.tree()), "when 8 GPUs of queue team's work end (ml/a and ml/b)");
  estimate.cause_workload_count = 4;
  EXPECT_EQ(describe_cause(estimate, world.tree()), "when 8 GPUs of queue team's work end (ml/a and 3 more)");
}

// Work without a time limit is not expected to end: what waits for it gets no estimate, and the
// step cap leaves the rest unreached.
TEST(StartEstimates, WorkWithoutLimitsAndTheStepCapLeaveWorkloadsUnreached) {
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("team", "", 8)});
  world.submit("forever", "team", {.pods = 1, .gpus_per_pod = 4});
  world.submit("limited", "team", {.pods = 1, .gpus_per_pod = 4, .time_limit = 600});
  world.cycle(0);
  const WorkloadId small = world.submit("small", "team", {.pods = 1, .gpus_per_pod = 4}, 10);
  const WorkloadId big = world.submit("big", "team", {.pods = 1, .gpus_per_pod = 8}, 20);
  world.cycle(10);

  const StartEstimates estimates = estimate(world, 10);
  EXPECT_EQ(estimates.stop, EstimateStop::kNoMoreEnds);
  ASSERT_NE(find(estimates, small), nullptr);
  EXPECT_DOUBLE_EQ(find(estimates, small)->start, 600);
  EXPECT_EQ(estimates.unreached, std::vector<WorkloadId>{big});

  const StartEstimates capped = estimate(world, 10, {.max_steps = 1});
  EXPECT_EQ(capped.stop, EstimateStop::kStepCap);
  EXPECT_EQ(capped.steps, 1);
  EXPECT_TRUE(capped.estimates.empty());
  EXPECT_EQ(capped.unreached, (std::vector<WorkloadId>{small, big}));
}

}  // namespace
}  // namespace tessera::testing
