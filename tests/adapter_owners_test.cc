// Workloads from the controllers users already run: which pods start together, and who is told.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "adapter/workload_owners.h"

namespace tessera::adapter {
namespace {

using nlohmann::json;

json controller_reference(const std::string& api_version, const std::string& kind, const std::string& name,
                          bool controller = true) {
  return {
      {"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", "uid-" + name}, {"controller", controller}};
}

json owner_object(const std::string& name, json owners = json::array(), json labels = json::object()) {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"ownerReferences", owners}, {"labels", labels}}}};
}

json job_object(const std::string& name, json spec, json owners = json::array(), json labels = json::object()) {
  json result = owner_object(name, std::move(owners), std::move(labels));
  result["spec"] = std::move(spec);
  return result;
}

void add_owner(std::map<std::string, kube::ObjectPtr>& objects, const json& item) {
  objects["ml/" + item["metadata"]["name"].get<std::string>()] = std::make_shared<const json>(item);
}

json pod_owned_by(const json& controller, json labels = json::object(), json annotations = json::object()) {
  json pod = owner_object("p-0", json::array({controller}), std::move(labels));
  pod["metadata"]["annotations"] = std::move(annotations);
  return pod;
}

TEST(AdapterOwners, AJobIsAGangOfItsParallelism) {
  OwnerObjects owners;
  add_owner(owners.jobs, job_object("train", {{"parallelism", 4}, {"completions", 4}, {"completionMode", "Indexed"}},
                                    json::array(), {{"scheduling.tessera.dev/queue", "team-a"}}));
  const auto owned = owned_workload(pod_owned_by(controller_reference("batch/v1", "Job", "train")), owners);
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ(owned->key, "ml/Job/train");
  EXPECT_EQ(owned->min_member, 4);
  EXPECT_FALSE(owned->inference);
  EXPECT_EQ(owned->queue, "team-a");
  EXPECT_TRUE(owned->waiting_for.empty());
  EXPECT_EQ(owned->owner, (ObjectRef{"batch/v1", "Job", "ml", "train", "uid-train"}));
  EXPECT_EQ(owned->owner.describe(), "Job ml/train");
  // Its PodGroup, where its status is kept, goes with the Job.
  EXPECT_EQ(owned->pod_group_name, "job-train");
  EXPECT_EQ(owned->pod_group_key(), "ml/job-train");
  EXPECT_EQ(owned->collected_with, owned->owner);
}

TEST(AdapterOwners, AJobRunsNoMorePodsAtOnceThanItsCompletions) {
  OwnerObjects owners;
  add_owner(owners.jobs, job_object("few", {{"parallelism", 8}, {"completions", 3}}));
  add_owner(owners.jobs, job_object("plain", json::object()));  // parallelism 1 by default
  EXPECT_EQ(owned_workload(pod_owned_by(controller_reference("batch/v1", "Job", "few")), owners)->min_member, 3);
  EXPECT_EQ(owned_workload(pod_owned_by(controller_reference("batch/v1", "Job", "plain")), owners)->min_member, 1);
}

TEST(AdapterOwners, PodsOfAJobNotSeenYetWait) {
  const auto owned = owned_workload(pod_owned_by(controller_reference("batch/v1", "Job", "train")), OwnerObjects{});
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ(owned->waiting_for, "Job ml/train");
}

TEST(AdapterOwners, AJobSetIsOneGangOfAllItsJobs) {
  OwnerObjects owners;
  const json leader_spec = {{"parallelism", 1}, {"completions", 1}};
  const json worker_spec = {{"parallelism", 3}, {"completions", 3}};
  json jobset = owner_object("llama", json::array(), {{"scheduling.tessera.dev/queue", "research"}});
  jobset["spec"]["replicatedJobs"] =
      json::array({{{"name", "leader"}, {"template", {{"spec", leader_spec}}}},
                   {{"name", "workers"}, {"replicas", 2}, {"template", {{"spec", worker_spec}}}}});
  add_owner(owners.jobsets, jobset);
  const json by_jobset = json::array({controller_reference("jobset.x-k8s.io/v1alpha2", "JobSet", "llama")});
  add_owner(owners.jobs, job_object("llama-leader-0", leader_spec, by_jobset));
  add_owner(owners.jobs, job_object("llama-workers-1", worker_spec, by_jobset));
  for (const std::string name : {"llama-leader-0", "llama-workers-1"}) {
    const auto owned = owned_workload(pod_owned_by(controller_reference("batch/v1", "Job", name)), owners);
    ASSERT_TRUE(owned.has_value());
    EXPECT_EQ(owned->key, "ml/JobSet/llama");
    EXPECT_EQ(owned->min_member, 7);  // 1 leader + 2 jobs of 3 workers
    EXPECT_EQ(owned->queue, "research");
    EXPECT_EQ(owned->owner.kind, "JobSet");
  }
  // Its Job seen before the JobSet: the pods wait for it.
  OwnerObjects early;
  add_owner(early.jobs, job_object("llama-leader-0", leader_spec, by_jobset));
  EXPECT_EQ(owned_workload(pod_owned_by(controller_reference("batch/v1", "Job", "llama-leader-0")), early)->waiting_for,
            "JobSet ml/llama");
}

