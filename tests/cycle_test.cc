// The scheduling cycle, rule by rule (docs/design.md §3–§4), on worlds small enough to check by hand.
#include "scheduler/cycle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "scheduler/queue_ledger.h"
#include "scheduler_world.h"

namespace tessera {
namespace {

using testing::gpu_queue;
using testing::SchedulerWorld;
using testing::uniform_cluster;
using testing::WorkloadShape;

std::vector<QueueSpec> lab_queues() {
  return {gpu_queue("lab", "", 8), gpu_queue("susan", "lab", 2), gpu_queue("joe", "lab", 2),
          gpu_queue("jemma", "lab", 2)};
}

int evicted_pods(const CycleResult& result) {
  int count = 0;
  for (const Eviction& eviction : result.evictions) count += static_cast<int>(eviction.pods.size());
  return count;
}

TEST(Cycle, SusanBorrowsIdleGpusAndGivesThemBackWithinOneCycle) {
  SchedulerWorld world(uniform_cluster(1, 8), lab_queues());
  std::vector<WorkloadId> susan;
  for (int i = 0; i < 8; ++i) susan.push_back(world.submit(fmt::format("susan-{}", i), "susan", {}, i));
  CycleResult first = world.cycle(10);
  EXPECT_EQ(first.started.size(), 8u);
  EXPECT_EQ(world.gpus_of("susan"), 8);

  world.submit("joe-0", "joe", {}, 100);
  world.submit("joe-1", "joe", {}, 100);
  CycleResult second = world.cycle(200);
  EXPECT_EQ(world.gpus_of("joe"), 2);
  EXPECT_EQ(world.gpus_of("susan"), 6);
  ASSERT_EQ(second.evictions.size(), 2u);
  for (const Eviction& eviction : second.evictions) {
    EXPECT_EQ(eviction.action, Action::kReclaim);
    EXPECT_TRUE(eviction.whole_workload);
    EXPECT_FALSE(eviction.moved);
    // The youngest of Susan's jobs go first.
    EXPECT_TRUE(eviction.workload == susan[7] || eviction.workload == susan[6]) << eviction.workload;
  }
  // Susan's evicted jobs wait, saying why: her fair share is now 6.
  ASSERT_EQ(second.pending.size(), 2u);
  EXPECT_EQ(second.pending[0].reason.code, PendingCode::kEvicted);
  const std::string why = describe(second.pending[0].reason, world.tree());
  EXPECT_NE(why.find("evicted by reclaim to make room for 'joe-"), std::string::npos) << why;
  const QueueIndex lab_susan = *world.tree().find("susan");
  EXPECT_DOUBLE_EQ(second.shares.share(lab_susan, 0), 6);

  world.submit("jemma-0", "jemma", {}, 300);
  world.submit("jemma-1", "jemma", {}, 300);
  CycleResult third = world.cycle(400);
  EXPECT_EQ(world.gpus_of("jemma"), 2);
  EXPECT_EQ(world.gpus_of("joe"), 2);
  EXPECT_EQ(world.gpus_of("susan"), 4);
  EXPECT_EQ(evicted_pods(third), 2);
}

TEST(Cycle, ReclaimNeverPushesAVictimQueueBelowItsFairShare) {
  // Susan and Joe hold 4 each, their fair shares of the 8; Joe's fifth job would take from
  // Susan's share, so it waits.
  SchedulerWorld world(uniform_cluster(1, 8), lab_queues());
  for (int i = 0; i < 4; ++i) world.submit(fmt::format("susan-{}", i), "susan", {}, 0);
  for (int i = 0; i < 4; ++i) world.submit(fmt::format("joe-{}", i), "joe", {}, 0);
  world.cycle(10);
  ASSERT_EQ(world.gpus_of("susan"), 4);
  ASSERT_EQ(world.gpus_of("joe"), 4);
  const WorkloadId extra = world.submit("joe-4", "joe", {}, 20);
  CycleResult result = world.cycle(30);
  EXPECT_TRUE(result.evictions.empty());
  EXPECT_EQ(world.gpus_of("susan"), 4);
  ASSERT_EQ(result.pending.size(), 1u);
  EXPECT_EQ(result.pending[0].workload, extra);
  const std::string why = describe(result.pending[0].reason, world.tree());
  EXPECT_NE(why.find("no reclaim: queue 'joe' holds 4 gpu, at or above its fair share of 4 gpu"), std::string::npos)
      << why;
}

TEST(Cycle, NonPreemptibleWorkIsNeverEvictedAndUsesOnlyDeservedQuota) {
  SchedulerWorld world(uniform_cluster(1, 8), lab_queues());
  // Susan's notebooks are non-preemptible: only her 2 deserved GPUs may hold them.
  for (int i = 0; i < 3; ++i) world.submit(fmt::format("nb-{}", i), "susan", {.preemptible = false}, i);
  CycleResult first = world.cycle(10);
  EXPECT_EQ(world.gpus_of("susan"), 2);
  ASSERT_EQ(first.pending.size(), 1u);
  EXPECT_EQ(first.pending[0].reason.code, PendingCode::kNonPreemptibleQuota);
  const std::string why = describe(first.pending[0].reason, world.tree());
  EXPECT_NE(why.find("queue 'susan' has 2 gpu of its 2 gpu deserved"), std::string::npos) << why;

  // Joe fills the rest; Jemma then has nothing to reclaim from Susan's notebooks.
  for (int i = 0; i < 6; ++i) world.submit(fmt::format("joe-{}", i), "joe", {}, 20);
  world.cycle(30);
  EXPECT_EQ(world.gpus_of("joe"), 6);
  world.submit("jemma-0", "jemma", {.gpus_per_pod = 2}, 40);
  CycleResult third = world.cycle(50);
  EXPECT_EQ(world.gpus_of("jemma"), 2);  // taken from Joe, above his share
  EXPECT_EQ(world.gpus_of("susan"), 2);
  for (const Eviction& eviction : third.evictions) {
    EXPECT_TRUE(world.workloads()[eviction.workload].spec.preemptible);
  }
}

TEST(Cycle, QueueLimitsHoldEvenWhenTheClusterIsIdle) {
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("capped", "", 2, 1, 3), gpu_queue("other", "", 6)});
  for (int i = 0; i < 5; ++i) world.submit(fmt::format("job-{}", i), "capped", {}, i);
  CycleResult result = world.cycle(10);
  EXPECT_EQ(world.gpus_of("capped"), 3);
  ASSERT_EQ(result.pending.size(), 2u);
  EXPECT_EQ(result.pending[0].reason.code, PendingCode::kQueueLimit);
  const std::string why = describe(result.pending[0].reason, world.tree());
  EXPECT_NE(why.find("queue 'capped' is at its limit: it holds 3 gpu of a limit of 3"), std::string::npos) << why;
}

