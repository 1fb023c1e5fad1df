// The condition TesseraScheduled on the object the user created (owner_conditions.h): a JSON
// patch that touches only its own entry of the owner's conditions.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "adapter/owner_conditions.h"
#include "wire/timestamp.h"

namespace tessera::adapter {
namespace {

using nlohmann::json;

constexpr double kConditionsAt = 1'800'000'000;  // 2027-01-15T08:00:00Z

json jobset_with(json conditions) {
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata", {{"name", "llama"}, {"namespace", "ml"}, {"resourceVersion", "41"}, {"generation", 2}}},
          {"status", {{"conditions", std::move(conditions)}, {"restarts", 0}}}};
}

const OwnerCondition kWaits{false, "Unschedulable", "needs 32 GPUs on 4 nodes; 16 are free"};

TEST(OwnerConditions, AWaitingJobSetGetsItsConditionAddedBesideItsControllersOwn) {
  const json jobset = jobset_with(json::array({{{"type", "StartupPolicyInProgress"}, {"status", "True"}}}));
  const auto patch = owner_condition_patch(jobset, kWaits, true, kConditionsAt);
  ASSERT_TRUE(patch.has_value());
  const json patched = jobset.patch(*patch);
  ASSERT_EQ(patched["status"]["conditions"].size(), 2U);
  EXPECT_EQ(patched["status"]["conditions"][0]["type"], "StartupPolicyInProgress") << "the controller's own stays";
  const json& ours = patched["status"]["conditions"][1];
  EXPECT_EQ(ours["type"], "TesseraScheduled");
  EXPECT_EQ(ours["status"], "False");
  EXPECT_EQ(ours["reason"], "Unschedulable");
  EXPECT_EQ(ours["message"], kWaits.message);
  EXPECT_EQ(ours["lastTransitionTime"], wire::format_time(kConditionsAt));
  EXPECT_EQ(ours["observedGeneration"], 2);
  EXPECT_EQ(patched["status"]["restarts"], 0);
  // Only onto the object as cached: the server's object after that write is newer than the cache
  // that does not show it yet, so the same patch again cannot add the entry twice.
  json written = patched;
  written["metadata"]["resourceVersion"] = "42";
  EXPECT_THROW(written.patch(*patch), json::other_error);
}

TEST(OwnerConditions, OnlyItsOwnEntryIsReplacedAndItsTransitionTimeKeptWhileTheStatusStays) {
  const json old = {{"type", "TesseraScheduled"},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"message", "needs 32 GPUs on 4 nodes; 8 are free"},
                    {"lastTransitionTime", "2027-01-15T07:00:00Z"}};
  const json jobset = jobset_with(json::array({old, {{"type", "Suspended"}, {"status", "False"}}}));
  // The same state with a new message waits for the refresh.
  EXPECT_FALSE(owner_condition_patch(jobset, kWaits, false, kConditionsAt).has_value());
  const auto refreshed = owner_condition_patch(jobset, kWaits, true, kConditionsAt);
  ASSERT_TRUE(refreshed.has_value());
  const json patched = jobset.patch(*refreshed);
  EXPECT_EQ(patched["status"]["conditions"][0]["message"], kWaits.message);
  EXPECT_EQ(patched["status"]["conditions"][0]["lastTransitionTime"], "2027-01-15T07:00:00Z");
  EXPECT_EQ(patched["status"]["conditions"][1]["type"], "Suspended");
  // Once it runs: True, from now.
  const auto runs =
      owner_condition_patch(patched, {true, "Scheduled", "its gang of 4 pods runs"}, false, kConditionsAt);
  ASSERT_TRUE(runs.has_value());
  const json running = patched.patch(*runs);
  EXPECT_EQ(running["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(running["status"]["conditions"][0]["lastTransitionTime"], wire::format_time(kConditionsAt));
  EXPECT_FALSE(
      owner_condition_patch(running, {true, "Scheduled", "its gang of 4 pods runs"}, true, kConditionsAt).has_value());
  // The replace names the entry's index; if the list moved meanwhile the test op fails the patch.
  EXPECT_EQ((*runs)[0]["op"], "test");
  EXPECT_EQ((*runs)[0]["path"], "/status/conditions/0/type");
}

TEST(OwnerConditions, AnOwnerWithoutConditionsGetsAListOnlyIfItIsUnchangedSinceCached) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", "train"}, {"namespace", "ml"}, {"resourceVersion", "7"}}}};
  auto patch = owner_condition_patch(job, kWaits, true, kConditionsAt);
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ((*patch)[0], (json{{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "7"}}));
  EXPECT_EQ(job.patch(*patch)["status"]["conditions"][0]["type"], "TesseraScheduled");
  job["status"] = {{"active", 4}};
  patch = owner_condition_patch(job, kWaits, true, kConditionsAt);
  const json patched = job.patch(*patch);
  EXPECT_EQ(patched["status"]["active"], 4);
  EXPECT_EQ(patched["status"]["conditions"].size(), 1U);
  // Changed meanwhile (the cache is behind): the test op refuses the patch.
  job["metadata"]["resourceVersion"] = "8";
  EXPECT_THROW(job.patch(*patch), json::other_error);
}

TEST(OwnerConditions, StatusPathsAndCachedOwnersByKind) {
  EXPECT_EQ(owner_status_path({"batch/v1", "Job", "ml", "train", "u1"}),
            "/apis/batch/v1/namespaces/ml/jobs/train/status");
  EXPECT_EQ(owner_status_path({"trainer.kubeflow.org/v1alpha1", "TrainJob", "ml", "ft", "u2"}),
            "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml/trainjobs/ft/status");
  EXPECT_EQ(owner_status_path({"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "ml", "vllm", ""}), "");
  OwnerObjects owners;
  owners.jobsets["ml/llama"] = std::make_shared<const json>(jobset_with(json::array()));
  EXPECT_NE(cached_owner(owners, {"jobset.x-k8s.io/v1alpha2", "JobSet", "ml", "llama", "u3"}), nullptr);
  EXPECT_EQ(cached_owner(owners, {"batch/v1", "Job", "ml", "llama", "u4"}), nullptr);
}

}  // namespace
}  // namespace tessera::adapter
