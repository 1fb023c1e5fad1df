// The adapter's translation of a cycle into API calls, without a server: Kubernetes objects in,
// snapshot built, the engine's cycle run, decisions out.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "adapter/api_actions.h"
#include "adapter/cycle_decisions.h"
#include "adapter/object_translation.h"
#include "adapter/status_reports.h"
#include "adapter/world_snapshot.h"
#include "engine/placer.h"
#include "policy/policy_registry.h"
#include "policy/workload_mix.h"
#include "wire/timestamp.h"

namespace tessera::adapter {
namespace {

using nlohmann::json;

constexpr double kNow = 1'800'000'000;  // a fixed Unix time

kube::ObjectPtr object(json value) { return std::make_shared<const json>(std::move(value)); }

json gpu_node(const std::string& name, int gpus, const std::string& model = "A100") {
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"kubernetes.io/hostname", name}, {"nvidia.com/gpu.product", model}, {"nvidia.com/gpu.memory", "81920"}}}}},
      {"status",
       {{"allocatable",
         {{"cpu", "96"}, {"memory", "768Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}, {"pods", "110"}}},
        {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

struct PodOptions {
  int gpus = 1;
  std::string fraction = "";
  std::string gpu_memory = "";  // with its limit and resolver, when set
  std::string gpu_memory_limit = "";
  std::string gpu_memory_resolver = "";
  std::string pod_group = "";
  std::string queue = "team-a";
  std::string node = "";
  std::string gpu_index = "";
  std::string scheduler = "tessera";
  std::string phase = "Pending";
  std::string workload_type = "";
  bool terminating = false;
  std::string started = "2027-01-15T07:30:00Z";  // half an hour before kNow
  json controller = nullptr;                     // an ownerReference: the Job, ReplicaSet... that made it
};

json pod(const std::string& ns, const std::string& name, const PodOptions& options) {
  json container = {
      {"name", "main"}, {"image", "busybox"}, {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}}};
  if (options.gpus > 0 && options.fraction.empty() && options.gpu_memory.empty()) {
    container["resources"]["limits"] = {{"nvidia.com/gpu", std::to_string(options.gpus)}};
  }
  json labels = json::object();
  if (!options.queue.empty()) labels["scheduling.tessera.dev/queue"] = options.queue;
  if (!options.pod_group.empty()) labels["scheduling.tessera.dev/pod-group"] = options.pod_group;
  json annotations = json::object();
  if (!options.fraction.empty()) annotations["scheduling.tessera.dev/gpu-fraction"] = options.fraction;
  for (const auto& [key, value] : {std::pair{"gpu-memory", options.gpu_memory},
                                   {"gpu-memory-limit", options.gpu_memory_limit},
                                   {"gpu-memory-resolver", options.gpu_memory_resolver}}) {
    if (!value.empty()) annotations[fmt::format("scheduling.tessera.dev/{}", key)] = value;
  }
  if (!options.gpu_index.empty()) annotations["scheduling.tessera.dev/gpu-index"] = options.gpu_index;
  if (!options.workload_type.empty()) annotations["scheduling.tessera.dev/workload-type"] = options.workload_type;
  json result = {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata",
                  {{"name", name},
                   {"namespace", ns},
                   {"uid", ns + "-" + name},
                   {"resourceVersion", "10"},
                   {"creationTimestamp", "2027-01-15T07:00:00Z"},
                   {"labels", labels},
                   {"annotations", annotations}}},
                 {"spec", {{"schedulerName", options.scheduler}, {"containers", json::array({container})}}},
                 {"status", {{"phase", options.phase}}}};
  if (!options.node.empty()) {
    result["spec"]["nodeName"] = options.node;
    result["status"]["startTime"] = options.started;
  }
  if (options.terminating) result["metadata"]["deletionTimestamp"] = "2027-01-15T08:30:00Z";
  if (!options.controller.is_null()) result["metadata"]["ownerReferences"] = json::array({options.controller});
  return result;
}

json controlled_by(const std::string& api_version, const std::string& kind, const std::string& name) {
  return {{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", "uid-" + name}, {"controller", true}};
}

json batch_job(const std::string& ns, const std::string& name, int parallelism) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}}},
          {"spec", {{"parallelism", parallelism}, {"completions", parallelism}, {"completionMode", "Indexed"}}}};
}

json queue(const std::string& name, const std::string& parent, double deserved, double weight = 1) {
  json spec = {{"resources", {{"gpu", {{"deserved", deserved}, {"overQuotaWeight", weight}}}}}};
  if (!parent.empty()) spec["parent"] = parent;
  return {{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
          {"kind", "Queue"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

json pod_group(const std::string& ns, const std::string& name, int min_member, const std::string& queue_name = "") {
  json spec = {{"minMember", min_member}};
  if (!queue_name.empty()) spec["queue"] = queue_name;
  return {{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"creationTimestamp", "2027-01-15T07:00:00Z"}}},
          {"spec", spec}};
}

class World {
 public:
  World& add_node(json node) {
    const std::string key = node["metadata"]["name"];
    observed_.nodes[key] = object(std::move(node));
    return *this;
  }
  World& add_pod(json value) {
    const std::string key =
        value["metadata"]["namespace"].get<std::string>() + "/" + value["metadata"]["name"].get<std::string>();
    observed_.pods[key] = object(std::move(value));
    return *this;
  }
  World& add_queue(json value) {
    const std::string key = value["metadata"]["name"];
    observed_.queues[key] = object(std::move(value));
    return *this;
  }
  World& add_job(json value) {
    const std::string key =
        value["metadata"]["namespace"].get<std::string>() + "/" + value["metadata"]["name"].get<std::string>();
    observed_.owners.jobs[key] = object(std::move(value));
    return *this;
  }
  World& add_raycluster(json value) {
    const std::string key =
        value["metadata"]["namespace"].get<std::string>() + "/" + value["metadata"]["name"].get<std::string>();
    observed_.owners.rayclusters[key] = object(std::move(value));
    return *this;
  }
  World& add_topology(json value) {
    const std::string key = value["metadata"]["name"];
    observed_.topologies[key] = object(std::move(value));
    return *this;
  }
  World& add_pod_group(json value) {
    const std::string key =
        value["metadata"]["namespace"].get<std::string>() + "/" + value["metadata"]["name"].get<std::string>();
    observed_.pod_groups[key] = object(std::move(value));
    return *this;
  }
  SchedulerMemory& memory() { return memory_; }
  GpuMemoryOvercommit& overcommit() { return overcommit_; }

  // Builds the snapshot, runs one cycle, and returns the decisions.
  Decisions cycle() {
    auto built = build_snapshot(observed_, memory_, kNow, overcommit_);
    EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().message);
    snapshot_ = std::make_unique<Snapshot>(std::move(*built));
    std::vector<std::optional<Binding>> before;
    for (PodId pod = 0; pod < snapshot_->cluster->pod_count(); ++pod)
      before.push_back(snapshot_->cluster->binding(pod));
    auto policy = make_policy("leftover-fit", WorkloadMix());
    Placer placer(**policy);
    auto result =
        run_cycle({*snapshot_->cluster, placer, snapshot_->workloads, *snapshot_->tree, *snapshot_->meter, kNow});
    EXPECT_TRUE(result.ok());
    result_ = std::move(*result);
    return decide(*snapshot_, before, result_);
  }
  const Snapshot& snapshot() const { return *snapshot_; }
  const CycleResult& result() const { return result_; }
  const ObservedObjects& observed() const { return observed_; }

 private:
  ObservedObjects observed_;
  SchedulerMemory memory_;
  GpuMemoryOvercommit overcommit_;
  std::unique_ptr<Snapshot> snapshot_;
  CycleResult result_;
};

const StartDecision* start_of(const Decisions& decisions, const std::string& key) {
  for (const StartDecision& start : decisions.starts) {
    if (start.workload_key == key) return &start;
  }
  return nullptr;
}

const WaitingWorkload* waiting_of(const Decisions& decisions, const std::string& key) {
  for (const WaitingWorkload& waiting : decisions.waiting) {
    if (waiting.workload_key == key) return &waiting;
  }
  return nullptr;
}

TEST(AdapterDecisions, GangBindsAllItsPodsOrWaitsWhole) {
  World world;
  for (int i = 0; i < 4; ++i) world.add_node(gpu_node(fmt::format("node-{}", i), 8));
  world.add_queue(queue("team-a", "", 32));
  world.add_pod_group(pod_group("ml", "big", 4));
  world.add_pod_group(pod_group("ml", "second", 4));
  for (int i = 0; i < 4; ++i) world.add_pod(pod("ml", fmt::format("big-{}", i), {.gpus = 8, .pod_group = "big"}));
  for (int i = 0; i < 4; ++i) world.add_pod(pod("ml", fmt::format("second-{}", i), {.gpus = 8, .pod_group = "second"}));
  const Decisions decisions = world.cycle();
  ASSERT_EQ(decisions.starts.size(), 1U);
  const StartDecision& start = decisions.starts.front();
  EXPECT_EQ(start.pod_group, "ml/big");
  ASSERT_EQ(start.bindings.size(), 4U);
  std::set<std::string> nodes;
  for (const PodBindingDecision& binding : start.bindings) {
    nodes.insert(binding.placement.node);
    EXPECT_EQ(binding.placement.devices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  }
  EXPECT_EQ(nodes.size(), 4U);
  const WaitingWorkload* waiting = waiting_of(decisions, "ml/second");
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(waiting->reason, "Unschedulable");
  EXPECT_EQ(waiting->pod_keys.size(), 4U);
}

TEST(AdapterDecisions, APodGroupThatNeedsOneRackStartsInTheRackThatHoldsItOrSaysWhy) {
  // node-0 and node-1 in rack r0, node-2 and node-3 in r1; node-1 runs a pod of another scheduler.
  World world;
  for (int i = 0; i < 4; ++i) {
    json node = gpu_node(fmt::format("node-{}", i), 8);
    node["metadata"]["labels"]["tessera.dev/rack"] = i < 2 ? "r0" : "r1";
    world.add_node(std::move(node));
  }
  world.add_pod(
      pod("other", "busy", {.gpus = 4, .node = "node-1", .scheduler = "default-scheduler", .phase = "Running"}));
  world.add_topology({{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
                      {"kind", "Topology"},
                      {"metadata", {{"name", "network"}}},
                      {"spec", {{"levels", json::array({{{"nodeLabel", "tessera.dev/rack"}}})}}}});
  world.add_queue(queue("team-a", "", 32));
  json group = pod_group("ml", "pair", 2);
  group["spec"]["topologyConstraint"] = {{"topology", "network"}, {"requiredTopologyLevel", "tessera.dev/rack"}};
  world.add_pod_group(group);
  json wide = pod_group("ml", "wide", 3);
  wide["spec"]["topologyConstraint"] = group["spec"]["topologyConstraint"];
  world.add_pod_group(wide);
  for (int i = 0; i < 2; ++i) world.add_pod(pod("ml", fmt::format("pair-{}", i), {.gpus = 8, .pod_group = "pair"}));
  for (int i = 0; i < 3; ++i) world.add_pod(pod("ml", fmt::format("wide-{}", i), {.gpus = 8, .pod_group = "wide"}));
  const Decisions decisions = world.cycle();
  ASSERT_EQ(decisions.starts.size(), 1U);
  EXPECT_EQ(decisions.starts.front().pod_group, "ml/pair");
  std::set<std::string> nodes;
  for (const PodBindingDecision& binding : decisions.starts.front().bindings) nodes.insert(binding.placement.node);
  EXPECT_EQ(nodes, (std::set<std::string>{"node-2", "node-3"}));
  const WaitingWorkload* waiting = waiting_of(decisions, "ml/wide");
  ASSERT_NE(waiting, nullptr);
  // pair took rack r1; r0 has 8 GPUs free on node-0 and 4 on node-1.
  EXPECT_TRUE(waiting->message.starts_with("needs 24 GPUs within one rack; the most free in a rack is 12 (rack r0);"))
      << waiting->message;
}

TEST(AdapterDecisions, PodsJoinSubgroupsByLabelAndAnUndeclaredOneHoldsTheGroup) {
  World world;
  for (int i = 0; i < 4; ++i) {
    json node = gpu_node(fmt::format("node-{}", i), 8);
    // Racks alternate: node-0 and node-2 in r0, node-1 and node-3 in r1.
    node["metadata"]["labels"]["tessera.dev/rack"] = i % 2 == 0 ? "r0" : "r1";
    world.add_node(std::move(node));
  }
  world.add_topology({{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
                      {"kind", "Topology"},
                      {"metadata", {{"name", "network"}}},
                      {"spec", {{"levels", json::array({{{"nodeLabel", "tessera.dev/rack"}}})}}}});
  world.add_queue(queue("team-a", "", 32));
  const json within_rack = {{"requiredTopologyLevel", "tessera.dev/rack"}};
  for (const std::string name : {"tp", "typo"}) {
    json group = pod_group("ml", name, 4);
    group["spec"]["topologyConstraint"] = {{"topology", "network"}, {"preferredTopologyLevel", "tessera.dev/rack"}};
    group["spec"]["subGroups"] = json::array({{{"name", "a"}, {"minMember", 2}, {"topologyConstraint", within_rack}},
                                              {{"name", "b"}, {"minMember", 2}, {"topologyConstraint", within_rack}}});
    world.add_pod_group(group);
    for (int i = 0; i < 4; ++i) {
      json member = pod("ml", fmt::format("{}-{}", name, i), {.gpus = 8, .pod_group = name});
      member["metadata"]["labels"]["scheduling.tessera.dev/subgroup"] = name == "typo" && i == 3 ? "c"
                                                                        : i < 2                  ? "a"
                                                                                                 : "b";
      world.add_pod(std::move(member));
    }
  }
  const Decisions decisions = world.cycle();
  ASSERT_EQ(decisions.starts.size(), 1U);
  std::map<std::string, std::string> node_of;
  for (const PodBindingDecision& binding : decisions.starts.front().bindings)
    node_of[binding.pod_key] = binding.placement.node;
  // The gang spans both racks; each subgroup keeps to one.
  auto rack = [&](const std::string& pod) { return node_of.at(pod) == "node-0" || node_of.at(pod) == "node-2"; };
  EXPECT_EQ(rack("ml/tp-0"), rack("ml/tp-1"));
  EXPECT_EQ(rack("ml/tp-2"), rack("ml/tp-3"));
  EXPECT_NE(rack("ml/tp-0"), rack("ml/tp-2"));
  const WaitingWorkload* held = waiting_of(decisions, "ml/typo");
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->reason, "InvalidPodGroup");
  EXPECT_NE(held->message.find("pod ml/typo-3 joins subgroup 'c', which PodGroup ml/typo does not declare"),
            std::string::npos)
      << held->message;
}

// `nodes` nodes of 8 GPUs, queue team-a, and Job ml/train of 4 pods of 8 GPUs, `pods` of which the
// Job controller has made.
void add_train_job(World& world, int nodes, int pods) {
  for (int i = 0; i < nodes; ++i) world.add_node(gpu_node(fmt::format("node-{}", i), 8));
  world.add_queue(queue("team-a", "", 32));
  world.add_job(batch_job("ml", "train", 4));
  const json by_job = controlled_by("batch/v1", "Job", "train");
  for (int i = 0; i < pods; ++i)
    world.add_pod(pod("ml", fmt::format("train-{}", i), {.gpus = 8, .controller = by_job}));
}

TEST(AdapterDecisions, AJobsPodsStartAsOneGangWithoutAPodGroup) {
  World world;
  add_train_job(world, 4, 4);
  const Decisions decisions = world.cycle();
  ASSERT_EQ(decisions.starts.size(), 1U);
  EXPECT_EQ(decisions.starts.front().workload_key, "ml/Job/train");
  EXPECT_EQ(decisions.starts.front().bindings.size(), 4U);
  ASSERT_EQ(world.snapshot().workloads.size(), 1U);
  EXPECT_EQ(world.snapshot().workloads[0].min_member(), 4);
  EXPECT_TRUE(world.snapshot().workloads[0].spec.preemptible);
  // One PodGroup to write for it, where its status goes.
  ASSERT_EQ(world.snapshot().owned_pod_groups.size(), 1U);
  EXPECT_EQ(world.snapshot().owned_pod_groups[0].pod_group_key(), "ml/job-train");
  EXPECT_EQ(world.snapshot().owned_pod_groups[0].min_member, 4);
  EXPECT_EQ(world.snapshot().workload_pod_groups[0], "ml/job-train");
  EXPECT_EQ(world.snapshot().pod_group_pods.at("ml/job-train").size(), 4U);
}

TEST(AdapterDecisions, AJobThatDoesNotFitStartsNoPodAndItsJobIsTold) {
  World world;
  add_train_job(world, 3, 4);
  const Decisions decisions = world.cycle();
  EXPECT_TRUE(decisions.starts.empty());
  const WaitingWorkload* waiting = waiting_of(decisions, "ml/Job/train");
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(waiting->reason, "Unschedulable");
  EXPECT_EQ(waiting->pod_keys.size(), 4U);
  ASSERT_TRUE(waiting->owner.has_value());
  EXPECT_EQ(waiting->owner->describe(), "Job ml/train");
  EXPECT_EQ(waiting->owner->uid, "uid-train");
}

TEST(AdapterDecisions, AJobsPodsWaitForTheirSiblingsAndForTheJob) {
  World world;
  add_train_job(world, 4, 3);
  world.add_pod(pod("ml", "unseen-0", {.gpus = 1, .controller = controlled_by("batch/v1", "Job", "unseen")}));
  const Decisions decisions = world.cycle();
  EXPECT_TRUE(decisions.starts.empty());
  const WaitingWorkload* incomplete = waiting_of(decisions, "ml/Job/train");
  ASSERT_NE(incomplete, nullptr);
  EXPECT_EQ(incomplete->reason, "GangIncomplete");
  EXPECT_EQ(incomplete->message, "Job ml/train needs 4 pods to start together and has 3");
  EXPECT_EQ(incomplete->pod_group, "ml/job-train");  // its PodGroup's status says so too
  ASSERT_TRUE(incomplete->owner.has_value());
  const WaitingWorkload* unseen = waiting_of(decisions, "ml/Job/unseen");
  ASSERT_NE(unseen, nullptr);
  EXPECT_EQ(unseen->reason, "OwnerNotSeen");
  EXPECT_TRUE(unseen->pod_group.empty());                   // no PodGroup before its size is known
  EXPECT_EQ(world.snapshot().owned_pod_groups.size(), 1U);  // train's only
  EXPECT_NE(unseen->message.find("Job ml/unseen"), std::string::npos) << unseen->message;
}

TEST(AdapterDecisions, ARayClusterStartsItsHeadAndMinimumWorkersTogetherAndAutoscaledOnesWhereThereIsRoom) {
  World world;
  for (int i = 0; i < 3; ++i) world.add_node(gpu_node(fmt::format("node-{}", i), 8));
  world.add_queue(queue("research", "", 24));
  // The autoscaler asked for 4 workers of 8 GPUs; 2 must run. The cluster holds the head and 2.
  world.add_raycluster(
      {{"apiVersion", "ray.io/v1"},
       {"kind", "RayCluster"},
       {"metadata",
        {{"name", "tune"},
         {"namespace", "ml"},
         {"uid", "uid-tune"},
         {"labels", {{"scheduling.tessera.dev/queue", "research"}}}}},
       {"spec",
        {{"enableInTreeAutoscaling", true},
         {"workerGroupSpecs", json::array({{{"groupName", "gpu"}, {"replicas", 4}, {"minReplicas", 2}}})}}}});
  const json by_cluster = controlled_by("ray.io/v1", "RayCluster", "tune");
  world.add_pod(pod("ml", "tune-head", {.gpus = 8, .queue = "", .controller = by_cluster}));
  for (int i = 0; i < 4; ++i)
    world.add_pod(pod("ml", fmt::format("tune-gpu-worker-{}", i), {.gpus = 8, .queue = "", .controller = by_cluster}));
  const Decisions decisions = world.cycle();
  ASSERT_EQ(world.snapshot().workloads.size(), 1U);
  EXPECT_EQ(world.snapshot().workloads[0].min_member(), 3);
  EXPECT_EQ(world.snapshot().workloads[0].spec.queue, "research");  // the RayCluster's label
  const StartDecision* start = start_of(decisions, "ml/RayCluster/tune");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->bindings.size(), 3U);  // the gang; the extras wait for room
  EXPECT_EQ(world.snapshot().workload_pod_groups[0], "ml/raycluster-tune");
}

TEST(AdapterDecisions, ARayClusterThatDoesNotFitStartsNoPod) {
  World world;
  for (int i = 0; i < 3; ++i) world.add_node(gpu_node(fmt::format("node-{}", i), 8));
  world.add_queue(queue("research", "", 24));
  // Without the autoscaler the head and its 3 workers must all run: 32 GPUs on 24.
  world.add_raycluster({{"apiVersion", "ray.io/v1"},
                        {"kind", "RayCluster"},
                        {"metadata", {{"name", "big"}, {"namespace", "ml"}, {"uid", "uid-big"}}},
                        {"spec", {{"workerGroupSpecs", json::array({{{"groupName", "gpu"}, {"replicas", 3}}})}}}});
  const json by_cluster = controlled_by("ray.io/v1", "RayCluster", "big");
  world.add_pod(pod("ml", "big-head", {.gpus = 8, .queue = "research", .controller = by_cluster}));
  for (int i = 0; i < 3; ++i)
    world.add_pod(
        pod("ml", fmt::format("big-gpu-worker-{}", i), {.gpus = 8, .queue = "research", .controller = by_cluster}));
  const Decisions decisions = world.cycle();
  EXPECT_TRUE(decisions.starts.empty());
  const WaitingWorkload* waiting = waiting_of(decisions, "ml/RayCluster/big");
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(waiting->reason, "Unschedulable");
  ASSERT_TRUE(waiting->owner.has_value());
  EXPECT_EQ(waiting->owner->describe(), "RayCluster ml/big");
}

TEST(AdapterDecisions, DeploymentReplicasAreNotPreemptibleUnlessTheySaySo) {
  World world;
  world.add_node(gpu_node("node-0", 8));
  world.add_queue(queue("team-a", "", 8));
  const json by_replica_set = controlled_by("apps/v1", "ReplicaSet", "serve-7d9f");
  world.add_pod(pod("ml", "serve-a", {.controller = by_replica_set}));
  json willing = pod("ml", "serve-b", {.controller = by_replica_set});
  willing["metadata"]["annotations"]["scheduling.tessera.dev/preemptible"] = "true";
  world.add_pod(willing);
  world.cycle();
  ASSERT_EQ(world.snapshot().workloads.size(), 2U);
  for (WorkloadId id = 0; id < 2; ++id) {
    const Workload& workload = world.snapshot().workloads[id];
    EXPECT_EQ(workload.min_member(), 1);
    EXPECT_EQ(workload.spec.preemptible, workload.spec.name == "ml/serve-b") << workload.spec.name;
  }
}

TEST(AdapterDecisions, IncompleteGangIsHeldWithItsCount) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_queue(queue("team-a", "", 8));
  world.add_pod_group(pod_group("ml", "job", 4));
  for (int i = 0; i < 3; ++i) world.add_pod(pod("ml", fmt::format("job-{}", i), {.gpus = 1, .pod_group = "job"}));
  const Decisions decisions = world.cycle();
  EXPECT_TRUE(decisions.starts.empty());
  const WaitingWorkload* waiting = waiting_of(decisions, "ml/job");
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(waiting->reason, "GangIncomplete");
  EXPECT_NE(waiting->message.find("needs 4 pods"), std::string::npos) << waiting->message;
}

TEST(AdapterDecisions, PodsWithoutQueueOrWithUnknownQueueAreHeld) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_queue(queue("team-a", "", 8));
  world.add_pod(pod("ml", "lost", {.queue = ""}));
  world.add_pod(pod("ml", "typo", {.queue = "team-z"}));
  const Decisions decisions = world.cycle();
  EXPECT_TRUE(decisions.starts.empty());
  ASSERT_NE(waiting_of(decisions, "ml/lost"), nullptr);
  EXPECT_EQ(waiting_of(decisions, "ml/lost")->reason, "NoQueue");
  ASSERT_NE(waiting_of(decisions, "ml/typo"), nullptr);
  EXPECT_NE(waiting_of(decisions, "ml/typo")->message.find("'team-z' does not exist"), std::string::npos);
}

TEST(AdapterDecisions, OtherSchedulersPodsKeepTheirGpusOutOfReach) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_queue(queue("team-a", "", 8));
  // The default scheduler's pod holds 6 GPUs: Tessera sees 2, on devices 0 and 1.
  world.add_pod(pod("other", "foreign",
                    {.gpus = 6, .queue = "", .node = "node-0", .scheduler = "default-scheduler", .phase = "Running"}));
  world.add_pod(pod("ml", "fits", {.gpus = 2}));
  world.add_pod(pod("ml", "too-big", {.gpus = 4}));
  const Decisions decisions = world.cycle();
  const StartDecision* fits = start_of(decisions, "ml/fits");
  ASSERT_NE(fits, nullptr);
  EXPECT_EQ(fits->bindings.front().placement.devices, (std::vector<int>{0, 1}));
  ASSERT_NE(waiting_of(decisions, "ml/too-big"), nullptr);
}

