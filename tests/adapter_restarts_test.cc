// Restarts and lost GPU-hours per gang (restart_ledger.h): counted once per interruption, only
// when pods that started after it run, and read back from PodGroup status after a restart.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "adapter/restart_ledger.h"
#include "wire/timestamp.h"

namespace tessera::adapter {
namespace {

using nlohmann::json;

constexpr double kEvictedAt = 1'800'000'000;  // 2027-01-15T08:00:00Z

const std::set<std::string> kFirstRun = {"uid-0", "uid-1", "uid-2", "uid-3"};
const std::set<std::string> kSecondRun = {"uid-4", "uid-5", "uid-6", "uid-7"};

Interruption reclaim_of(const std::string& pod_group, double gpus, double started_at) {
  return {pod_group, "Reclaimed", gpus, started_at, started_at, kEvictedAt, kFirstRun};
}

TEST(RestartLedger, AReclaimedGangLosesItsRunTimeTimesItsGpusAndRestartsOnceWhenNewPodsRun) {
  RestartLedger ledger;
  // 4 pods x 8 GPUs, started 90 minutes before the reclaim.
  EXPECT_DOUBLE_EQ(ledger.interrupted(reclaim_of("ml/jobset-llama", 32, kEvictedAt - 5400)), 48.0);
  // Its old pods still run out their termination grace (a bound pod without a startTime counts
  // as starting now): not a restart.
  EXPECT_EQ(ledger.started("ml/jobset-llama", kEvictedAt + 5, kFirstRun), std::nullopt);
  ASSERT_NE(ledger.tally("ml/jobset-llama"), nullptr);
  EXPECT_EQ(ledger.tally("ml/jobset-llama")->restarts, 0);
  // The pods its controller made again run, even within the second of the eviction: one restart,
  // for the reclaim.
  EXPECT_EQ(ledger.started("ml/jobset-llama", kEvictedAt, kSecondRun), "Reclaimed");
  EXPECT_EQ(ledger.started("ml/jobset-llama", kEvictedAt + 120, kSecondRun), std::nullopt) << "counted once";
  const RestartTally& tally = *ledger.tally("ml/jobset-llama");
  EXPECT_EQ(tally.restarts, 1);
  EXPECT_DOUBLE_EQ(tally.lost_gpu_hours, 48.0);
  EXPECT_EQ(tally.last_restart_reason, "Reclaimed");
  EXPECT_FALSE(tally.interrupted_by.has_value());
}

TEST(RestartLedger, ASecondInterruptionBeforeItRunsAgainLosesNothingMore) {
  RestartLedger ledger;
  ledger.interrupted(reclaim_of("ml/job-train", 8, kEvictedAt - 3600));
  EXPECT_DOUBLE_EQ(
      ledger.interrupted({"ml/job-train", "Preempted", 8, kEvictedAt - 3600, kEvictedAt - 3600, kEvictedAt + 5, {}}),
      0);
  EXPECT_EQ(ledger.started("ml/job-train", kEvictedAt + 60, kSecondRun), "Reclaimed");
  EXPECT_EQ(ledger.tally("ml/job-train")->restarts, 1);
  EXPECT_DOUBLE_EQ(ledger.tally("ml/job-train")->lost_gpu_hours, 8.0);
}

TEST(RestartLedger, WorkBeforeTheLastCheckpointIsNotLost) {
  const json pod_group = {
      {"metadata", {{"annotations", {{std::string(kCheckpointAnnotation), "2027-01-15T07:45:00Z"}}}}}};
  const double checkpoint = last_checkpoint(pod_group);
  EXPECT_DOUBLE_EQ(checkpoint, kEvictedAt - 900);
  RestartLedger ledger;
  // Started two hours ago, saved 15 minutes ago: 8 GPUs x 15 minutes lost.
  EXPECT_DOUBLE_EQ(
      ledger.interrupted(
          {"ml/job-train", "Reclaimed", 8, kEvictedAt - 7200, std::max(kEvictedAt - 7200, checkpoint), kEvictedAt, {}}),
      2.0);
  EXPECT_DOUBLE_EQ(last_checkpoint({{"metadata", {{"annotations", {{std::string(kCheckpointAnnotation), "soon"}}}}}}),
                   0);
  EXPECT_DOUBLE_EQ(last_checkpoint(json::object()), 0);
}

TEST(RestartLedger, ARestartedSchedulerReadsTheTalliesBackFromPodGroupStatus) {
  RestartLedger before;
  before.interrupted(reclaim_of("ml/job-train", 16, kEvictedAt - 1800));
  before.started("ml/job-train", kEvictedAt + 30, kSecondRun);
  before.interrupted({"ml/job-train", "Preempted", 16, kEvictedAt + 30, kEvictedAt + 30, kEvictedAt + 930, kSecondRun});
  // What write_status put in the PodGroup's status; the scheduler then restarts.
  const json status = restart_status(*before.tally("ml/job-train"));
  EXPECT_EQ(status["restarts"], 1);
  EXPECT_DOUBLE_EQ(status["lostGpuHours"].get<double>(), 12.0);
  EXPECT_EQ(status["lastRestartReason"], "Reclaimed");
  EXPECT_EQ(status["interruption"]["reason"], "Preempted");

  RestartLedger after;
  after.read_back("ml/job-train", {{"status", status}});
  // Once per PodGroup: later statuses in the cache are older than the ledger's own counts.
  after.read_back("ml/job-train", {{"status", {{"restarts", 7}}}});
  EXPECT_EQ(after.tally("ml/job-train")->restarts, 1);
  // Its pods are not known after the restart: their start times tell the runs apart.
  EXPECT_EQ(after.started("ml/job-train", kEvictedAt + 30, kSecondRun), std::nullopt) << "pods of the preempted run";
  EXPECT_EQ(after.started("ml/job-train", kEvictedAt + 990, {"uid-8"}), "Preempted");
  const json later = restart_status(*after.tally("ml/job-train"));
  EXPECT_EQ(later["restarts"], 2);
  EXPECT_DOUBLE_EQ(later["lostGpuHours"].get<double>(), 12.0);
  EXPECT_TRUE(later["interruption"].is_null()) << "null clears it in the merge patch";
}

TEST(RestartLedger, AGangNeverInterruptedAddsNothingToItsStatus) {
  RestartLedger ledger;
  ledger.read_back("ml/job-train", {{"status", {{"phase", "Running"}}}});
  EXPECT_EQ(ledger.started("ml/job-train", kEvictedAt, kFirstRun), std::nullopt);
  EXPECT_EQ(restart_status(*ledger.tally("ml/job-train")), json::object());
  ledger.keep_only({});
  EXPECT_EQ(ledger.tally("ml/job-train"), nullptr);
}

TEST(RestartLedger, UnreadableStatusFieldsStartFromZero) {
  RestartLedger ledger;
  ledger.read_back("ml/job-train",
                   {{"status", {{"restarts", "three"}, {"lostGpuHours", -4}, {"interruption", {{"reason", 5}}}}}});
  const RestartTally& tally = *ledger.tally("ml/job-train");
  EXPECT_EQ(tally.restarts, 0);
  EXPECT_DOUBLE_EQ(tally.lost_gpu_hours, 0);
  EXPECT_FALSE(tally.interrupted_by.has_value());
}

TEST(RestartLedger, APodThatFailsOnItsOwnInterruptsItsGangOnceAndTheReplacementIsARestart) {
  RestartLedger ledger;
  EXPECT_TRUE(ledger.read_back("ml/job-train", {{"status", {{"phase", "Running"}}}}));
  EXPECT_FALSE(ledger.read_back("ml/job-train", {{"status", {{"phase", "Running"}}}}));
  EXPECT_FALSE(ledger.pods_failed("ml/job-train", {}, false));
  EXPECT_TRUE(ledger.pods_failed("ml/job-train", {"ml/train-2"}, false));
  EXPECT_DOUBLE_EQ(ledger.interrupted(
                       {"ml/job-train", "PodFailed", 24, kEvictedAt - 3600, kEvictedAt - 3600, kEvictedAt, kFirstRun}),
                   24.0);
  // Seen again next cycle (its controller keeps the failed pod): the same failure.
  EXPECT_FALSE(ledger.pods_failed("ml/job-train", {"ml/train-2"}, false));
  // Its three pods still bound run on: not a restart; the replacement joins them: one.
  EXPECT_EQ(ledger.started("ml/job-train", kEvictedAt + 20, {"uid-1", "uid-2", "uid-3"}), std::nullopt);
  EXPECT_EQ(ledger.started("ml/job-train", kEvictedAt + 20, {"uid-1", "uid-2", "uid-3", "uid-4"}), "PodFailed");
  // Another pod fails later: a second interruption.
  EXPECT_TRUE(ledger.pods_failed("ml/job-train", {"ml/train-2", "ml/train-5"}, false));
}

TEST(RestartLedger, PodsFailedBeforeTheSchedulerFirstSawTheGangAreOnlyNoted) {
  RestartLedger ledger;
  EXPECT_FALSE(ledger.pods_failed("ml/job-train", {"ml/train-0"}, true));
  EXPECT_FALSE(ledger.pods_failed("ml/job-train", {"ml/train-0"}, false));
  // Once deleted it is forgotten; a pod of that name failing again is a new failure.
  EXPECT_FALSE(ledger.pods_failed("ml/job-train", {}, false));
  EXPECT_TRUE(ledger.pods_failed("ml/job-train", {"ml/train-0"}, false));
}

}  // namespace
}  // namespace tessera::adapter