TEST(AdapterOwners, ATrainJobsJobSetIsTheTrainJobsGang) {
  OwnerObjects owners;
  json jobset =
      owner_object("bert", json::array({controller_reference("trainer.kubeflow.org/v1alpha1", "TrainJob", "bert")}));
  jobset["spec"]["replicatedJobs"] =
      json::array({{{"name", "node"}, {"replicas", 1}, {"template", {{"spec", {{"parallelism", 4}}}}}}});
  add_owner(owners.jobsets, jobset);
  add_owner(owners.trainjobs, owner_object("bert", json::array(), {{"scheduling.tessera.dev/queue", "nlp"}}));
  add_owner(owners.jobs, job_object("bert-node-0", {{"parallelism", 4}},
                                    json::array({controller_reference("jobset.x-k8s.io/v1alpha2", "JobSet", "bert")})));
  const auto owned = owned_workload(pod_owned_by(controller_reference("batch/v1", "Job", "bert-node-0")), owners);
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ(owned->key, "ml/TrainJob/bert");
  EXPECT_EQ(owned->min_member, 4);
  EXPECT_EQ(owned->queue, "nlp");
  EXPECT_EQ(owned->owner, (ObjectRef{"trainer.kubeflow.org/v1alpha1", "TrainJob", "ml", "bert", "uid-bert"}));
}

TEST(AdapterOwners, APyTorchJobIsAGangOfItsReplicasOrItsElasticMinimum) {
  OwnerObjects owners;
  json fixed = owner_object("resnet");
  fixed["spec"]["pytorchReplicaSpecs"] = {{"Master", {{"replicas", 1}}}, {"Worker", {{"replicas", 3}}}};
  add_owner(owners.pytorchjobs, fixed);
  json elastic = owner_object("elastic");
  elastic["spec"]["pytorchReplicaSpecs"] = {{"Worker", {{"replicas", 8}}}};
  elastic["spec"]["elasticPolicy"] = {{"minReplicas", 2}, {"maxReplicas", 8}};
  add_owner(owners.pytorchjobs, elastic);
  EXPECT_EQ(
      owned_workload(pod_owned_by(controller_reference("kubeflow.org/v1", "PyTorchJob", "resnet")), owners)->min_member,
      4);
  EXPECT_EQ(owned_workload(pod_owned_by(controller_reference("kubeflow.org/v1", "PyTorchJob", "elastic")), owners)
                ->min_member,
            2);
}

json ray_group(const std::string& name, json fields) {
  fields["groupName"] = name;
  return fields;
}

int raycluster_min_member(const OwnerObjects& owners, const std::string& name) {
  return owned_workload(pod_owned_by(controller_reference("ray.io/v1", "RayCluster", name)), owners)->min_member;
}