TEST(AdapterDecisions, BoundPodsKeepTheirAnnotatedDevices) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_queue(queue("team-a", "", 8));
  world.add_pod(pod("ml", "running", {.gpus = 2, .node = "node-0", .gpu_index = "3,4", .phase = "Running"}));
  world.add_pod(pod("ml", "new", {.gpus = 4}));
  const Decisions decisions = world.cycle();
  const StartDecision* start = start_of(decisions, "ml/new");
  ASSERT_NE(start, nullptr);
  for (int device : start->bindings.front().placement.devices) EXPECT_TRUE(device != 3 && device != 4) << device;
}

TEST(AdapterDecisions, FractionalPodGetsDeviceAndEnvironment) {
  World world;
  world.add_node(gpu_node("node-0", 2)).add_queue(queue("team-a", "", 2));
  world.add_pod(pod("ml", "notebook", {.fraction = "0.5", .workload_type = "interactive"}));
  const Decisions decisions = world.cycle();
  const StartDecision* start = start_of(decisions, "ml/notebook");
  ASSERT_NE(start, nullptr);
  const PodBindingDecision& binding = start->bindings.front();
  EXPECT_TRUE(binding.fractional);
  EXPECT_EQ(binding.placement.milli_per_device, 500);
  ASSERT_EQ(binding.placement.devices.size(), 1U);
  const json annotations = gpu_annotations(binding);
  EXPECT_EQ(annotations["scheduling.tessera.dev/gpu-portion"], "500");
  const std::string env = annotations["scheduling.tessera.dev/gpu-env"];
  EXPECT_NE(env.find(fmt::format("NVIDIA_VISIBLE_DEVICES={}\n", binding.placement.devices.front())), std::string::npos);
  EXPECT_NE(env.find("TESSERA_GPU_PORTION=0.5\n"), std::string::npos) << env;
}

