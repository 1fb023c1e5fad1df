// Time limits and idle-GPU limits (docs/design.md §6): the rules a workload gets from its queue
// path, the idle time it accrues, and the verdicts, checked by hand minute by minute.
#include "scheduler/work_limits.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "scheduler/cycle.h"
#include "scheduler/limit_ledger.h"
#include "scheduler_world.h"

namespace tessera {
namespace {

constexpr double kLimitMinute = 60;
constexpr double kLimitHour = 3600;
constexpr auto kTrainKind = static_cast<size_t>(WorkloadKind::kTrain);
constexpr auto kInteractiveKind = static_cast<size_t>(WorkloadKind::kInteractive);

QueueSpec rules_queue(std::string name, std::string parent) {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  return spec;
}

// research (notebooks: idle 1 h, stop; training: 24 h, requeue) > vision (notebooks: notice 10 min)
//                                                                > nlp (training: 12 h)
QueueTree research_tree() {
  QueueSpec research = rules_queue("research", "");
  research.work_rules[kInteractiveKind].idle_limit_seconds = kLimitHour;
  research.work_rules[kInteractiveKind].max_runtime_seconds = 12 * kLimitHour;
  research.work_rules[kTrainKind].max_runtime_seconds = 24 * kLimitHour;
  research.work_rules[kTrainKind].requeue_delay_seconds = 2 * kLimitMinute;
  QueueSpec vision = rules_queue("vision", "research");
  vision.work_rules[kInteractiveKind].notice_seconds = 10 * kLimitMinute;
  vision.work_rules[kInteractiveKind].warmup_grace_seconds = 30 * kLimitMinute;
  QueueSpec nlp = rules_queue("nlp", "research");
  nlp.work_rules[kTrainKind].max_runtime_seconds = 12 * kLimitHour;
  auto tree = QueueTree::build({research, vision, nlp}, ResourceNames::standard());
  EXPECT_TRUE(tree) << tree.error().message;
  return std::move(*tree);
}

WorkloadSpec of_kind(WorkloadKind kind) {
  WorkloadSpec spec;
  spec.name = "w";
  spec.kind = kind;
  return spec;
}

WorkLimits notebook_limits() {
  WorkLimits limits;
  limits.idle_limit_seconds = kLimitHour;
  limits.on_expiry = ExpiryAction::kStop;
  limits.notice_seconds = 5 * kLimitMinute;
  limits.idle_threshold_pct = 5;
  return limits;
}

TEST(WorkLimits, EachFieldComesFromTheNearestQueueThatSetsItForTheWorkloadsKind) {
  const QueueTree tree = research_tree();
  const WorkLimits notebook = resolve_limits(tree, *tree.find("vision"), of_kind(WorkloadKind::kInteractive));
  EXPECT_EQ(notebook.idle_limit_seconds, kLimitHour);           // research's
  EXPECT_EQ(notebook.max_runtime_seconds, 12 * kLimitHour);     // research's
  EXPECT_EQ(notebook.notice_seconds, 10 * kLimitMinute);        // vision's own
  EXPECT_EQ(notebook.warmup_grace_seconds, 30 * kLimitMinute);  // vision's own
  EXPECT_EQ(notebook.on_expiry, ExpiryAction::kStop);           // interactive's default
  EXPECT_EQ(notebook.idle_threshold_pct, kDefaultIdleThresholdPct);

  const WorkLimits nlp_train = resolve_limits(tree, *tree.find("nlp"), of_kind(WorkloadKind::kTrain));
  EXPECT_EQ(nlp_train.max_runtime_seconds, 12 * kLimitHour);  // nlp overrides research's 24 h
  EXPECT_EQ(nlp_train.idle_limit_seconds, 0);                 // no idle limit for training anywhere
  EXPECT_EQ(nlp_train.requeue_delay_seconds, 2 * kLimitMinute);
  EXPECT_EQ(nlp_train.on_expiry, ExpiryAction::kRequeue);
  EXPECT_EQ(resolve_limits(tree, *tree.find("vision"), of_kind(WorkloadKind::kTrain)).max_runtime_seconds,
            24 * kLimitHour);

  // Rules set for one kind do not reach another: no queue sets any for inference.
  const WorkLimits service = resolve_limits(tree, *tree.find("nlp"), of_kind(WorkloadKind::kInference));
  EXPECT_FALSE(service.any());
  EXPECT_EQ(service.on_expiry, ExpiryAction::kPreemptible);
}

TEST(WorkLimits, AWorkloadMayAskForShorterLimitsButALongerOneIsClampedAndSaysSo) {
  const QueueTree tree = research_tree();
  WorkloadSpec shorter = of_kind(WorkloadKind::kInteractive);
  shorter.idle_limit_seconds = 20 * kLimitMinute;
  const WorkLimits asked = resolve_limits(tree, *tree.find("vision"), shorter);
  EXPECT_EQ(asked.idle_limit_seconds, 20 * kLimitMinute);
  EXPECT_TRUE(asked.clamped.empty());

  WorkloadSpec longer = of_kind(WorkloadKind::kTrain);
  longer.max_runtime_seconds = 48 * kLimitHour;
  const WorkLimits clamped = resolve_limits(tree, *tree.find("nlp"), longer);
  EXPECT_EQ(clamped.max_runtime_seconds, 12 * kLimitHour);
  ASSERT_EQ(clamped.clamped.size(), 1u);
  EXPECT_EQ(clamped.clamped[0], "asked for a maximum runtime of 48 h; its queue allows 12 h, so 12 h applies");

  // Where the queue sets no limit, the workload's own applies as asked.
  WorkloadSpec own = of_kind(WorkloadKind::kTrain);
  own.idle_limit_seconds = 2 * kLimitHour;
  EXPECT_EQ(resolve_limits(tree, *tree.find("nlp"), own).idle_limit_seconds, 2 * kLimitHour);
}

TEST(WorkLimits, IdleTimeAccruesWhileEveryGpuStaysUnderTheThresholdAndActivityResetsIt) {
  const WorkLimits limits = notebook_limits();
  LimitClock clock;
  double now = 0;
  auto read = [&](std::optional<double> utilisation) {
    now += kLimitMinute;
    clock = accrue_idle(accrue_run(clock, kLimitMinute), utilisation, now, limits);
  };
  read(80);  // the first read only starts the clock
  EXPECT_EQ(clock.idle_seconds, 0);
  read(3);
  read(4.9);
  EXPECT_EQ(clock.idle_seconds, 2 * kLimitMinute);
  read(5);  // at the threshold is activity
  EXPECT_EQ(clock.idle_seconds, 0);
  read(0);
  read(0);
  read(0);
  EXPECT_EQ(clock.idle_seconds, 3 * kLimitMinute);
  EXPECT_EQ(clock.run_seconds, 7 * kLimitMinute);
}

TEST(WorkLimits, WithoutTelemetryIdleTimeNeitherAccruesNorResets) {
  const WorkLimits limits = notebook_limits();
  LimitClock clock;
  clock = accrue_idle(clock, 0, 0, limits);
  clock = accrue_idle(accrue_run(clock, 10 * kLimitMinute), 0, 10 * kLimitMinute, limits);
  EXPECT_EQ(clock.idle_seconds, 10 * kLimitMinute);
  // Prometheus down.
  clock = accrue_idle(accrue_run(clock, 10 * kLimitMinute), std::nullopt, 20 * kLimitMinute, limits);
  clock = accrue_idle(accrue_run(clock, 10 * kLimitMinute), std::nullopt, 30 * kLimitMinute, limits);
  EXPECT_EQ(clock.idle_seconds, 10 * kLimitMinute);
  EXPECT_FALSE(clock.telemetry);
  // Back: the time it was away is not counted as idle.
  clock = accrue_idle(accrue_run(clock, kLimitMinute), 0, 31 * kLimitMinute, limits);
  EXPECT_EQ(clock.idle_seconds, 11 * kLimitMinute);
  EXPECT_TRUE(clock.telemetry);
}

TEST(WorkLimits, AWorkloadWarmingUpOnCpuAccruesNoIdleTimeDuringItsGrace) {
  WorkLimits limits = notebook_limits();
  limits.warmup_grace_seconds = 30 * kLimitMinute;
  LimitClock clock;
  // 20 minutes of loading data on the CPU, its GPU at 0%.
  for (int minute = 1; minute <= 20; ++minute)
    clock = accrue_idle(accrue_run(clock, kLimitMinute), 0, minute * kLimitMinute, limits);
  EXPECT_EQ(clock.idle_seconds, 0);
  EXPECT_EQ(judge_limits(limits, clock, 20 * kLimitMinute).step, LimitStep::kNone);
  // Still idle past the grace: only the time after the grace counts.
  for (int minute = 21; minute <= 40; ++minute)
    clock = accrue_idle(accrue_run(clock, kLimitMinute), 0, minute * kLimitMinute, limits);
  EXPECT_EQ(clock.idle_seconds, 10 * kLimitMinute);
}

TEST(WorkLimits, AnIdleNotebookIsToldFiveMinutesAheadThenStopped) {
  const WorkLimits limits = notebook_limits();
  LimitClock clock;
  clock.idle_seconds = 54 * kLimitMinute;
  EXPECT_EQ(judge_limits(limits, clock, 100).step, LimitStep::kNone);

  clock.idle_seconds = 55 * kLimitMinute;
  const LimitVerdict notice = judge_limits(limits, clock, 1000);
  ASSERT_EQ(notice.step, LimitStep::kNotice);
  EXPECT_EQ(notice.rule, LimitRule::kIdle);
  EXPECT_EQ(notice.time_left_seconds, 5 * kLimitMinute);
  EXPECT_EQ(describe_verdict(notice, limits),
            "idle for 55 min (limit 60 min, GPU utilisation under 5%): stops in 5 min unless its GPUs are used");
  clock = after_verdict(clock, notice, 1000);
  ASSERT_TRUE(clock.notice_at);

  // Three minutes on: the notice stands, two minutes left.
  clock.idle_seconds = 58 * kLimitMinute;
  const LimitVerdict waiting = judge_limits(limits, clock, 1000 + 3 * kLimitMinute);
  EXPECT_EQ(waiting.step, LimitStep::kNone);
  EXPECT_EQ(waiting.time_left_seconds, 2 * kLimitMinute);

  clock.idle_seconds = 62 * kLimitMinute;
  const LimitVerdict stop = judge_limits(limits, clock, 1000 + 7 * kLimitMinute);
  ASSERT_EQ(stop.step, LimitStep::kExpire);
  EXPECT_EQ(stop.action, ExpiryAction::kStop);
  EXPECT_EQ(describe_verdict(stop, limits), "idle for 62 min (limit 60 min, GPU utilisation under 5%): stopped");
}

TEST(WorkLimits, UsingTheGpusAgainWithdrawsAnIdleNotice) {
  const WorkLimits limits = notebook_limits();
  LimitClock clock;
  clock.idle_seconds = 57 * kLimitMinute;
  clock = after_verdict(clock, judge_limits(limits, clock, 0), 0);
  ASSERT_TRUE(clock.notice_at);
  clock = accrue_idle(clock, 90, kLimitMinute, limits);
  const LimitVerdict withdrawn = judge_limits(limits, clock, kLimitMinute);
  ASSERT_EQ(withdrawn.step, LimitStep::kWithdraw);
  EXPECT_EQ(describe_verdict(withdrawn, limits),
            "its GPUs are in use again (utilisation at or above 5%): the idle notice is withdrawn");
  clock = after_verdict(clock, withdrawn, kLimitMinute);
  EXPECT_FALSE(clock.notice_at);
}

TEST(WorkLimits, ALimitReachedWithoutANoticeStillGetsTheWholeNoticePeriod) {
  // A queue lowered its limit (or the scheduler was away): the workload is already past it.
  const WorkLimits limits = notebook_limits();
  LimitClock clock;
  clock.idle_seconds = 3 * kLimitHour;
  const LimitVerdict notice = judge_limits(limits, clock, 0);
  ASSERT_EQ(notice.step, LimitStep::kNotice);
  EXPECT_EQ(notice.time_left_seconds, 5 * kLimitMinute);
  clock = after_verdict(clock, notice, 0);
  EXPECT_EQ(judge_limits(limits, clock, 4 * kLimitMinute).step, LimitStep::kNone);
  EXPECT_EQ(judge_limits(limits, clock, 5 * kLimitMinute).step, LimitStep::kExpire);
}

TEST(WorkLimits, WithoutANoticePeriodALimitActsAtOnce) {
  WorkLimits limits = notebook_limits();
  limits.notice_seconds = 0;
  LimitClock clock;
  clock.idle_seconds = kLimitHour - 1;
  EXPECT_EQ(judge_limits(limits, clock, 0).step, LimitStep::kNone);
  clock.idle_seconds = kLimitHour;
  EXPECT_EQ(judge_limits(limits, clock, 0).step, LimitStep::kExpire);
}

TEST(WorkLimits, ATrainJobOverItsMaximumRuntimeIsRequeuedAndStartsAFreshRunKeepingItsTotal) {
  WorkLimits limits;
  limits.max_runtime_seconds = 2 * kLimitHour;
  limits.on_expiry = ExpiryAction::kRequeue;
  limits.notice_seconds = 10 * kLimitMinute;
  limits.requeue_delay_seconds = kLimitMinute;
  LimitClock clock = accrue_run({}, 110 * kLimitMinute);
  const LimitVerdict notice = judge_limits(limits, clock, 110 * kLimitMinute);
  ASSERT_EQ(notice.step, LimitStep::kNotice);
  EXPECT_EQ(describe_verdict(notice, limits), "ran for 110 min (limit 2 h): requeued in 10 min");
  clock = after_verdict(accrue_run(clock, 0), notice, 110 * kLimitMinute);
  clock = accrue_run(clock, 10 * kLimitMinute);
  const LimitVerdict requeue = judge_limits(limits, clock, 120 * kLimitMinute);
  ASSERT_EQ(requeue.step, LimitStep::kExpire);
  EXPECT_EQ(requeue.action, ExpiryAction::kRequeue);
  EXPECT_EQ(describe_verdict(requeue, limits), "ran for 2 h (limit 2 h): requeued, back in its queue after 1 min");
  clock = after_verdict(clock, requeue, 120 * kLimitMinute);
  EXPECT_EQ(clock.run_seconds, 0);
  EXPECT_EQ(clock.total_run_seconds, 2 * kLimitHour);
  EXPECT_EQ(clock.requeues, 1);
  EXPECT_FALSE(clock.notice_at);
  // Its next run is counted afresh against the limit; the total keeps growing.
  clock = accrue_run(clock, kLimitHour);
  EXPECT_EQ(judge_limits(limits, clock, 0).step, LimitStep::kNone);
  EXPECT_EQ(clock.total_run_seconds, 3 * kLimitHour);
}

TEST(WorkLimits, AServiceOverItsLimitBecomesPreemptibleOnceAndStaysSo) {
  WorkLimits limits;
  limits.max_runtime_seconds = kLimitHour;
  limits.on_expiry = ExpiryAction::kPreemptible;
  limits.notice_seconds = 0;
  LimitClock clock = accrue_run({}, kLimitHour);
  const LimitVerdict verdict = judge_limits(limits, clock, kLimitHour);
  ASSERT_EQ(verdict.step, LimitStep::kExpire);
  EXPECT_EQ(describe_verdict(verdict, limits), "ran for 60 min (limit 60 min): now preemptible");
  clock = after_verdict(clock, verdict, kLimitHour);
  EXPECT_TRUE(clock.made_preemptible);
  EXPECT_EQ(judge_limits(limits, accrue_run(clock, kLimitHour), 2 * kLimitHour).step, LimitStep::kNone);
}

TEST(WorkLimits, TheLimitClosestToExpiryDecides) {
  WorkLimits limits = notebook_limits();
  limits.max_runtime_seconds = 8 * kLimitHour;
  LimitClock clock = accrue_run({}, 7 * kLimitHour + 57 * kLimitMinute);
  clock.idle_seconds = 30 * kLimitMinute;
  const LimitVerdict verdict = judge_limits(limits, clock, 0);
  EXPECT_EQ(verdict.step, LimitStep::kNotice);
  EXPECT_EQ(verdict.rule, LimitRule::kMaxRuntime);
  EXPECT_EQ(describe_verdict(verdict, limits), "ran for 7 h 57 min (limit 8 h): stops in 5 min");
}

TEST(WorkLimits, ReadableSecondsUseWholeUnits) {
  EXPECT_EQ(readable_seconds(45), "45 s");
  EXPECT_EQ(readable_seconds(62 * kLimitMinute + 20), "62 min");
  EXPECT_EQ(readable_seconds(kLimitHour), "60 min");
  EXPECT_EQ(readable_seconds(2 * kLimitHour), "2 h");
  EXPECT_EQ(readable_seconds(2 * kLimitHour + 5 * kLimitMinute), "2 h 5 min");
  EXPECT_EQ(readable_seconds(-3), "0 s");
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

using testing::gpu_queue;
using testing::SchedulerWorld;
using testing::uniform_cluster;

TEST(LimitLedger, AnIdleNotebookIsStoppedAndATrainJobOverItsRuntimeIsRequeuedThenRunsAgainAfterTheDelay) {
  QueueSpec lab = gpu_queue("lab", "", 2);
  WorkRules& notebooks = lab.work_rules[static_cast<size_t>(WorkloadKind::kInteractive)];
  notebooks.idle_limit_seconds = 10 * kLimitMinute;
  notebooks.notice_seconds = 2 * kLimitMinute;
  WorkRules& training = lab.work_rules[static_cast<size_t>(WorkloadKind::kTrain)];
  training.max_runtime_seconds = 30 * kLimitMinute;
  training.notice_seconds = 0;
  training.requeue_delay_seconds = 5 * kLimitMinute;
  SchedulerWorld world(uniform_cluster(1, 2), {lab});
  const WorkloadId notebook = world.submit("notebook", "lab", {});
  world.workloads()[notebook].spec.kind = WorkloadKind::kInteractive;
  const WorkloadId train = world.submit("train", "lab", {});
  world.cycle(0);
  ASSERT_TRUE(world.running(notebook) && world.running(train));

  LimitLedger ledger;
  // The notebook's GPU is idle from the start; the training job's busy.
  const UtilisationReader read = [&](WorkloadId id, double) { return std::optional<double>(id == notebook ? 0 : 95); };
  std::vector<std::pair<double, std::string>> said;
  double stopped_at = -1;
  double requeued_at = -1;
  double restarted_at = -1;
  for (double now = kLimitMinute; now <= 40 * kLimitMinute; now += kLimitMinute) {
    for (const LimitOutcome& outcome : ledger.review(world.workloads(), world.cluster(), world.tree(), now, read)) {
      said.emplace_back(now, world.workloads()[outcome.workload].spec.name + ": " + outcome.message);
      if (outcome.verdict.step != LimitStep::kExpire) continue;
      if (outcome.verdict.action == ExpiryAction::kStop) {
        world.workloads().finish(outcome.workload, world.cluster());
        stopped_at = now;
      } else if (outcome.verdict.action == ExpiryAction::kRequeue) {
        for (PodId pod : world.workloads()[outcome.workload].pods) world.cluster().unbind(pod);
        world.workloads()[outcome.workload].held_until = *ledger.held_until("train");
        requeued_at = now;
      }
    }
    const bool was_running = world.running(train);
    world.cycle(now);
    if (!was_running && world.running(train) && restarted_at < 0) restarted_at = now;
  }
  // Idle accrues from the second read (1 min): 8 min idle at 9 min brings the notice, the stop
  // comes two minutes later with 10 min idle.
  ASSERT_GE(said.size(), 3u);
  EXPECT_EQ(said[0], std::make_pair(9 * kLimitMinute,
                                    std::string("notebook: idle for 8 min (limit 10 min, GPU utilisation under 5%): "
                                                "stops in 2 min unless its GPUs are used")));
  EXPECT_EQ(said[1], std::make_pair(11 * kLimitMinute,
                                    std::string("notebook: idle for 10 min (limit 10 min, GPU utilisation under 5%): "
                                                "stopped")));
  EXPECT_EQ(said[2], std::make_pair(30 * kLimitMinute, std::string("train: ran for 30 min (limit 30 min): requeued, "
                                                                   "back in its queue after 5 min")));
  EXPECT_EQ(stopped_at, 11 * kLimitMinute);
  EXPECT_EQ(requeued_at, 30 * kLimitMinute);
  // Held for the delay though a GPU is free all along, then back.
  EXPECT_EQ(restarted_at, 35 * kLimitMinute);
  const LimitClock* clock = ledger.clock("train");
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(clock->requeues, 1);
  EXPECT_EQ(clock->total_run_seconds, 30 * kLimitMinute + 5 * kLimitMinute);
  EXPECT_EQ(clock->run_seconds, 5 * kLimitMinute);
  EXPECT_EQ(ledger.clock("notebook"), nullptr);  // gone with the workload
}

TEST(LimitLedger, WorkOnItsWayOutGetsNoFurtherVerdictsAndARequeuedWorkloadKeepsItsHoldWhileGone) {
  QueueSpec lab = gpu_queue("lab", "", 2);
  WorkRules& training = lab.work_rules[static_cast<size_t>(WorkloadKind::kTrain)];
  training.max_runtime_seconds = 600;
  training.notice_seconds = 0;
  training.requeue_delay_seconds = 300;
  WorkRules& notebooks = lab.work_rules[static_cast<size_t>(WorkloadKind::kInteractive)];
  notebooks.idle_limit_seconds = 60;
  notebooks.notice_seconds = 0;
  SchedulerWorld world(uniform_cluster(1, 2), {lab});
  const WorkloadId train = world.submit("train", "lab", {});
  const WorkloadId notebook = world.submit("notebook", "lab", {});
  world.workloads()[notebook].spec.kind = WorkloadKind::kInteractive;
  world.cycle(0);
  LimitLedger ledger;
  const UtilisationReader idle = [](WorkloadId, double) { return std::optional<double>(0); };
  auto review = [&](double now) { return ledger.review(world.workloads(), world.cluster(), world.tree(), now, idle); };
  EXPECT_TRUE(review(0).empty());
  const std::vector<LimitOutcome> stop = review(60);
  ASSERT_EQ(stop.size(), 1u);
  EXPECT_EQ(stop[0].workload, notebook);
  // On Kubernetes the pods end within their termination grace: still bound meanwhile.
  EXPECT_TRUE(review(120).empty());
  const std::vector<LimitOutcome> requeue = review(600);
  ASSERT_EQ(requeue.size(), 1u);
  EXPECT_EQ(requeue[0].verdict.action, ExpiryAction::kRequeue);
  EXPECT_TRUE(review(660).empty());  // its pods are still ending: not a new run
  EXPECT_EQ(ledger.held_until("train"), 900);
  // Its pods are gone and its controller has not made new ones yet: the hold stays.
  world.workloads().finish(train, world.cluster());
  world.workloads().finish(notebook, world.cluster());
  EXPECT_TRUE(review(700).empty());
  EXPECT_EQ(ledger.held_until("train"), 900);
  ASSERT_NE(ledger.clock("train"), nullptr);
  EXPECT_EQ(ledger.clock("train")->total_run_seconds, 600);
  EXPECT_EQ(ledger.clock("notebook"), nullptr);
  review(950);  // gone past its delay: forgotten
  EXPECT_EQ(ledger.clock("train"), nullptr);
}

}  // namespace
}  // namespace tessera