TEST(Cycle, AWorkloadThatCanNeverFitItsLimitTakesNoFairShare) {
  // 'capped' may never hold more than 4 GPUs: its 8-GPU job waits for good, and its demand must
  // not shrink the share of 'open', which can use the GPUs.
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("capped", "", 2, 1, 4), gpu_queue("open", "", 2)});
  world.submit("too-big", "capped", {.gpus_per_pod = 8}, 0);
  for (int i = 0; i < 8; ++i) world.submit(fmt::format("open-{}", i), "open", {}, 0);
  CycleResult result = world.cycle(1);
  EXPECT_DOUBLE_EQ(result.shares.share(*world.tree().find("open"), 0), 8);
  EXPECT_DOUBLE_EQ(result.shares.share(*world.tree().find("capped"), 0), 0);
  EXPECT_EQ(world.gpus_of("open"), 8);
  ASSERT_EQ(result.pending.size(), 1u);
  EXPECT_EQ(result.pending[0].reason.code, PendingCode::kQueueLimit);
}

TEST(Cycle, EqualWorkloadsSkippedAfterAFailedReclaimCarryItsFindings) {
  // Susan's jobs are too fresh to reclaim; Jemma's first job finds that out, her identical second
  // job is not searched again but says the same.
  std::vector<QueueSpec> queues = lab_queues();
  queues[0].reclaim_min_runtime_seconds = 1000;
  SchedulerWorld world(uniform_cluster(1, 8), queues);
  for (int i = 0; i < 8; ++i) world.submit(fmt::format("susan-{}", i), "susan", {}, 0);
  world.cycle(1);
  world.submit("jemma-0", "jemma", {}, 2);
  world.submit("jemma-1", "jemma", {}, 2);
  CycleResult result = world.cycle(3);
  EXPECT_EQ(result.actions[static_cast<int>(Action::kReclaim)].attempts, 1);
  ASSERT_EQ(result.pending.size(), 2u);
  for (const PendingWorkload& pending : result.pending) {
    EXPECT_TRUE(pending.reason.reclaim_tried) << describe(pending.reason, world.tree());
  }
}

TEST(Cycle, RecentUsageLowersTheOverQuotaShareOfAQueueThatHadMore) {
  // Two queues with nothing deserved split 8 GPUs evenly, unless one of them used more than its
  // share recently and time-based fairness is on.
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("heavy", "", 0), gpu_queue("light", "", 0)});
  for (int i = 0; i < 8; ++i) {
    world.submit(fmt::format("h{}", i), "heavy", {}, 0);
    world.submit(fmt::format("l{}", i), "light", {}, 0);
  }
  const QueueIndex heavy = *world.tree().find("heavy");
  const QueueIndex light = *world.tree().find("light");
  CycleResult even = world.cycle(1);
  EXPECT_DOUBLE_EQ(even.shares.share(heavy, 0), 4);
  std::vector<ResourceVector> usage(world.tree().size(), ResourceVector(3, 0.0));
  usage[heavy][0] = 8;  // it held all 8 GPUs lately, twice its share
  world.carried().recent_usage = usage;
  world.carried().usage_at = 2;
  CycleOptions options;
  options.fair_share.usage_penalty = 1;
  CycleResult penalised = world.cycle(2, options);
  EXPECT_LT(penalised.shares.share(heavy, 0), 4);
  EXPECT_GT(penalised.shares.share(light, 0), 4);
  EXPECT_DOUBLE_EQ(penalised.shares.share(heavy, 0) + penalised.shares.share(light, 0), 8);
}