// One 80 GiB device in the pool "inference"; three pods of 20 GiB requests and 40 GiB limits.
World inference_world() {
  World world;
  json node = gpu_node("node-0", 1);
  node["metadata"]["labels"]["scheduling.tessera.dev/node-pool"] = "inference";
  world.add_node(node).add_queue(queue("team-a", "", 2));
  for (int i = 0; i < 3; ++i) {
    world.add_pod(pod("serve", fmt::format("llm-{}", i),
                      {.gpu_memory = "20Gi", .gpu_memory_limit = "40Gi", .gpu_memory_resolver = "swap"}));
  }
  return world;
}

TEST(AdapterDecisions, GpuMemoryLimitsOvercommitAsFarAsTheNodesPoolLets) {
  World world = inference_world();
  world.overcommit().milli_by_pool = {{"inference", 1500}};
  const Decisions decisions = world.cycle();
  for (int i = 0; i < 3; ++i) {
    const StartDecision* start = start_of(decisions, fmt::format("serve/llm-{}", i));
    ASSERT_NE(start, nullptr) << i;
    const PodBindingDecision& binding = start->bindings.front();
    EXPECT_EQ(binding.gpu_memory, (GpuMemoryTerms{20 * kGiB, 40 * kGiB, "swap"}));
    const json annotations = gpu_annotations(binding);
    EXPECT_EQ(annotations["scheduling.tessera.dev/gpu-memory-limit-bytes"], "42949672960");
    const std::string env = annotations["scheduling.tessera.dev/gpu-env"];
    EXPECT_NE(env.find("TESSERA_GPU_MEMORY_RESOLVER=swap\n"), std::string::npos) << env;
  }
}

