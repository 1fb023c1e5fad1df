// The arrival and timeline replays on scenarios small enough to work out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/arrival_replay.h"
#include "sim/statistics.h"
#include "sim/timeline_replay.h"
#include "test_cluster.h"

namespace tessera {
namespace {

using testing::pod;
using testing::uniform_cluster;

WorkloadSpec workload(std::string name, PodSpec spec, int pods, double arrival, double duration) {
  WorkloadSpec w;
  w.name = std::move(name);
  w.pods.assign(static_cast<size_t>(pods), spec);
  w.min_member = pods;
  w.arrival_seconds = arrival;
  w.duration_seconds = duration;
  return w;
}

Scenario one_gpu_pods_on(int nodes, int gpus) {
  Scenario scenario;
  scenario.name = "test";
  scenario.cluster = uniform_cluster(nodes, gpus);
  scenario.workloads = {workload("a", pod("a", 1000, GpuRequest::whole(1)), 1, 0, -1)};
  return scenario;
}

TEST(ArrivalReplay, FillsThenFailsAndStopsAtTheTarget) {
  // 2 nodes x 4 GPUs, 1-GPU pods: 8 fit, then every arrival fails; 150% means 12 arrivals.
  Scenario scenario = one_gpu_pods_on(2, 4);
  ArrivalOptions options;
  options.target_pct = 150;
  options.seeds = {7};
  auto run = run_arrival_seed(scenario, "tessera", 7, options);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->pods_arrived, 12);
  EXPECT_EQ(run->pods_failed, 4);
  EXPECT_DOUBLE_EQ(run->alloc_at_100_pct, 100);
  EXPECT_DOUBLE_EQ(run->final_allocated_pct, 100);
  EXPECT_EQ(run->by_type.at("1 GPU").failed, 4);
  EXPECT_DOUBLE_EQ(run->curve.front().arrived_pct, 0);
  EXPECT_DOUBLE_EQ(run->curve.back().arrived_pct, 150);
}

TEST(ArrivalReplay, SameSeedSameResultAcrossRunsAndPolicyOrder) {
  Scenario scenario;
  scenario.name = "mixed";
  scenario.cluster = uniform_cluster(6, 8, 64000);
  scenario.workloads = {workload("share", pod("s", 4000, GpuRequest::portion(470)), 1, 0, -1),
                        workload("big", pod("b", 32000, GpuRequest::whole(4)), 1, 0, -1),
                        workload("one", pod("o", 8000, GpuRequest::whole(1)), 1, 0, -1),
                        workload("cpu", pod("c", 16000, GpuRequest::none()), 1, 0, -1)};
  ArrivalOptions options;
  options.seeds = {1, 2, 3};
  std::vector<std::string> forward = {"tessera", "fgd"};
  std::vector<std::string> backward = {"fgd", "tessera"};
  auto a = run_arrival_experiment(scenario, forward, options);
  auto b = run_arrival_experiment(scenario, backward, options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->policies[0].alloc_at_100_pct, b->policies[1].alloc_at_100_pct);
  EXPECT_EQ(a->policies[1].alloc_at_100_pct, b->policies[0].alloc_at_100_pct);
  ASSERT_EQ(a->policies[0].runs.size(), 3U);
  // Every policy sees the same arrivals for a seed.
  for (size_t s = 0; s < 3; ++s) EXPECT_EQ(a->policies[0].runs[s].pods_arrived, a->policies[1].runs[s].pods_arrived);
  // The mean curve is on a 1% grid from 0 to the target.
  EXPECT_EQ(a->policies[0].mean_curve.size(), 131U);
}

TEST(ArrivalReplay, RejectsBadOptions) {
  Scenario scenario = one_gpu_pods_on(1, 1);
  ArrivalOptions options;
  EXPECT_FALSE(run_arrival_experiment(scenario, std::vector<std::string>{}, options).ok());
  std::vector<std::string> unknown = {"nope"};
  auto result = run_arrival_experiment(scenario, unknown, options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("unknown policy 'nope'"), std::string::npos);
  scenario.cluster = uniform_cluster(1, 0);
  std::vector<std::string> policy = {"fgd"};
  auto no_gpus = run_arrival_experiment(scenario, policy, options);
  ASSERT_FALSE(no_gpus.ok());
  EXPECT_NE(no_gpus.error().message.find("has no GPUs"), std::string::npos);
}

TEST(TimelineReplay, GangWaitsForCapacityAndStartsWhenItFrees) {
  // One node of 8 GPUs. A 6-GPU job runs 0..100 s; a gang of two 2-GPU pods fits beside it
  // (8 GPUs) at 10 s; a gang of two 4-GPU pods arriving at 20 s must wait until both earlier
  // jobs are gone at 100 s and 110 s (it needs all 8 GPUs).
  Scenario scenario;
  scenario.name = "gang";
  scenario.cluster = uniform_cluster(1, 8);
  scenario.workloads = {workload("first", pod("f", 1000, GpuRequest::whole(6)), 1, 0, 100),
                        workload("small", pod("s", 1000, GpuRequest::whole(1)), 2, 10, 100),
                        workload("gang", pod("g", 1000, GpuRequest::whole(4)), 2, 20, 50)};
  TimelineOptions options;
  options.check_invariants = true;
  auto result = run_timeline_policy(scenario, "tessera", options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->workloads, 3);
  EXPECT_EQ(result->scheduled, 3);
  EXPECT_EQ(result->never_scheduled, 0);
  EXPECT_DOUBLE_EQ(result->pending_seconds.max, 90);  // 20 s -> 110 s
  EXPECT_DOUBLE_EQ(result->pending_seconds.p50, 0);
}

TEST(TimelineReplay, HorizonAndSpeedup) {
  Scenario scenario;
  scenario.name = "late";
  scenario.cluster = uniform_cluster(1, 1);
  scenario.workloads = {workload("a", pod("a", 1000, GpuRequest::whole(1)), 1, 0, 1000),
                        workload("b", pod("b", 1000, GpuRequest::whole(1)), 1, 100, 10),
                        workload("c", pod("c", 1000, GpuRequest::whole(1)), 1, 5000, 10)};
  TimelineOptions options;
  options.horizon_seconds = 2000;
  std::vector<std::string> policies = {"first-fit"};
  auto report = run_timeline_experiment(scenario, policies, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const TimelinePolicyResult& result = report->policies[0];
  EXPECT_EQ(result.workloads, 2);  // c arrives after the horizon
  EXPECT_EQ(result.scheduled, 2);  // b waits for a (100 s -> 1000 s)
  EXPECT_DOUBLE_EQ(result.pending_seconds.max, 900);
  EXPECT_DOUBLE_EQ(report->end_seconds, 2000);

  options.horizon_seconds = 0;
  options.arrival_speedup = 10;  // c now arrives at 500 s, while a still runs
  auto faster = run_timeline_experiment(scenario, policies, options);
  ASSERT_TRUE(faster.ok());
  EXPECT_EQ(faster->policies[0].workloads, 3);
  EXPECT_DOUBLE_EQ(faster->policies[0].pending_seconds.max, 990);  // b: 10 s -> 1000 s
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Statistics, MeanStddevMedianQuantiles) {
  EXPECT_DOUBLE_EQ(mean({}), 0);
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 6}), 3);
  EXPECT_DOUBLE_EQ(stddev({5}), 0);
  EXPECT_DOUBLE_EQ(stddev({2, 4, 4, 4, 5, 5, 7, 9}), std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  Quantiles q = quantiles(hundred);
  EXPECT_DOUBLE_EQ(q.p50, 50);
  EXPECT_DOUBLE_EQ(q.p90, 90);
  EXPECT_DOUBLE_EQ(q.p99, 99);
  EXPECT_DOUBLE_EQ(q.max, 100);
  EXPECT_DOUBLE_EQ(q.mean, 50.5);
}

}  // namespace
}  // namespace tessera