// What a cycle leaves to the next (CarriedState): the remembered use fades with its half-life.
TEST(CycleCarriedState, RememberedUseFadesWithItsHalfLife) {
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("heavy", "", 0), gpu_queue("light", "", 0)});
  for (int i = 0; i < 6; ++i) world.submit(fmt::format("h{}", i), "heavy", {}, 0);
  const QueueIndex heavy = *world.tree().find("heavy");
  const QueueIndex light = *world.tree().find("light");
  CycleOptions options;
  options.fair_share.usage_penalty = 1;
  options.fair_share.usage_half_life_seconds = 100;
  world.cycle(0, options);
  // The first cycle remembers nothing yet, and keeps what each queue holds after it.
  ASSERT_EQ(world.carried().held.size(), world.tree().size());
  EXPECT_DOUBLE_EQ(resource_at(world.carried().held[heavy], 0), 6);
  EXPECT_DOUBLE_EQ(world.carried().usage_at, 0);
  // One half-life of holding 6 GPUs is remembered as 3; a second one as 4.5.
  world.cycle(100, options);
  EXPECT_DOUBLE_EQ(resource_at(world.carried().recent_usage[heavy], 0), 3);
  EXPECT_DOUBLE_EQ(resource_at(world.carried().recent_usage[light], 0), 0);
  world.cycle(200, options);
  EXPECT_DOUBLE_EQ(resource_at(world.carried().recent_usage[heavy], 0), 4.5);
  EXPECT_DOUBLE_EQ(world.carried().usage_at, 200);
}

TEST(CycleCarriedState, TimeBasedFairnessOffLeavesTheMemoryAlone) {
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("team", "", 8)});
  world.submit("job", "team", {}, 0);
  world.cycle(0);
  world.cycle(100);
  EXPECT_TRUE(world.carried().recent_usage.empty());
  EXPECT_TRUE(world.carried().held.empty());
}

TEST(CycleCarriedState, AQueueThatUsedMoreLatelyGetsLessOfWhatIsFree) {
  // Both ask for all 8 GPUs; "heavy" held all of them for three half-lives before (7 remembered).
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("heavy", "", 0), gpu_queue("light", "", 0)});
  CycleOptions options;
  options.fair_share.usage_penalty = 2;
  options.fair_share.usage_half_life_seconds = 100;
  std::vector<WorkloadId> early;
  for (int i = 0; i < 8; ++i) early.push_back(world.submit(fmt::format("early{}", i), "heavy", {}, 0));
  for (double now : {0.0, 100.0, 200.0}) world.cycle(now, options);
  for (WorkloadId id : early) world.workloads().finish(id, world.cluster());
  for (int i = 0; i < 8; ++i) {
    world.submit(fmt::format("h{}", i), "heavy", {}, 300);
    world.submit(fmt::format("l{}", i), "light", {}, 300);
  }
  CycleResult result = world.cycle(300, options);
  EXPECT_DOUBLE_EQ(resource_at(world.carried().recent_usage[*world.tree().find("heavy")], 0), 7);
  const QueueIndex heavy = *world.tree().find("heavy");
  const QueueIndex light = *world.tree().find("light");
  EXPECT_LT(result.shares.share(heavy, 0), 4);
  EXPECT_GT(result.shares.share(light, 0), 4);
  EXPECT_LT(world.gpus_of("heavy"), world.gpus_of("light"));
  EXPECT_EQ(world.gpus_of("heavy") + world.gpus_of("light"), 8);
}

TEST(CycleCarriedState, ARestartedSchedulerRebuildsTheRememberedUseFromWhatRuns) {
  SchedulerWorld world(uniform_cluster(2, 8),
                       {gpu_queue("org", "", 16), gpu_queue("a", "org", 8), gpu_queue("b", "org", 8)});
  world.submit("a-big", "a", {.pods = 4}, 0);
  world.submit("b-small", "b", {.pods = 2}, 0);
  world.cycle(0);
  world.submit("b-later", "b", {.pods = 2}, 50);
  world.cycle(50);
  world.submit("b-waiting", "b", {.pods = 20}, 60);  // pending: no use
  world.cycle(60);
  const std::vector<ResourceVector> usage =
      usage_of_running_work(world.workloads(), world.cluster(), world.tree(), world.meter(), 100, 100);
  const QueueIndex a = *world.tree().find("a");
  const QueueIndex b = *world.tree().find("b");
  const QueueIndex org = *world.tree().find("org");
  // 4 GPUs held for one half-life: 2; 2 for one half-life and 2 for half of one: 1 + 2 (1 - 2^-0.5).
  EXPECT_DOUBLE_EQ(resource_at(usage[a], 0), 2);
  EXPECT_NEAR(resource_at(usage[b], 0), 1 + 2 * (1 - std::exp2(-0.5)), 1e-12);
  EXPECT_NEAR(resource_at(usage[org], 0), resource_at(usage[a], 0) + resource_at(usage[b], 0), 1e-12);
  // Work that started just now is not remembered yet.
  EXPECT_DOUBLE_EQ(
      resource_at(usage_of_running_work(world.workloads(), world.cluster(), world.tree(), world.meter(), 0, 100)[a], 0),
      0);
}