TEST(AdapterDecisions, WithoutOvercommitAPodWaitsForLimitRoomAndSaysSo) {
  World world = inference_world();  // the pool names no ratio: 1
  const Decisions decisions = world.cycle();
  EXPECT_EQ(decisions.starts.size(), 2U);
  const WaitingWorkload* waiting = waiting_of(decisions, "serve/llm-2");
  ASSERT_NE(waiting, nullptr);
  EXPECT_NE(waiting->message.find(
                "GPU memory limits: 1 node has room for the 20Gi request but not for the 40Gi limit at overcommit 1"),
            std::string::npos)
      << waiting->message;
}

TEST(AdapterDecisions, ReclaimNamesVictimsForTheStarvedQueue) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_node(gpu_node("node-1", 8));
  world.add_queue(queue("org", "", 16)).add_queue(queue("team-a", "org", 8)).add_queue(queue("team-b", "org", 8));
  // team-a borrowed all 16 GPUs, an hour ago.
  for (int i = 0; i < 16; ++i) {
    world.add_pod(
        pod("a", fmt::format("w-{}", i),
            {.gpus = 1, .node = i < 8 ? "node-0" : "node-1", .gpu_index = std::to_string(i % 8), .phase = "Running"}));
  }
  world.add_pod_group(pod_group("b", "job", 2, "team-b"));
  for (int i = 0; i < 2; ++i)
    world.add_pod(pod("b", fmt::format("job-{}", i), {.gpus = 4, .pod_group = "job", .queue = ""}));
  const Decisions decisions = world.cycle();
  const StartDecision* start = start_of(decisions, "b/job");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->action, Action::kReclaim);
  EXPECT_EQ(start->bindings.size(), 2U);
  ASSERT_EQ(start->victims.size(), 8U);  // exactly the GPUs needed
  for (const VictimDecision& victim : start->victims) {
    EXPECT_EQ(victim.namespace_name, "a");
    EXPECT_EQ(victim.action, Action::kReclaim);
  }
}

