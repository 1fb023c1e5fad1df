// The timeline replay through the scheduling cycle, on scenarios small enough to work out by hand.
#include "sim/cycle_replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "sim/html_report.h"
#include "sim/json_report.h"
#include "sim/timeline_replay.h"
#include "test_cluster.h"
#include "text_checks.h"

namespace tessera {
namespace {

using nlohmann::json;
using testing::pod;
using testing::uniform_cluster;

QueueSpec leaf_queue(std::string name, double deserved_gpus) {
  QueueSpec queue;
  queue.name = std::move(name);
  queue.quota = {QueueQuota{deserved_gpus, 1, std::nullopt}};  // resource 0 is "gpu"
  return queue;
}

WorkloadSpec one_gpu_job(std::string name, std::string queue, double arrival, double duration,
                         double checkpoint_interval) {
  WorkloadSpec workload;
  workload.name = std::move(name);
  workload.queue = std::move(queue);
  workload.pods = {pod(workload.name, 1000, GpuRequest::whole(1))};
  workload.arrival_seconds = arrival;
  workload.duration_seconds = duration;
  workload.checkpoint_interval_seconds = checkpoint_interval;
  return workload;
}

// One node of 8 GPUs and three queues that each deserve 2 of them. Susan submits eight 2-hour
// one-GPU jobs at 0 s, Joe two 1-hour jobs at 2000 s, Jemma two at 4000 s. Every job saves a
// checkpoint every 10 minutes.
Scenario susan_joe_jemma(double checkpoint_interval = 600) {
  Scenario scenario;
  scenario.name = "susan-joe-jemma";
  scenario.cluster = uniform_cluster(1, 8);
  scenario.queues = {leaf_queue("susan", 2), leaf_queue("joe", 2), leaf_queue("jemma", 2)};
  for (int i = 0; i < 8; ++i) {
    scenario.workloads.push_back(one_gpu_job(fmt::format("susan-{}", i), "susan", 0, 7200, checkpoint_interval));
  }
  for (int i = 0; i < 2; ++i) {
    scenario.workloads.push_back(one_gpu_job(fmt::format("joe-{}", i), "joe", 2000, 3600, checkpoint_interval));
  }
  for (int i = 0; i < 2; ++i) {
    scenario.workloads.push_back(one_gpu_job(fmt::format("jemma-{}", i), "jemma", 4000, 3600, checkpoint_interval));
  }
  return scenario;
}

// The horizon ends the replay at Jemma's planned end, 7600 s; 77 samples put one every 100 s.
TimelineOptions hand_checked_options() {
  TimelineOptions options;
  options.horizon_seconds = 7600;
  options.samples = 77;
  options.check_invariants = true;
  return options;
}

const QueueResult& queue_named(const CycleReplayResult& cycle, const std::string& name) {
  for (const QueueResult& queue : cycle.queues) {
    if (queue.name == name) return queue;
  }
  ADD_FAILURE() << "no queue " << name;
  return cycle.queues.front();
}

// The queue's allocation in the sample at `time` (a multiple of the 100 s sample step).
double allocated_at(const QueueResult& queue, double time) {
  for (const QueuePoint& point : queue.series) {
    if (std::fabs(point.time_seconds - time) < 1e-6) return point.allocated_gpus;
  }
  ADD_FAILURE() << queue.name << " has no sample at " << time;
  return -1;
}

TEST(CheckpointedProgress, KeepsTheWorkUpToTheLastCheckpoint) {
  EXPECT_DOUBLE_EQ(checkpointed_progress(2000, 600), 1800);
  EXPECT_DOUBLE_EQ(checkpointed_progress(1799.5, 600), 1200);
  EXPECT_DOUBLE_EQ(checkpointed_progress(600, 600), 600);
  EXPECT_DOUBLE_EQ(checkpointed_progress(599, 600), 0);
  EXPECT_DOUBLE_EQ(checkpointed_progress(4000, 0), 0);  // no checkpoints: everything is lost
  EXPECT_DOUBLE_EQ(checkpointed_progress(0, 600), 0);
}

TEST(CycleReplay, SusanJoeJemmaGetTheirDeservedQuotaWithinOneCycle) {
  auto result = run_cycle_replay(susan_joe_jemma(), "tessera", hand_checked_options());
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_TRUE(result->cycle.has_value());
  const CycleReplayResult& cycle = *result->cycle;
  EXPECT_EQ(cycle.end_reason, "horizon");
  EXPECT_DOUBLE_EQ(cycle.end_seconds, 7600);
  EXPECT_EQ(cycle.cycles, 761);  // 0 s, 10 s, ..., 7600 s
  ASSERT_EQ(result->series.size(), 77U);
  const QueueResult& susan = queue_named(cycle, "susan");
  const QueueResult& joe = queue_named(cycle, "joe");
  const QueueResult& jemma = queue_named(cycle, "jemma");
  ASSERT_EQ(susan.series.size(), 77U);

  // Alone, Susan borrows the whole cluster.
  EXPECT_DOUBLE_EQ(allocated_at(susan, 0), 8);
  EXPECT_DOUBLE_EQ(allocated_at(susan, 1900), 8);
  // The cycle at Joe's arrival reclaims his deserved 2 GPUs from Susan.
  EXPECT_DOUBLE_EQ(allocated_at(joe, 2000), 2);
  EXPECT_DOUBLE_EQ(allocated_at(susan, 2000), 6);
  // And at Jemma's arrival: 2 / 2 / 4.
  EXPECT_DOUBLE_EQ(allocated_at(jemma, 4000), 2);
  EXPECT_DOUBLE_EQ(allocated_at(joe, 4000), 2);
  EXPECT_DOUBLE_EQ(allocated_at(susan, 4000), 4);
  // Joe's jobs end at 5600 s; Susan takes the room back in the same instant.
  EXPECT_DOUBLE_EQ(allocated_at(joe, 5600), 0);
  EXPECT_DOUBLE_EQ(allocated_at(susan, 5600), 6);
  EXPECT_DOUBLE_EQ(susan.series[20].fair_share_gpus, 6);
  EXPECT_DOUBLE_EQ(susan.series[40].fair_share_gpus, 4);
  EXPECT_DOUBLE_EQ(susan.series[40].deserved_gpus, 2);

  // Allocation always equals the fair share here: every change lands on a cycle.
  for (const QueueResult* queue : {&susan, &joe, &jemma}) EXPECT_NEAR(queue->fairness_gap_pct, 0, 1e-9);
  // Joe and Jemma were starved once each, from their arrival to the end of that same cycle.
  for (const QueueResult* queue : {&joe, &jemma}) {
    EXPECT_EQ(queue->starvation.episodes, 1) << queue->name;
    EXPECT_EQ(queue->starvation.resolved, 1) << queue->name;
    EXPECT_DOUBLE_EQ(queue->starvation.max_seconds, 0) << queue->name;
    EXPECT_DOUBLE_EQ(queue->starvation.max_cycles, 1) << queue->name;
  }
  // Susan too, at 0 s: her jobs arrived with nothing held, and the first cycle started them.
  EXPECT_EQ(susan.starvation.episodes, 1);
  EXPECT_DOUBLE_EQ(susan.starvation.max_seconds, 0);

  // Four of Susan's jobs were reclaimed: two at 2000 s (back to the 1800 s checkpoint: 200 s
  // lost each) and two at 4000 s (back to 3600 s: 400 s lost each), one GPU apiece.
  const ChurnSummary& churn = cycle.churn;
  ASSERT_EQ(churn.by_action.size(), 4U);
  const ActionChurn& reclaim = churn.by_action[2];
  EXPECT_EQ(reclaim.action, "reclaim");
  EXPECT_EQ(reclaim.whole_workloads, 4);
  EXPECT_EQ(reclaim.starts, 4);
  EXPECT_EQ(reclaim.moved, 0);
  EXPECT_DOUBLE_EQ(reclaim.evicted_gpus, 4);
  EXPECT_NEAR(reclaim.lost_gpu_hours, (2 * 200.0 + 2 * 400.0) / 3600, 1e-12);
  EXPECT_NEAR(churn.lost_gpu_hours, 1200.0 / 3600, 1e-12);
  EXPECT_NEAR(susan.lost_gpu_hours, 1200.0 / 3600, 1e-12);
  EXPECT_EQ(susan.evictions, 4);
  EXPECT_EQ(joe.evictions + jemma.evictions, 0);
  EXPECT_EQ(
      churn.by_action[0].whole_workloads + churn.by_action[1].whole_workloads + churn.by_action[3].whole_workloads, 0);
  EXPECT_EQ(result->scheduled, 12);
  EXPECT_NEAR(churn.per_1000_scheduled, 4000.0 / 12, 1e-9);
  EXPECT_DOUBLE_EQ(churn.max_evicted_to_needed, 1);  // one GPU evicted per one-GPU job placed

  // Nobody waited: each queue's first jobs started in the cycle of their arrival.
  EXPECT_DOUBLE_EQ(result->pending_seconds.max, 0);
  // Completed by 7600 s: Joe's and Jemma's (an hour each), and Susan's four never evicted.
  EXPECT_EQ(cycle.completed, 8);
  EXPECT_EQ(joe.completed, 2);
  EXPECT_EQ(jemma.completed, 2);
  EXPECT_EQ(susan.completed, 4);
  EXPECT_DOUBLE_EQ(joe.jct_seconds.max, 3600);
  EXPECT_DOUBLE_EQ(jemma.jct_seconds.p50, 3600);
  EXPECT_DOUBLE_EQ(susan.jct_seconds.max, 7200);
  EXPECT_DOUBLE_EQ(cycle.jct_seconds.max, 7200);
  // Susan's four restarted jobs are running or pending at the end, none of them waiting for
  // nothing: her queue holds its fair share.
  int64_t pending = 0;
  for (const auto& [code, count] : cycle.pending_by_code) pending += count;
  EXPECT_EQ(pending, static_cast<int64_t>(cycle.pending_examples.size()));
  for (const PendingExample& example : cycle.pending_examples) EXPECT_EQ(example.queue, "susan");
}

TEST(CycleReplay, WithoutCheckpointsAnEvictedJobStartsOver) {
  auto result = run_cycle_replay(susan_joe_jemma(/*checkpoint_interval=*/0), "tessera", hand_checked_options());
  ASSERT_TRUE(result.ok()) << result.error().message;
  // 2 jobs x 2000 s and 2 jobs x 4000 s of one GPU each.
  EXPECT_NEAR(result->cycle->churn.lost_gpu_hours, (2 * 2000.0 + 2 * 4000.0) / 3600, 1e-12);
}

TEST(CycleReplay, RunsToTheEndWithoutAHorizon) {
  TimelineOptions options;
  options.check_invariants = true;
  auto result = run_cycle_replay(susan_joe_jemma(), "tessera", options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const CycleReplayResult& cycle = *result->cycle;
  EXPECT_EQ(cycle.end_reason, "finished");
  EXPECT_EQ(cycle.completed, 12);
  EXPECT_EQ(result->never_scheduled, 0);
  EXPECT_TRUE(cycle.pending_by_code.empty());
  // Every job ran its full duration once, plus what evictions made it redo.
  const double work = 8 * 7200.0 + 4 * 3600.0;
  EXPECT_GE(cycle.end_seconds, 7600);
  EXPECT_GE(cycle.jct_seconds.max, 7200);
  EXPECT_LE(work / 8, cycle.end_seconds);
  // The replay's allocation series ends at its own end.
  EXPECT_DOUBLE_EQ(result->series.back().time_seconds, cycle.end_seconds);
  EXPECT_DOUBLE_EQ(cycle.queues.front().series.back().time_seconds, cycle.end_seconds);
}

TEST(CycleReplay, HorizonLeavesOutLaterArrivals) {
  TimelineOptions options;
  options.horizon_seconds = 3000;
  auto result = run_cycle_replay(susan_joe_jemma(), "tessera", options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const CycleReplayResult& cycle = *result->cycle;
  EXPECT_EQ(result->workloads, 10);  // Jemma arrives after the horizon
  EXPECT_EQ(cycle.end_reason, "horizon");
  EXPECT_DOUBLE_EQ(cycle.end_seconds, 3000);
  EXPECT_EQ(cycle.cycles, 301);
  EXPECT_EQ(cycle.completed, 0);
  EXPECT_EQ(queue_named(cycle, "jemma").workloads, 0);
  EXPECT_EQ(cycle.churn.whole_workloads, 2);
  // Susan's two evicted jobs wait for room at the end.
  EXPECT_EQ(cycle.pending_examples.size(), 2U);
  EXPECT_EQ(cycle.pending_by_code.size(), 1U);
}

TEST(CycleReplay, SkippingIdleCyclesChangesNothing) {
  TimelineOptions every = hand_checked_options();
  every.horizon_seconds = 0;
  every.skip_idle_cycles = false;
  TimelineOptions skipping = every;
  skipping.skip_idle_cycles = true;
  auto all = run_cycle_replay(susan_joe_jemma(), "tessera", every);
  auto some = run_cycle_replay(susan_joe_jemma(), "tessera", skipping);
  ASSERT_TRUE(all.ok() && some.ok());
  EXPECT_LT(some->cycle->cycles_run, all->cycle->cycles_run);
  // Every cycle ran, but for one at the very end when the last completion lands on a cycle time.
  EXPECT_GE(all->cycle->cycles_run, all->cycle->cycles - 1);
  auto comparable = [](TimelinePolicyResult result) {
    result.wall_seconds = 0;
    result.cycle->cycles_run = 0;
    result.cycle->cycle_wall_seconds = {};
    TimelineReport report;
    report.policies.push_back(std::move(result));
    return timeline_report_json(report).dump();
  };
  EXPECT_EQ(comparable(*all), comparable(*some));
}

TEST(CycleReplay, ATimeLimitEndsTheRun) {
  // One GPU; a job that would run 2 hours has a 1-hour limit, so it ends at 3600 s and the next
  // job starts then.
  Scenario scenario;
  scenario.name = "limited";
  scenario.cluster = uniform_cluster(1, 1);
  scenario.queues = {leaf_queue("team", 1)};
  WorkloadSpec limited = one_gpu_job("limited", "team", 0, 7200, 0);
  limited.time_limit_seconds = 3600;
  scenario.workloads = {limited, one_gpu_job("next", "team", 10, 100, 0)};
  auto result = run_cycle_replay(scenario, "tessera", TimelineOptions{});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->cycle->completed, 2);
  EXPECT_DOUBLE_EQ(result->pending_seconds.max, 3600 - 10);  // "next" waited for the limit
  EXPECT_DOUBLE_EQ(result->cycle->jct_seconds.max, 3600 - 10 + 100);
}

// Three GPUs and one queue whose rules stop notebooks idle for 30 minutes and requeue training
// after an hour. A notebook works 10 minutes and is left open; another loads data on the CPU for
// 20 minutes before it uses its GPU; a 90-minute training job saves every 10 minutes.
Scenario notebooks_and_training() {
  Scenario scenario;
  scenario.name = "limits";
  scenario.cluster = uniform_cluster(1, 3);
  QueueSpec lab = leaf_queue("lab", 3);
  WorkRules& interactive = lab.work_rules[static_cast<size_t>(WorkloadKind::kInteractive)];
  interactive.idle_limit_seconds = 1800;
  interactive.notice_seconds = 300;
  WorkRules& train = lab.work_rules[static_cast<size_t>(WorkloadKind::kTrain)];
  train.max_runtime_seconds = 3600;
  train.notice_seconds = 0;
  train.requeue_delay_seconds = 600;
  scenario.queues = {lab};
  WorkloadSpec notebook = one_gpu_job("notebook", "lab", 0, 36000, 0);
  notebook.kind = WorkloadKind::kInteractive;
  notebook.preemptible = false;
  notebook.utilisation = {UtilisationShape::kIdleAfter, 90, 600, 0, 0};
  WorkloadSpec warming = one_gpu_job("warming", "lab", 0, 7200, 0);
  warming.kind = WorkloadKind::kInteractive;
  warming.preemptible = false;
  warming.utilisation = {UtilisationShape::kWarmup, 90, 1200, 0, 0};
  scenario.workloads = {notebook, warming, one_gpu_job("train", "lab", 0, 5400, 600)};
  return scenario;
}

TEST(CycleReplay, LimitsStopAnIdleNotebookAndRequeueLongTrainingWhichResumes) {
  const Scenario scenario = notebooks_and_training();
  TimelineOptions options;
  options.check_invariants = true;
  auto on = run_cycle_replay(scenario, "tessera", options);
  ASSERT_TRUE(on.ok()) << on.error().message;
  const LimitSummary& limits = on->cycle->limits;
  EXPECT_TRUE(limits.enabled);
  EXPECT_EQ(limits.stopped, 1);
  EXPECT_EQ(limits.requeued, 1);
  EXPECT_EQ(limits.by_idle_limit, 1);
  EXPECT_EQ(limits.false_positives, 0);  // the notebook warming up on the CPU ran to its end
  EXPECT_EQ(on->cycle->completed, 2);
  // The training job ran 3600 s, waited out the 600 s delay, and finished its last 1800 s at 6000 s:
  // it kept all its work (its notice let it save). The warming notebook ran its 7200 s.
  EXPECT_DOUBLE_EQ(on->cycle->jct_seconds.mean, (6000.0 + 7200) / 2);
  EXPECT_DOUBLE_EQ(on->cycle->jct_seconds.max, 7200);
  ASSERT_GE(limits.examples.size(), 3u);
  bool stopped_said = false;
  for (const std::string& example : limits.examples) {
    stopped_said |= example.ends_with("notebook: idle for 30 min (limit 30 min, GPU utilisation under 5%): stopped");
  }
  EXPECT_TRUE(stopped_said) << limits.examples[0];

  options.work_limits = false;
  auto off = run_cycle_replay(scenario, "tessera", options);
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_FALSE(off->cycle->limits.enabled);
  EXPECT_EQ(off->cycle->limits.stopped, 0);
  // Idle: the notebook from 600 s to its end at 36000 s, the other for its 1200 s of warm-up.
  EXPECT_NEAR(off->cycle->limits.idle_gpu_hours, (35400.0 + 1200) / 3600, 1e-9);
  EXPECT_LT(limits.idle_gpu_hours, 2);
}

TEST(CycleReplay, RejectsBadInput) {
  Scenario scenario = susan_joe_jemma();
  TimelineOptions options;
  options.cycle_interval_seconds = 0;
  auto zero = run_cycle_replay(scenario, "tessera", options);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("cycle interval"), std::string::npos);
  std::vector<std::string> policies = {"tessera"};
  EXPECT_FALSE(run_timeline_experiment(scenario, policies, options).ok());

  options.cycle_interval_seconds = 10;
  scenario.workloads[0].queue = "nobody";
  auto unknown = run_cycle_replay(scenario, "tessera", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("'nobody'"), std::string::npos);
}

TEST(CycleReplay, TimelineExperimentDispatchesOnQueues) {
  std::vector<std::string> policies = {"tessera", "best-fit"};
  TimelineOptions options;
  options.samples = 50;
  auto with_queues = run_timeline_experiment(susan_joe_jemma(), policies, options);
  ASSERT_TRUE(with_queues.ok()) << with_queues.error().message;
  EXPECT_EQ(with_queues->replay, "cycle");
  EXPECT_DOUBLE_EQ(with_queues->cycle_interval_seconds, 10);
  ASSERT_EQ(with_queues->policies.size(), 2U);
  for (const TimelinePolicyResult& policy : with_queues->policies) {
    ASSERT_TRUE(policy.cycle.has_value());
    EXPECT_GE(with_queues->end_seconds, policy.cycle->end_seconds);
  }

  Scenario plain = susan_joe_jemma();
  plain.queues.clear();
  auto without = run_timeline_experiment(plain, policies, options);
  ASSERT_TRUE(without.ok()) << without.error().message;
  EXPECT_EQ(without->replay, "events");
  EXPECT_FALSE(without->policies[0].cycle.has_value());
}

// The estimates' accuracy is in the JSON, and without a wall-clock budget (the step cap alone)
// a replay gives the same figures run after run; without --estimates the field is null.
TEST(CycleReplay, JsonCarriesTheEstimatesAccuracyWhichRepeatsUnderAStepCap) {
  TimelineOptions options = hand_checked_options();
  const std::vector<std::string> policies = {"tessera"};
  // Two more of Susan's jobs arrive while her eight fill the node: they wait for room.
  Scenario scenario = susan_joe_jemma();
  for (int i = 0; i < 2; ++i)
    scenario.workloads.push_back(one_gpu_job(fmt::format("susan-late-{}", i), "susan", 100, 600, 600));
  const auto estimates_of = [&](TimelineOptions with) {
    auto report = run_timeline_experiment(scenario, policies, with);
    EXPECT_TRUE(report.ok()) << report.error().message;
    return report.ok() ? timeline_report_json(*report)["policies"][0]["estimates"] : json();
  };
  EXPECT_TRUE(estimates_of(options).is_null());
  options.start_estimates = true;
  options.estimates = {.max_steps = 3, .max_wall_seconds = std::numeric_limits<double>::infinity()};
  json first = estimates_of(options);
  json second = estimates_of(options);
  ASSERT_TRUE(first.is_object());
  EXPECT_GT(first["estimated"].get<int>(), 0) << first.dump(2);
  EXPECT_GT(first["compared"].get<int>(), 0) << first.dump(2);
  EXPECT_EQ(first["max_steps"], 3);
  EXPECT_TRUE(first["max_wall_seconds"].is_null());
  EXPECT_LE(first["steps"]["max"].get<double>(), 3);
  for (const char* key : {"p50", "p90", "max"}) EXPECT_TRUE(first["abs_error_seconds"].contains(key)) << key;
  first.erase("wall_seconds");
  second.erase("wall_seconds");
  EXPECT_EQ(first, second);
}

TEST(CycleReplay, JsonCarriesQueuesChurnAndReasons) {
  std::vector<std::string> policies = {"tessera"};
  TimelineOptions options = hand_checked_options();
  auto report = run_timeline_experiment(susan_joe_jemma(), policies, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const std::string text = timeline_report_json(*report).dump(2);
  EXPECT_FALSE(testing::has_non_finite_token(text));
  const json parsed = json::parse(text);
  EXPECT_EQ(parsed["schema"], kSimJsonSchema);
  EXPECT_EQ(parsed["replay"], "cycle");
  EXPECT_EQ(parsed["cycle_interval_seconds"], 10.0);
  const json& policy = parsed["policies"][0];
  for (const char* key : {"end_seconds", "end_reason", "cycles", "cycles_run", "cycle_wall_seconds", "completed",
                          "jct_seconds", "queues", "churn", "pending_reasons", "series", "pending_seconds"}) {
    EXPECT_TRUE(policy.contains(key)) << key;
  }
  ASSERT_EQ(policy["queues"].size(), 3U);
  std::set<std::string> names;
  for (const json& queue : policy["queues"]) {
    names.insert(queue["name"].get<std::string>());
    EXPECT_TRUE(queue["parent"].is_null());
    EXPECT_TRUE(queue["leaf"].get<bool>());
    EXPECT_EQ(queue["deserved_gpus"], 2.0);
    EXPECT_TRUE(queue["limit_gpus"].is_null());
    for (const char* key :
         {"time_seconds", "allocated_gpus", "fair_share_gpus", "deserved_gpus", "demand_gpus", "pending_workloads"}) {
      EXPECT_EQ(queue["series"][key].size(), policy["series"].size()) << key;
    }
    for (const char* key : {"fairness_gap_pct", "starvation", "evictions", "lost_gpu_hours", "wait_seconds",
                            "jct_seconds", "mean_allocated_gpus", "mean_fair_share_gpus"}) {
      EXPECT_TRUE(queue.contains(key)) << key;
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"susan", "joe", "jemma"}));
  const json& churn = policy["churn"];
  ASSERT_EQ(churn["by_action"].size(), 4U);
  EXPECT_EQ(churn["by_action"][2]["action"], "reclaim");
  EXPECT_EQ(churn["by_action"][2]["whole_workloads"], 4);
  EXPECT_EQ(churn["lost_gpu_hours"], 0.333);
  EXPECT_EQ(churn["max_evicted_to_needed"], 1.0);
  EXPECT_EQ(churn["worst_group"]["action"], "reclaim");
  EXPECT_TRUE(policy["pending_reasons"]["by_code"].is_object());
  EXPECT_TRUE(policy["pending_reasons"]["examples"].is_array());
}

TEST(CycleReplay, HtmlReportHasQueueChartsChurnAndReasons) {
  std::vector<std::string> policies = {"tessera", "first-fit"};
  TimelineOptions options = hand_checked_options();
  options.horizon_seconds = 3000;  // Susan's two reclaimed jobs are still pending at the end
  auto report = run_timeline_experiment(susan_joe_jemma(), policies, options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const std::string html = timeline_report_html(*report);
  EXPECT_FALSE(testing::has_non_finite_token(html));
  for (const char* text : {"Queues: allocation against fair share", "Evictions by action", "Why workloads are pending",
                           "susan: deserved 2.0 GPUs", "fairness<br>gap", "<td>reclaim</td>", "<td>susan</td>"}) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }
  // Per policy, one chart per queue (three), besides the timeline's own charts.
  EXPECT_EQ(testing::count_of(html, "<svg"), testing::count_of(html, "</svg>"));
  EXPECT_GE(testing::count_of(html, "<svg"), 2U * 3U + 3U);
}

}  // namespace
}  // namespace tessera