TEST(Cycle, GangStartsWhole_OrNotAtAll_WithAReasonNamingThePod) {
  SchedulerWorld world(uniform_cluster(3, 8), {gpu_queue("team", "", 24)});
  const WorkloadId gang = world.submit("train", "team", {.pods = 4, .gpus_per_pod = 8}, 0);
  CycleResult result = world.cycle(1);
  EXPECT_EQ(world.bound(gang), 0);
  ASSERT_EQ(result.pending.size(), 1u);
  EXPECT_EQ(result.pending[0].reason.code, PendingCode::kUnschedulable);
  const std::string why = describe(result.pending[0].reason, world.tree());
  EXPECT_NE(why.find("pod 4 of a gang of 4 fits on no node (3 nodes: not enough idle GPUs"), std::string::npos) << why;
}

TEST(Cycle, ReclaimEvictsWholeGangsAndElasticExtrasFirst) {
  SchedulerWorld world(uniform_cluster(2, 4), {gpu_queue("a", "", 4), gpu_queue("b", "", 4)});
  // An elastic workload of a: 2 pods needed, 6 wanted; it takes the whole idle cluster.
  const WorkloadId elastic = world.submit("elastic", "a", {.pods = 8, .min_member = 2}, 0);
  world.cycle(1);
  ASSERT_EQ(world.bound(elastic), 8);
  // b claims its 4 deserved GPUs back: four extras go, the gang of 2 keeps running (and 2 more).
  world.submit("b-job", "b", {.gpus_per_pod = 4}, 2);
  CycleResult result = world.cycle(3);
  EXPECT_EQ(world.gpus_of("b"), 4);
  EXPECT_TRUE(world.running(elastic));
  EXPECT_EQ(world.bound(elastic), 4);
  for (const Eviction& eviction : result.evictions) EXPECT_FALSE(eviction.whole_workload);

  // A gang victim goes whole: c's gang of 2 pods on two nodes.
  SchedulerWorld gangs(uniform_cluster(2, 4), {gpu_queue("c", "", 0, 0), gpu_queue("d", "", 6)});
  const WorkloadId pair = gangs.submit("pair", "c", {.pods = 2, .gpus_per_pod = 4}, 0);
  gangs.cycle(1);
  ASSERT_TRUE(gangs.running(pair));
  gangs.submit("d-job", "d", {.gpus_per_pod = 4}, 2);
  CycleResult taken = gangs.cycle(3);
  EXPECT_EQ(gangs.bound(pair), 0);
  ASSERT_EQ(taken.evictions.size(), 1u);
  EXPECT_TRUE(taken.evictions[0].whole_workload);
  EXPECT_EQ(taken.evictions[0].pods.size(), 2u);
}

TEST(Cycle, MinimumRuntimeProtectsFreshWork) {
  std::vector<QueueSpec> queues = lab_queues();
  queues[0].reclaim_min_runtime_seconds = 600;  // set on the parent, inherited by the leaves
  SchedulerWorld world(uniform_cluster(1, 8), queues);
  for (int i = 0; i < 8; ++i) world.submit(fmt::format("susan-{}", i), "susan", {}, 0);
  world.cycle(0);
  world.submit("joe-0", "joe", {}, 100);
  CycleResult early = world.cycle(300);
  EXPECT_TRUE(early.evictions.empty());
  EXPECT_EQ(world.gpus_of("joe"), 0);
  CycleResult later = world.cycle(600);
  EXPECT_EQ(later.evictions.size(), 1u);
  EXPECT_EQ(world.gpus_of("joe"), 1);
}

TEST(Cycle, EvictionsAreBoundedByWhatThePendingWorkloadNeeds) {
  // The only victim holds 8 GPUs; a 1-GPU job may not evict it (8 > 2 x 1), a 4-GPU job may.
  SchedulerWorld world(uniform_cluster(1, 8), {gpu_queue("big", "", 0, 0), gpu_queue("small", "", 8)});
  const WorkloadId big = world.submit("big", "big", {.gpus_per_pod = 8}, 0);
  world.cycle(1);
  ASSERT_TRUE(world.running(big));
  world.submit("one", "small", {}, 2);
  CycleResult refused = world.cycle(3);
  EXPECT_TRUE(refused.evictions.empty());
  EXPECT_TRUE(world.running(big));
  world.submit("four", "small", {.gpus_per_pod = 4}, 4);
  CycleResult allowed = world.cycle(5);
  ASSERT_EQ(allowed.evictions.size(), 1u);
  EXPECT_EQ(allowed.evictions[0].gpu_milli, 8000);
  EXPECT_FALSE(world.running(big));
}