TEST(AdapterOwners, ARayClusterIsAGangOfItsHeadAndTheWorkersItMustRun) {
  OwnerObjects owners;
  json fixed = owner_object("tune", json::array(), {{"scheduling.tessera.dev/queue", "research"}});
  fixed["spec"]["workerGroupSpecs"] = {ray_group("gpu", {{"replicas", 3}, {"minReplicas", 1}, {"maxReplicas", 5}}),
                                       ray_group("tpu-like", {{"replicas", 2}, {"numOfHosts", 2}})};
  add_owner(owners.rayclusters, fixed);
  const auto owned = owned_workload(pod_owned_by(controller_reference("ray.io/v1", "RayCluster", "tune")), owners);
  ASSERT_TRUE(owned.has_value());
  // Without the autoscaler every replica runs: the head, 3 workers, 2 replicas of 2 hosts.
  EXPECT_EQ(owned->min_member, 1 + 3 + 4);
  EXPECT_EQ(owned->key, "ml/RayCluster/tune");
  EXPECT_EQ(owned->queue, "research");
  EXPECT_EQ(owned->pod_group_name, "raycluster-tune");
  EXPECT_EQ(owned->owner, (ObjectRef{"ray.io/v1", "RayCluster", "ml", "tune", "uid-tune"}));
  EXPECT_FALSE(owned->inference);

  // Replicas out of [minReplicas, maxReplicas] are brought back within, as KubeRay does; a
  // suspended group runs nothing, and a group whose minimum passes its maximum runs its maximum.
  json clamped = owner_object("clamped");
  clamped["spec"]["workerGroupSpecs"] = {
      ray_group("below", {{"replicas", 0}, {"minReplicas", 2}}),
      ray_group("above", {{"replicas", 9}, {"minReplicas", 1}, {"maxReplicas", 4}}),
      ray_group("off", {{"replicas", 5}, {"suspend", true}}),
      ray_group("inverted", {{"replicas", 5}, {"minReplicas", 3}, {"maxReplicas", 2}})};
  add_owner(owners.rayclusters, clamped);
  EXPECT_EQ(raycluster_min_member(owners, "clamped"), 1 + 2 + 4 + 0 + 2);

  // With the autoscaler the minimums start together; the workers above them are elastic extras.
  json autoscaled = owner_object("elastic");
  autoscaled["spec"]["enableInTreeAutoscaling"] = true;
  autoscaled["spec"]["workerGroupSpecs"] = {ray_group("gpu", {{"replicas", 4}, {"minReplicas", 2}, {"maxReplicas", 8}}),
                                            ray_group("cpu", {{"replicas", 3}, {"minReplicas", 1}, {"numOfHosts", 2}})};
  add_owner(owners.rayclusters, autoscaled);
  EXPECT_EQ(raycluster_min_member(owners, "elastic"), 1 + 2 + 2);

  // A head alone (no worker group, or an autoscaled group with no minimum) is a gang of one.
  json head_only = owner_object("head");
  head_only["spec"]["enableInTreeAutoscaling"] = true;
  head_only["spec"]["workerGroupSpecs"] = {ray_group("gpu", {{"replicas", 2}})};
  add_owner(owners.rayclusters, head_only);
  EXPECT_EQ(raycluster_min_member(owners, "head"), 1);
}

TEST(AdapterOwners, PodsOfARayClusterNotSeenYetWait) {
  const auto owned =
      owned_workload(pod_owned_by(controller_reference("ray.io/v1", "RayCluster", "unseen")), OwnerObjects{});
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ(owned->waiting_for, "RayCluster ml/unseen");
}

TEST(AdapterOwners, EachLeaderWorkerSetGroupIsAGangOfItsSize) {
  const json sts = controller_reference("apps/v1", "StatefulSet", "vllm-1");
  const auto owned = owned_workload(
      pod_owned_by(sts,
                   {{"leaderworkerset.sigs.k8s.io/name", "vllm"}, {"leaderworkerset.sigs.k8s.io/group-index", "1"}},
                   {{"leaderworkerset.sigs.k8s.io/size", "4"}}),
      OwnerObjects{});
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ(owned->key, "ml/LeaderWorkerSet/vllm/1");
  EXPECT_EQ(owned->min_member, 4);
  EXPECT_EQ(owned->owner.describe(), "LeaderWorkerSet ml/vllm");
  EXPECT_FALSE(owned->inference);
  // Its pods do not carry the LeaderWorkerSet's uid: the PodGroup goes with the group's StatefulSet.
  EXPECT_EQ(owned->pod_group_name, "leaderworkerset-vllm-1");
  EXPECT_EQ(owned->collected_with, (ObjectRef{"apps/v1", "StatefulSet", "ml", "vllm-1", "uid-vllm-1"}));
}

TEST(AdapterOwners, ReplicasOfADeploymentOrStatefulSetAreInferenceWorkloadsOfTheirOwn) {
  for (const std::string kind : {"ReplicaSet", "StatefulSet"}) {
    const auto owned = owned_workload(pod_owned_by(controller_reference("apps/v1", kind, "serve")), OwnerObjects{});
    ASSERT_TRUE(owned.has_value()) << kind;
    EXPECT_TRUE(owned->inference);
    EXPECT_EQ(owned->key, "ml/p-0");             // the pod's own
    EXPECT_TRUE(owned->pod_group_name.empty());  // no PodGroup: a workload of one pod
    EXPECT_EQ(owned->min_member, 1);
  }
}

TEST(AdapterOwners, OtherPodsAreNotGroupedByOwner) {
  EXPECT_FALSE(owned_workload(owner_object("bare"), OwnerObjects{}).has_value());
  // Only the controller counts; a pod merely referring to an object is not its.
  EXPECT_FALSE(owned_workload(pod_owned_by(controller_reference("batch/v1", "Job", "train", false)), OwnerObjects{})
                   .has_value());
  EXPECT_FALSE(owned_workload(pod_owned_by(controller_reference("v1", "Node", "n1")), OwnerObjects{}).has_value());
  // A kind of the same name in another group is not the Job.
  EXPECT_FALSE(
      owned_workload(pod_owned_by(controller_reference("example.com/v1", "Job", "x")), OwnerObjects{}).has_value());
}

}  // namespace
}  // namespace tessera::adapter