// Job ml/train of `pods` pods x 8 GPUs, pod i on node-i since half an hour ago; the first
// `failed` of them Failed.
void add_running_job(World& world, int pods, int failed = 0) {
  world.add_job(batch_job("ml", "train", pods));
  const json by_job = controlled_by("batch/v1", "Job", "train");
  for (int i = 0; i < pods; ++i) {
    world.add_pod(pod("ml", fmt::format("train-{}", i),
                      {.gpus = 8,
                       .node = fmt::format("node-{}", i),
                       .gpu_index = "0,1,2,3,4,5,6,7",
                       .phase = i < failed ? "Failed" : "Running",
                       .controller = by_job}));
  }
}

TEST(AdapterDecisions, AReclaimedJobIsEvictedAsOneGangAndItsJobNamed) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_node(gpu_node("node-1", 8));
  world.add_queue(queue("org", "", 16)).add_queue(queue("team-a", "org", 0)).add_queue(queue("team-b", "org", 16));
  // team-a's Job of 2 pods x 8 GPUs borrowed the whole cluster half an hour ago.
  add_running_job(world, 2);
  // team-b wants its quota back.
  world.add_pod_group(pod_group("b", "job", 2, "team-b"));
  for (int i = 0; i < 2; ++i)
    world.add_pod(pod("b", fmt::format("job-{}", i), {.gpus = 8, .pod_group = "job", .queue = ""}));
  const Decisions decisions = world.cycle();
  const StartDecision* start = start_of(decisions, "b/job");
  ASSERT_NE(start, nullptr) << (waiting_of(decisions, "b/job") ? waiting_of(decisions, "b/job")->message : "");
  ASSERT_EQ(start->victims.size(), 2U);
  for (const VictimDecision& victim : start->victims) EXPECT_EQ(victim.workload_key, "ml/Job/train");
  ASSERT_EQ(decisions.evicted.size(), 1U);
  const EvictedWorkload& gang = decisions.evicted.at("ml/Job/train");
  EXPECT_EQ(gang.pod_group, "ml/job-train");
  ASSERT_TRUE(gang.owner.has_value());
  EXPECT_EQ(gang.owner->describe(), "Job ml/train");
  EXPECT_EQ(gang.queue, "team-a");
  EXPECT_EQ(gang.action, Action::kReclaim);
  EXPECT_EQ(gang.pods, 2);
  EXPECT_DOUBLE_EQ(gang.gpus, 16);
  EXPECT_DOUBLE_EQ(gang.started_at, kNow - 1800);
}

TEST(AdapterDecisions, AJobWithAFailedPodRunsOnAsTheSameWorkload) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_node(gpu_node("node-1", 8)).add_node(gpu_node("node-2", 8));
  world.add_node(gpu_node("node-3", 8));
  world.add_queue(queue("team-a", "", 32));
  add_running_job(world, 4, 1);
  world.cycle();
  const Snapshot& snapshot = world.snapshot();
  ASSERT_EQ(snapshot.workload_pod_groups.size(), 1U);
  EXPECT_EQ(snapshot.workload_pod_groups[0], "ml/job-train");
  EXPECT_EQ(snapshot.pod_phases.at("ml/train-0"), PodPhase::kFailed);
  EXPECT_DOUBLE_EQ(snapshot.workloads[0].started_at, kNow - 1800);
}