TEST(Cycle, PreemptionInsideAQueueTakesLowerPriorityOnly) {
  SchedulerWorld world(uniform_cluster(1, 4), {gpu_queue("team", "", 4)});
  const WorkloadId low = world.submit("low", "team", {.gpus_per_pod = 2, .priority = 1}, 0);
  const WorkloadId same = world.submit("same", "team", {.gpus_per_pod = 2, .priority = 5}, 0);
  world.cycle(1);
  ASSERT_TRUE(world.running(low) && world.running(same));
  const WorkloadId urgent = world.submit("urgent", "team", {.gpus_per_pod = 2, .priority = 5}, 2);
  CycleResult result = world.cycle(3);
  EXPECT_TRUE(world.running(urgent));
  EXPECT_FALSE(world.running(low));
  EXPECT_TRUE(world.running(same));
  ASSERT_EQ(result.evictions.size(), 1u);
  EXPECT_EQ(result.evictions[0].action, Action::kPreempt);
  // An equal-priority newcomer preempts nobody.
  world.submit("peer", "team", {.gpus_per_pod = 2, .priority = 5}, 4);
  CycleResult none = world.cycle(5);
  EXPECT_TRUE(none.evictions.empty());
}

TEST(Cycle, APodWaitingForLimitRoomPreemptsABurstingPodAndSaysWhyUntilThen) {
  SchedulerWorld world(uniform_cluster(1, 1), {gpu_queue("serving", "", 4)});
  // 20 GiB requests on an 80 GiB device: a 60 GiB limit leaves no limit room for a 40 GiB one.
  const WorkloadId low = world.submit(
      "low", "serving", {.gpus_per_pod = 0, .gpu_memory = 20 * kGiB, .gpu_memory_limit = 60 * kGiB, .priority = 1}, 0);
  world.cycle(1);
  ASSERT_TRUE(world.running(low));
  const WorkloadShape urgent_shape{
      .gpus_per_pod = 0, .gpu_memory = 20 * kGiB, .gpu_memory_limit = 40 * kGiB, .priority = 5};
  const WorkloadId peer = world.submit(
      "peer", "serving", {.gpus_per_pod = 0, .gpu_memory = 20 * kGiB, .gpu_memory_limit = 40 * kGiB, .priority = 1}, 2);
  CycleResult waiting = world.cycle(3);
  EXPECT_FALSE(world.running(peer));  // equal priority: nobody to preempt
  ASSERT_EQ(waiting.pending.size(), 1u);
  EXPECT_EQ(waiting.pending[0].reason.nodes.nodes_by_predicate[static_cast<size_t>(Predicate::kGpuMemoryLimit)], 1);
  const WorkloadId urgent = world.submit("urgent", "serving", urgent_shape, 4);
  CycleResult result = world.cycle(5);
  EXPECT_TRUE(world.running(urgent));
  EXPECT_FALSE(world.running(low));
  ASSERT_EQ(result.evictions.size(), 1u);
  EXPECT_EQ(result.evictions[0].action, Action::kPreempt);
}

// Two queues on two 80 GiB GPUs. 'chat' holds four pods of 20 GiB requests and 40 GiB limits:
// its requests are its fair share (1 GPU, its demand) but its limits fill the limit room of both
// devices (2 GPUs at overcommit 1). 'batch' asks for three such pods: room for the request, none
// for the limit. Counted in requests 'chat' may lose nothing; counted in limits it holds 1 GPU
// above its share of the limit room, so reclaim takes two of its pods, and no more.
TEST(Cycle, ReclaimForLimitRoomTakesFromAQueueOverItsShareOfLimitsAndStopsAtThatShare) {
  SchedulerWorld world(uniform_cluster(1, 2), {gpu_queue("chat", "", 1), gpu_queue("batch", "", 1)});
  const WorkloadShape server{.gpus_per_pod = 0, .gpu_memory = 20 * kGiB, .gpu_memory_limit = 40 * kGiB};
  std::vector<WorkloadId> chat;
  for (int i = 0; i < 4; ++i) chat.push_back(world.submit(fmt::format("chat-{}", i), "chat", server, i));
  world.cycle(10);
  for (WorkloadId id : chat) ASSERT_TRUE(world.running(id));

  std::vector<WorkloadId> batch;
  for (int i = 0; i < 3; ++i) batch.push_back(world.submit(fmt::format("batch-{}", i), "batch", server, 20 + i));
  int reclaimed = 0;
  for (int round = 0; round < 4; ++round) {
    const CycleResult result = world.cycle(100 + round * 100);
    for (const Eviction& eviction : result.evictions) {
      EXPECT_EQ(eviction.action, Action::kReclaim);
      EXPECT_NE(std::find(chat.begin(), chat.end(), eviction.workload), chat.end());
      ++reclaimed;
    }
  }
  EXPECT_EQ(reclaimed, 2);
  EXPECT_TRUE(world.running(batch[0]));
  EXPECT_TRUE(world.running(batch[1]));
  EXPECT_FALSE(world.running(batch[2]));  // 'chat' is at its share of the limit room
  int chat_running = 0;
  for (WorkloadId id : chat) chat_running += world.running(id) ? 1 : 0;
  EXPECT_EQ(chat_running, 2);
  EXPECT_TRUE(check_invariants(world.cluster()).empty());
}

// Counting limits never takes a queue below its share of the limit room: 'chat' holds 0.5 GPU of
// it (a 40 GiB limit) against a share of 0.25 (its demand), and its one pod would take all 0.5.
TEST(Cycle, ReclaimForLimitRoomNeverTakesAQueueBelowItsShareOfLimits) {
  SchedulerWorld world(uniform_cluster(1, 1), {gpu_queue("chat", "", 1), gpu_queue("batch", "", 1)});
  const WorkloadShape server{.gpus_per_pod = 0, .gpu_memory = 20 * kGiB, .gpu_memory_limit = 40 * kGiB};
  world.submit("chat-0", "chat", server, 0);
  world.cycle(10);
  const WorkloadId wide =
      world.submit("batch-0", "batch", {.gpus_per_pod = 0, .gpu_memory = 20 * kGiB, .gpu_memory_limit = 60 * kGiB}, 20);
  const CycleResult result = world.cycle(100);
  EXPECT_TRUE(result.evictions.empty());
  EXPECT_FALSE(world.running(wide));
}

TEST(Cycle, ConsolidationMovesScatteredWorkToFitAWholeNodeJob) {
  // Two 4-GPU nodes, each with 2 one-GPU jobs: 4 GPUs free but none whole on one node.
  auto cluster = uniform_cluster(2, 4);
  SchedulerWorld world(cluster, {gpu_queue("team", "", 8)}, "spread");
  std::vector<WorkloadId> small;
  for (int i = 0; i < 4; ++i) small.push_back(world.submit(fmt::format("s{}", i), "team", {}, 0));
  world.cycle(1);
  ASSERT_EQ(world.cluster().node_state(0).idle_devices(), 2);
  ASSERT_EQ(world.cluster().node_state(1).idle_devices(), 2);
  const WorkloadId whole = world.submit("whole", "team", {.gpus_per_pod = 4}, 2);
  CycleResult result = world.cycle(3);
  EXPECT_TRUE(world.running(whole));
  for (WorkloadId id : small) EXPECT_TRUE(world.running(id));
  ASSERT_EQ(result.evictions.size(), 2u);
  for (const Eviction& eviction : result.evictions) {
    EXPECT_EQ(eviction.action, Action::kConsolidate);
    EXPECT_TRUE(eviction.moved);
  }
}

// The sentence for a workload still pending after the cycle.
std::string pending_sentence(const SchedulerWorld& world, const CycleResult& result, WorkloadId id) {
  for (const PendingWorkload& pending : result.pending) {
    if (pending.workload == id) return describe(pending.reason, world.tree());
  }
  return "not pending";
}

std::set<NodeIndex> nodes_of(SchedulerWorld& world, WorkloadId id) {
  std::set<NodeIndex> nodes;
  for (PodId pod : world.workloads()[id].pods) {
    if (const auto& binding = world.cluster().binding(pod)) nodes.insert(binding->node);
  }
  return nodes;
}

TEST(Cycle, AGangThatWaitedReservesNodesThatDrainForIt_TimeLimitedWorkBackfills) {
  // Two 4-GPU nodes full of one-GPU notebooks that cannot be evicted or moved, each with a
  // one-hour time limit: a gang of 2 x 4 GPUs can only start once both nodes are empty.
  SchedulerWorld world(uniform_cluster(2, 4), {gpu_queue("team", "", 8)});
  const WorkloadShape notebook{.preemptible = false, .time_limit = 3600};
  std::vector<WorkloadId> notebooks;
  for (int i = 0; i < 8; ++i) notebooks.push_back(world.submit(fmt::format("nb{}", i), "team", notebook, 0));
  world.cycle(1);
  const WorkloadId gang = world.submit("gang", "team", {.pods = 2, .gpus_per_pod = 4}, 10);
  world.cycle(20);
  EXPECT_TRUE(world.reservations().empty()) << "it has not waited long enough";

  CycleResult result = world.cycle(400);
  ASSERT_EQ(world.reservations().size(), 1u);
  EXPECT_EQ(result.reservations_made, 1);
  const Reservation& reservation = world.reservations().front();
  EXPECT_EQ(reservation.workload, gang);
  EXPECT_EQ(reservation.nodes, (std::vector<NodeIndex>{0, 1}));
  EXPECT_DOUBLE_EQ(reservation.since, 400);
  EXPECT_DOUBLE_EQ(reservation.due, 3601) << "the notebooks started at 1 with a limit of 3600 s";
  EXPECT_NE(pending_sentence(world, result, gang).find("2 nodes reserved for it drain (held for 0 s)"),
            std::string::npos)
      << pending_sentence(world, result, gang);

  // One notebook ends on each node. A new one without a time limit may not take the freed room;
  // one that ends before the reservation is due backfills it.
  world.workloads().finish(
      *std::find_if(notebooks.begin(), notebooks.end(), [&](WorkloadId id) { return nodes_of(world, id).count(0); }),
      world.cluster());
  world.workloads().finish(
      *std::find_if(notebooks.begin(), notebooks.end(), [&](WorkloadId id) { return nodes_of(world, id).count(1); }),
      world.cluster());
  // (One-GPU workloads are too small to reserve, however long they wait.)
  const WorkloadId late = world.submit("late", "team", {.preemptible = false}, 410);
  const WorkloadId quick = world.submit("quick", "team", {.preemptible = false, .time_limit = 600}, 410);
  result = world.cycle(420);
  EXPECT_FALSE(world.running(late));
  EXPECT_EQ(pending_sentence(world, result, late),
            "fits on no node (2 nodes: reserved for a waiting workload); reclaim found no victims that free enough "
            "room without pushing their queues below fair share; no lower-priority preemptible work in its queue "
            "frees enough room");
  EXPECT_TRUE(world.running(quick)) << pending_sentence(world, result, quick);
  EXPECT_FALSE(world.running(gang));
  ASSERT_EQ(world.reservations().size(), 1u) << "the reservation stays while its nodes drain";

  // The nodes drain: the gang starts on them and the reservation ends.
  for (WorkloadId id : notebooks) {
    if (!world.workloads()[id].finished) world.workloads().finish(id, world.cluster());
  }
  world.workloads().finish(quick, world.cluster());
  result = world.cycle(500);
  EXPECT_TRUE(world.running(gang));
  EXPECT_FALSE(world.running(late)) << "the gang came first";
  EXPECT_TRUE(world.reservations().empty());
}