TEST(AdapterDecisions, AGangItsKubeletsHaveNotStartedYetHoldsItsGpusFromItsBinding) {
  World world;
  for (int i = 0; i < 4; ++i) world.add_node(gpu_node(fmt::format("node-{}", i), 8));
  world.add_queue(queue("team-a", "", 32));
  world.add_job(batch_job("ml", "train", 4));
  // Bound ten minutes ago; no kubelet has started them (no startTime): a pod failing now throws
  // away the ten minutes its gang held the GPUs, not nothing.
  for (int i = 0; i < 4; ++i) {
    json bound = pod("ml", fmt::format("train-{}", i),
                     {.gpus = 8,
                      .node = fmt::format("node-{}", i),
                      .gpu_index = "0,1,2,3,4,5,6,7",
                      .started = "",
                      .controller = controlled_by("batch/v1", "Job", "train")});
    bound["status"]["conditions"] =
        json::array({{{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", "2027-01-15T07:50:00Z"}}});
    world.add_pod(bound);
  }
  world.cycle();
  ASSERT_EQ(world.snapshot().workloads.size(), 1U);
  EXPECT_DOUBLE_EQ(world.snapshot().workloads[0].started_at, kNow - 600);
}

TEST(AdapterDecisions, RoomBeingMadeIsNotMadeTwice) {
  World world;
  world.add_node(gpu_node("node-0", 8));
  world.add_queue(queue("org", "", 8)).add_queue(queue("team-a", "org", 4)).add_queue(queue("team-b", "org", 4));
  for (int i = 0; i < 8; ++i) {
    world.add_pod(
        pod("a", fmt::format("w-{}", i),
            {.gpus = 1, .node = "node-0", .gpu_index = std::to_string(i), .phase = "Running", .terminating = i < 2}));
  }
  world.add_pod(pod("b", "job", {.gpus = 4, .queue = "team-b"}));
  // Four of team-a's pods are being evicted for b/job (the cache shows two terminating so far):
  // its plan holds their devices.
  RoomPlan plan;
  plan.bindings["b/job"] = PodPlacement{"node-0", {0, 1, 2, 3}, 1000};
  for (int i = 0; i < 4; ++i) plan.victims.insert(fmt::format("a/w-{}", i));
  plan.created_at = kNow - 1;
  world.memory().plans["b/job"] = plan;
  const Decisions decisions = world.cycle();
  EXPECT_TRUE(decisions.starts.empty()) << "the plan's workload already holds its room";
  EXPECT_EQ(world.result().evictions.size(), 0U);
  // The engine saw b/job running on the victims' devices, and the victims holding nothing.
  const Snapshot& snapshot = world.snapshot();
  ASSERT_EQ(snapshot.workload_keys.size(), 5U);  // four of team-a's pods, and b/job
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(snapshot.workload_keys.size()); ++id) {
    EXPECT_TRUE(snapshot.workloads.is_running(id, *snapshot.cluster))
        << snapshot.workload_keys[static_cast<size_t>(id)];
  }
  EXPECT_EQ(snapshot.cluster->node_state(0).idle_devices(), 0);
}

TEST(AdapterDecisions, PartlyBoundGangCompletesAsAGang) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_node(gpu_node("node-1", 8));
  world.add_queue(queue("team-a", "", 16));
  world.add_pod_group(pod_group("ml", "job", 3));
  world.add_pod(pod("ml", "job-0",
                    {.gpus = 4, .pod_group = "job", .node = "node-0", .gpu_index = "0,1,2,3", .phase = "Running"}));
  world.add_pod(pod("ml", "job-1", {.gpus = 4, .pod_group = "job"}));
  world.add_pod(pod("ml", "job-2", {.gpus = 4, .pod_group = "job"}));
  const Decisions decisions = world.cycle();
  const StartDecision* start = start_of(decisions, "ml/job");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->bindings.size(), 2U);
  for (const PodBindingDecision& binding : start->bindings) {
    if (binding.placement.node == "node-0") {
      EXPECT_EQ(binding.placement.devices, (std::vector<int>{4, 5, 6, 7}));
    }
  }
}

TEST(AdapterDecisions, PodGroupStatusCarriesTheReason) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_queue(queue("team-a", "", 8));
  world.add_pod_group(pod_group("ml", "huge", 2));
  for (int i = 0; i < 2; ++i) world.add_pod(pod("ml", fmt::format("huge-{}", i), {.gpus = 8, .pod_group = "huge"}));
  const Decisions decisions = world.cycle();
  PodGroupProgress progress;
  progress.waiting["ml/huge"] = waiting_of(decisions, "ml/huge");
  ASSERT_NE(progress.waiting["ml/huge"], nullptr);
  const json status = pod_group_status(*world.observed().pod_groups.at("ml/huge"), world.snapshot(), progress, kNow);
  EXPECT_EQ(status["phase"], "Pending");
  EXPECT_EQ(status["pending"], 2);
  EXPECT_EQ(status["conditions"][0]["type"], "Scheduled");
  EXPECT_EQ(status["conditions"][0]["status"], "False");
  EXPECT_EQ(status["conditions"][0]["reason"], "Unschedulable");
  EXPECT_NE(status["conditions"][0]["message"].get<std::string>().find("GPU"), std::string::npos)
      << status["conditions"][0]["message"];
}

// The estimate goes into status.startEstimate; a time that only drifts keeps the one written, so
// the PodGroup is not rewritten every cycle; without an estimate, the reason there is none.
TEST(AdapterDecisions, PodGroupStatusCarriesTheStartEstimate) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_queue(queue("team-a", "", 8));
  world.add_pod_group(pod_group("ml", "huge", 2));
  for (int i = 0; i < 2; ++i) world.add_pod(pod("ml", fmt::format("huge-{}", i), {.gpus = 8, .pod_group = "huge"}));
  Decisions decisions = world.cycle();
  const auto id = std::find(world.snapshot().workload_keys.begin(), world.snapshot().workload_keys.end(), "ml/huge") -
                  world.snapshot().workload_keys.begin();
  StartEstimates estimates;
  estimates.estimates.push_back({static_cast<WorkloadId>(id), kNow + 3600, Action::kAllocate, EstimateCause::kWorkEnds,
                                 0, 8, true});
  attach_estimates(decisions, world.snapshot(), estimates);
  PodGroupProgress progress;
  progress.waiting["ml/huge"] = waiting_of(decisions, "ml/huge");
  ASSERT_NE(progress.waiting["ml/huge"], nullptr);
  json object = *world.observed().pod_groups.at("ml/huge");
  const json status = pod_group_status(object, world.snapshot(), progress, kNow);
  EXPECT_EQ(status["startEstimate"]["time"], wire::format_time(kNow + 3600));
  EXPECT_EQ(status["startEstimate"]["message"], "when 8 GPUs of queue team-a's borrowed work end");

  // Written; a minute later the estimate moved by two minutes (under a tenth of the wait): kept.
  object["status"] = status;
  estimates.estimates[0].start = kNow + 3720;
  attach_estimates(decisions, world.snapshot(), estimates);
  EXPECT_FALSE(status_differs(object, pod_group_status(object, world.snapshot(), progress, kNow + 60)));
  // By an hour: written anew.
  estimates.estimates[0].start = kNow + 7200;
  attach_estimates(decisions, world.snapshot(), estimates);
  EXPECT_EQ(pod_group_status(object, world.snapshot(), progress, kNow + 60)["startEstimate"]["time"],
            wire::format_time(kNow + 7200));

  StartEstimates none;
  none.unreached.push_back(static_cast<WorkloadId>(id));
  none.stop = EstimateStop::kNoMoreEnds;
  Decisions later = world.cycle();
  attach_estimates(later, world.snapshot(), none);
  progress.waiting["ml/huge"] = waiting_of(later, "ml/huge");
  const json unestimated = pod_group_status(object, world.snapshot(), progress, kNow);
  EXPECT_FALSE(unestimated["startEstimate"].contains("time"));
  EXPECT_EQ(unestimated["startEstimate"]["message"],
            "no estimate: it waits for work with no time limit or expected runtime to end");
}