TEST(Cycle, NoBackfillWhereSomethingHasNoTimeLimit) {
  // As above, but one notebook on each node has no time limit: the reservation is never due, so
  // no time-limited workload can be known to leave in time, and none backfills.
  SchedulerWorld world(uniform_cluster(2, 4), {gpu_queue("team", "", 8)});
  std::vector<WorkloadId> notebooks;
  for (int i = 0; i < 8; ++i) {
    const WorkloadShape notebook{.preemptible = false, .time_limit = i < 6 ? 3600.0 : 0.0};
    notebooks.push_back(world.submit(fmt::format("nb{}", i), "team", notebook, 0));
  }
  world.cycle(1);
  world.submit("gang", "team", {.pods = 2, .gpus_per_pod = 4}, 10);
  world.cycle(400);
  ASSERT_EQ(world.reservations().size(), 1u);
  EXPECT_EQ(world.reservations().front().due, kNeverDue);
  world.workloads().finish(notebooks[0], world.cluster());
  const WorkloadId quick = world.submit("quick", "team", {.preemptible = false, .time_limit = 60}, 410);
  CycleResult result = world.cycle(420);
  EXPECT_FALSE(world.running(quick));
  EXPECT_NE(pending_sentence(world, result, quick).find("2 nodes: reserved for a waiting workload"), std::string::npos)
      << pending_sentence(world, result, quick);
}

TEST(Cycle, WithoutReservationsTheStreamKeepsTakingTheFreedRoom) {
  SchedulerWorld world(uniform_cluster(2, 4), {gpu_queue("team", "", 8)});
  CycleOptions options;
  options.reservations.enabled = false;
  std::vector<WorkloadId> notebooks;
  for (int i = 0; i < 8; ++i)
    notebooks.push_back(world.submit(fmt::format("nb{}", i), "team", {.preemptible = false}, 0));
  world.cycle(1, options);
  world.submit("gang", "team", {.pods = 2, .gpus_per_pod = 4}, 10);
  world.cycle(400, options);
  EXPECT_TRUE(world.reservations().empty());
  world.workloads().finish(notebooks[0], world.cluster());
  const WorkloadId late = world.submit("late", "team", {.preemptible = false}, 410);
  world.cycle(420, options);
  EXPECT_TRUE(world.running(late));
}

TEST(Cycle, OnlyAQueueWithinItsFairShareReserves) {
  // 'big' borrowed 6 of 8 GPUs before 'small' asked for 4 (fair shares: 4 and 4); its jobs are
  // still too young to reclaim. Both queues wait for a 4-GPU node: only 'small' reserves one.
  QueueSpec big = gpu_queue("big", "", 4);
  big.reclaim_min_runtime_seconds = 1e6;
  SchedulerWorld world(uniform_cluster(2, 4), {big, gpu_queue("small", "", 4)});
  for (int i = 0; i < 6; ++i) world.submit(fmt::format("b{}", i), "big", {}, 0);
  world.cycle(1);
  const WorkloadId small_gang = world.submit("small-gang", "small", {.gpus_per_pod = 4}, 2);
  const WorkloadId big_gang = world.submit("big-gang", "big", {.gpus_per_pod = 4}, 2);
  CycleOptions options;
  options.reservations.min_gpus = 4;
  world.cycle(1000, options);
  EXPECT_FALSE(world.running(small_gang));
  EXPECT_FALSE(world.running(big_gang));
  ASSERT_EQ(world.reservations().size(), 1u);
  EXPECT_EQ(world.reservations().front().workload, small_gang);
  EXPECT_EQ(world.reservations().front().nodes.size(), 1u);
}

TEST(QueueLedger, AReclaimMayNotLeaveTheQueueFurtherAboveItsShareThanItIsBelow) {
  // 'a' deserves 6 GPUs and takes no over-quota share (weight 0): its fair share is 6.
  auto tree = QueueTree::build({gpu_queue("a", "", 6, 0), gpu_queue("b", "", 10)}, ResourceNames::standard());
  ASSERT_TRUE(tree.ok());
  const ResourceId gpu = *tree->resources().find(kGpuResource);
  ResourceVector capacity(tree->resource_count(), 0.0);
  capacity[gpu] = 16;
  std::vector<QueueLoad> loads(tree->size());
  for (QueueLoad& load : loads) {
    load.demand.assign(tree->resource_count(), 0.0);
    load.allocated.assign(tree->resource_count(), 0.0);
  }
  const QueueIndex a = *tree->find("a");
  loads[a].demand[gpu] = 16;
  loads[*tree->find("b")].demand[gpu] = 16;
  auto shares = compute_fair_shares(*tree, capacity, loads);
  ASSERT_TRUE(shares.ok());
  ASSERT_DOUBLE_EQ(shares->share(a, gpu), 6);
  ResourceVector eight(tree->resource_count(), 0.0);
  eight[gpu] = 8;
  const std::vector<ResourceId> keys{gpu};
  // Holding nothing, an 8-GPU job leaves it 2 above its share, nearer than 6 below: allowed.
  QueueLedger empty(*tree, *shares, loads, {});
  EXPECT_FALSE(empty.reclaim_blocked(a, eight, keys).has_value());
  // Holding 4, the same job would leave it 6 above, further than 2 below: not allowed.
  loads[a].allocated[gpu] = 4;
  QueueLedger holding(*tree, *shares, loads, {});
  auto blocked = holding.reclaim_blocked(a, eight, keys);
  ASSERT_TRUE(blocked.has_value());
  EXPECT_DOUBLE_EQ(blocked->held, 4);
  EXPECT_DOUBLE_EQ(blocked->fair_share, 6);
  EXPECT_DOUBLE_EQ(blocked->requested, 8);
  PendingReason reason;
  reason.reclaim_blocked = blocked;
  EXPECT_NE(describe(reason, *tree)
                .find("no reclaim: queue 'a' holds 4 gpu of its fair share of 6 gpu, and this "
                      "workload's 8 gpu would leave it further above that share than it is "
                      "below it now"),
            std::string::npos)
      << describe(reason, *tree);
}

TEST(Cycle, ReclaimMovesWorkOfQueuesAtTheirShareToFreeAWholeNode) {
  // Two 4-GPU nodes, each running two 1-GPU jobs of 'b' (fair share 2, holding 4) and one of
  // 'c' (fair share 2, holding 2), one GPU free on each. 'a' (fair share 4, holding nothing)
  // needs a whole node. Evicting b's excess frees only 3 GPUs on a node: c's job is in the way,
  // and c is at its share, so it may be moved but not taken. Reclaim evicts two of b's jobs on
  // one node and moves c's job from that node to the other's free GPU.
  SchedulerWorld world(uniform_cluster(2, 4), {gpu_queue("a", "", 4), gpu_queue("b", "", 2), gpu_queue("c", "", 2)},
                       "spread");
  std::vector<WorkloadId> b, c;
  for (int i = 0; i < 4; ++i) b.push_back(world.submit(fmt::format("b{}", i), "b", {}, 0));
  for (int i = 0; i < 2; ++i) c.push_back(world.submit(fmt::format("c{}", i), "c", {}, 0));
  world.cycle(1);
  ASSERT_EQ(world.cluster().node_state(0).idle_devices(), 1);
  ASSERT_EQ(world.cluster().node_state(1).idle_devices(), 1);
  const WorkloadId whole = world.submit("a-whole", "a", {.gpus_per_pod = 4}, 2);
  CycleResult result = world.cycle(3);
  ASSERT_TRUE(world.running(whole)) << pending_sentence(world, result, whole);
  EXPECT_DOUBLE_EQ(world.gpus_of("a"), 4);
  EXPECT_DOUBLE_EQ(world.gpus_of("b"), 2);
  EXPECT_DOUBLE_EQ(world.gpus_of("c"), 2) << "c keeps its share: its job moved";
  int evicted = 0, moved = 0;
  for (const Eviction& eviction : result.evictions) {
    EXPECT_EQ(eviction.action, Action::kReclaim);
    EXPECT_EQ(eviction.beneficiary, whole);
    (eviction.moved ? moved : evicted) += 1;
    if (!eviction.moved) {
      EXPECT_EQ(world.workloads()[eviction.workload].spec.queue, "b");
    }
  }
  EXPECT_EQ(evicted, 2);
  EXPECT_EQ(moved, 1);
}

TEST(Cycle, QueuesAreServedByLowestDominantShareDownTheTree) {
  // One GPU left and two departments wanting it: the one further below its share goes first.
  SchedulerWorld world(uniform_cluster(1, 4), {gpu_queue("rich", "", 2), gpu_queue("poor", "", 2),
                                               gpu_queue("rich-p", "rich", 2), gpu_queue("poor-p", "poor", 2)});
  world.submit("r0", "rich-p", {.gpus_per_pod = 2}, 0);
  world.submit("p0", "poor-p", {}, 0);
  world.cycle(1);
  const WorkloadId rich_next = world.submit("r1", "rich-p", {}, 2);
  const WorkloadId poor_next = world.submit("p1", "poor-p", {}, 3);  // younger, yet served first
  world.cycle(4);
  EXPECT_TRUE(world.running(poor_next));
  EXPECT_FALSE(world.running(rich_next));
}

}  // namespace
}  // namespace tessera