// A PodGroup of one pod of 16 GPUs, too big for any node of the tests below: it waits.
void add_waiting_group(World& world, const std::string& name, const std::string& queue_name, const std::string& created,
                       std::optional<int> priority = std::nullopt) {
  json group = pod_group("ml", name, 1, queue_name);
  group["metadata"]["creationTimestamp"] = created;
  if (priority) group["spec"]["priority"] = *priority;
  world.add_pod_group(std::move(group));
  world.add_pod(pod("ml", name + "-0", {.gpus = 16, .pod_group = name, .queue = ""}));
}

// Each waiting workload's place in its own queue, in the order the cycle considers them there:
// the higher priority first, then the older; another queue's count apart.
TEST(AdapterDecisions, PodGroupStatusCarriesItsPlaceInItsQueue) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_queue(queue("team-a", "", 4)).add_queue(queue("team-b", "", 4));
  add_waiting_group(world, "new", "team-a", "2027-01-15T07:10:00Z");
  add_waiting_group(world, "old", "team-a", "2027-01-15T07:00:00Z");
  add_waiting_group(world, "urgent", "team-a", "2027-01-15T07:20:00Z", 10);
  add_waiting_group(world, "other", "team-b", "2027-01-15T07:30:00Z");
  const Decisions decisions = world.cycle();
  PodGroupProgress progress;
  for (const std::string name : {"new", "old", "urgent", "other"}) {
    progress.waiting["ml/" + name] = waiting_of(decisions, "ml/" + name);
    ASSERT_NE(progress.waiting["ml/" + name], nullptr) << name;
  }
  const auto place = [&](const std::string& name) {
    return pod_group_status(*world.observed().pod_groups.at("ml/" + name), world.snapshot(), progress,
                            kNow)["queuePosition"];
  };
  EXPECT_EQ(place("urgent"), json({{"queue", "team-a"}, {"position", 1}, {"pending", 3}}));
  EXPECT_EQ(place("old"), json({{"queue", "team-a"}, {"position", 2}, {"pending", 3}}));
  EXPECT_EQ(place("new"), json({{"queue", "team-a"}, {"position", 3}, {"pending", 3}}));
  EXPECT_EQ(place("other"), json({{"queue", "team-b"}, {"position", 1}, {"pending", 1}}));
}

// Far back in a long queue, a place that moved by less than a tenth keeps the figure written
// before, so one start does not rewrite every PodGroup behind it; the first ten places are exact.
TEST(AdapterDecisions, APlaceFarBackInALongQueueIsRewrittenOnlyWhenItMovesByATenth) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_queue(queue("team-a", "", 4));
  add_waiting_group(world, "job", "team-a", "2027-01-15T07:10:00Z");
  const Decisions decisions = world.cycle();
  PodGroupProgress progress;
  progress.waiting["ml/job"] = waiting_of(decisions, "ml/job");
  ASSERT_NE(progress.waiting["ml/job"], nullptr);
  json object = *world.observed().pod_groups.at("ml/job");
  const auto place_after = [&](const json& written) {
    object["status"]["queuePosition"] = written;
    return pod_group_status(object, world.snapshot(), progress, kNow)["queuePosition"];
  };
  const json now = {{"queue", "team-a"}, {"position", 1}, {"pending", 1}};
  EXPECT_EQ(place_after(nullptr), now);
  EXPECT_EQ(place_after(json({{"queue", "team-a"}, {"position", 2}, {"pending", 1}})), now) << "exact near the front";
  // Written as 11 of 11 (a tenth of 11 is 1): 1 of 1 is further than that, so it is rewritten.
  EXPECT_EQ(place_after(json({{"queue", "team-a"}, {"position", 11}, {"pending", 11}})), now);
  EXPECT_EQ(place_after(json({{"queue", "team-b"}, {"position", 1}, {"pending", 1}})), now) << "another queue";
  // Far back, within a tenth: kept as written.
  WaitingWorkload far_back = *progress.waiting["ml/job"];
  far_back.queue_place->position = 1005;
  far_back.queue_place->pending = 2003;
  progress.waiting["ml/job"] = &far_back;
  const json written = {{"queue", "team-a"}, {"position", 1050}, {"pending", 2010}};
  EXPECT_EQ(place_after(written), written);
  far_back.queue_place->position = 940;
  EXPECT_EQ(place_after(written), json({{"queue", "team-a"}, {"position", 940}, {"pending", 2003}}));
}

// What consolidate, reclaim and preempt found for a workload they could not make room for, one
// entry each in the order they tried, apart from the sentence; none once it runs.
TEST(AdapterDecisions, PodGroupStatusCarriesWhatTheActionsFoundWhenTheyTriedToMakeRoom) {
  World world;
  world.add_node(gpu_node("node-0", 8)).add_node(gpu_node("node-1", 8));
  world.add_queue(queue("team-a", "", 8)).add_queue(queue("team-b", "", 8));
  // Each queue holds its deserved 8 GPUs, an hour ago: team-b's new job may take nothing back.
  for (int i = 0; i < 16; ++i) {
    world.add_pod(pod(i < 8 ? "a" : "b", fmt::format("w-{}", i),
                      {.gpus = 1,
                       .queue = i < 8 ? "team-a" : "team-b",
                       .node = i < 8 ? "node-0" : "node-1",
                       .gpu_index = std::to_string(i % 8),
                       .phase = "Running"}));
  }
  world.add_pod_group(pod_group("b", "job", 1, "team-b"));
  world.add_pod(pod("b", "job-0", {.gpus = 4, .pod_group = "job", .queue = ""}));
  const Decisions decisions = world.cycle();
  PodGroupProgress progress;
  progress.waiting["b/job"] = waiting_of(decisions, "b/job");
  ASSERT_NE(progress.waiting["b/job"], nullptr);
  json object = *world.observed().pod_groups.at("b/job");
  const json status = pod_group_status(object, world.snapshot(), progress, kNow);
  EXPECT_EQ(status["roomAttempts"], json::parse(R"([
              {"action": "consolidate", "outcome": "moving running work would not make room"},
              {"action": "reclaim", "outcome": "no reclaim: queue 'team-b' holds 8 gpu, at or above its fair share of 8 gpu"},
              {"action": "preempt", "outcome": "no lower-priority preemptible work in its queue frees enough room"}])"))
      << status.dump(2);
  // Each finding is also in the sentence.
  const std::string message = status["conditions"][0]["message"];
  for (const json& attempt : status["roomAttempts"]) {
    if (attempt["action"] == "consolidate") continue;  // said only where reclaim was not tried
    EXPECT_NE(message.find(attempt["outcome"].get<std::string>()), std::string::npos) << message;
  }
  // Once it runs, neither its place nor the attempts are kept (null clears them in the patch).
  object["status"] = status;
  progress.bound.insert("b/job-0");
  const json running = pod_group_status(object, world.snapshot(), progress, kNow);
  EXPECT_EQ(running["phase"], "Running");
  EXPECT_TRUE(running["roomAttempts"].is_null());
  EXPECT_TRUE(running["queuePosition"].is_null());
  EXPECT_TRUE(status_differs(object, running));
}

TEST(AdapterDecisions, QueueStatusReportsAllocationAndFairShare) {
  World world;
  world.add_node(gpu_node("node-0", 8));
  world.add_queue(queue("org", "", 8)).add_queue(queue("team-a", "org", 2)).add_queue(queue("team-b", "org", 6));
  for (int i = 0; i < 3; ++i) world.add_pod(pod("a", fmt::format("w-{}", i), {.gpus = 1}));
  // Too big for the node: it waits, and its GPUs are what the queue still asks for.
  world.add_pod(pod("a", "huge", {.gpus = 16}));
  world.cycle();
  const auto statuses = queue_statuses(world.snapshot(), world.result(), world.observed().queues, kNow);
  EXPECT_EQ(statuses.at("team-a")["allocated"]["gpu"], "3");
  EXPECT_EQ(statuses.at("team-a")["deserved"]["gpu"], "2");
  EXPECT_EQ(statuses.at("team-b")["deserved"]["gpu"], "6");
  EXPECT_EQ(statuses.at("team-a")["pendingRequested"]["gpu"], "16");
  EXPECT_EQ(statuses.at("team-b")["pendingRequested"]["gpu"], "0");
  EXPECT_EQ(statuses.at("org")["pendingRequested"]["gpu"], "16");
  EXPECT_EQ(statuses.at("team-a")["pendingWorkloads"], 1);
  EXPECT_EQ(statuses.at("team-a")["runningWorkloads"], 3);
  EXPECT_EQ(statuses.at("org")["allocated"]["gpu"], "3");
  EXPECT_EQ(format_resource("cpu", 1500), "1500m");
  EXPECT_EQ(format_resource("gpu", 2.5), "2.5");
  EXPECT_EQ(statuses.at("team-a")["conditions"][0]["type"], "Accepted");
  EXPECT_EQ(statuses.at("team-a")["conditions"][0]["status"], "True");
  EXPECT_EQ(statuses.at("team-a")["conditions"][0]["reason"], "Valid");
}

// One Queue with a cyclic parent used to refuse the whole snapshot: nothing was scheduled.
TEST(AdapterDecisions, ABadQueueStopsOnlyItselfAndSaysSoOnItsStatus) {
  World world;
  world.add_node(gpu_node("node-0", 8));
  json negative = queue("negative", "", 1);
  negative["spec"]["resources"]["gpu"]["deserved"] = "-1";
  world.add_queue(queue("team-a", "", 4))
      .add_queue(queue("loop-a", "loop-b", 1))
      .add_queue(queue("loop-b", "loop-a", 1))
      .add_queue(queue("in-loop", "loop-a", 1))
      .add_queue(negative)
      .add_queue(queue("small-parent", "", 1))
      .add_queue(queue("big-child", "small-parent", 2));
  world.add_pod(pod("ml", "good", {.gpus = 1, .queue = "team-a"}));
  world.add_pod(pod("ml", "stuck", {.gpus = 1, .queue = "in-loop"}));
  const Decisions decisions = world.cycle();
  ASSERT_NE(start_of(decisions, "ml/good"), nullptr);
  const WaitingWorkload* stuck = waiting_of(decisions, "ml/stuck");
  ASSERT_NE(stuck, nullptr);
  EXPECT_EQ(stuck->reason, "QueueNotUsable");
  EXPECT_NE(stuck->message.find("queue 'in-loop' is not usable"), std::string::npos) << stuck->message;

  const auto statuses = queue_statuses(world.snapshot(), world.result(), world.observed().queues, kNow);
  const auto accepted = [&](const std::string& name) { return statuses.at(name)["conditions"][0]; };
  EXPECT_EQ(accepted("loop-a")["status"], "False");
  EXPECT_EQ(accepted("loop-a")["reason"], "CyclicParent");
  EXPECT_EQ(accepted("loop-b")["reason"], "CyclicParent");
  EXPECT_EQ(accepted("in-loop")["reason"], "ParentExcluded");
  EXPECT_EQ(accepted("negative")["reason"], "InvalidSpec");
  EXPECT_NE(accepted("negative")["message"].get<std::string>().find("negative"), std::string::npos);
  EXPECT_TRUE(statuses.at("negative")["allocated"].is_null());  // figures removed by the merge patch
  EXPECT_EQ(accepted("big-child")["status"], "True");
  EXPECT_EQ(accepted("big-child")["reason"], "DeservedExceedsParent");
  EXPECT_EQ(accepted("team-a")["reason"], "Valid");

  // Written once: the status a patch leaves behind no longer differs.
  json stored = *world.observed().queues.at("negative");
  stored["status"] = {{"conditions", statuses.at("negative")["conditions"]}};
  EXPECT_FALSE(status_differs(stored, statuses.at("negative")));
}

}  // namespace
// A condition keeps the time it last changed while its status stays; kubectl shows how long a
// pod has been unschedulable from it.
TEST(AdapterDecisions, ConditionTransitionTimeIsKeptWhileTheStatusStays) {
  const json pod = {
      {"status",
       {{"conditions",
         {{{"type", "Ready"}, {"status", "False"}, {"lastTransitionTime", "2026-01-01T00:00:00Z"}},
          {{"type", "PodScheduled"}, {"status", "False"}, {"lastTransitionTime", "2026-02-02T00:00:00Z"}}}}}}};
  EXPECT_EQ(condition_transition_time(pod, "PodScheduled", "False", kNow), "2026-02-02T00:00:00Z");
  EXPECT_EQ(condition_transition_time(pod, "PodScheduled", "True", kNow), wire::format_time(kNow));
  EXPECT_EQ(condition_transition_time(json::object(), "PodScheduled", "False", kNow), wire::format_time(kNow));
  EXPECT_EQ(condition_transition_time(json("not an object"), "PodScheduled", "False", kNow), wire::format_time(kNow));
}

}  // namespace tessera::adapter
