// What `tessera list`, `top queues`, `top nodes` and `describe` make of the cluster's objects.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/user/cluster_objects.h"
#include "cli/user/node_fragmentation.h"
#include "cli/user/node_view.h"
#include "cli/user/queue_view.h"
#include "cli/user/workload_story.h"
#include "cli/user/workload_view.h"
#include "wire/timestamp.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

constexpr double kNow = 1800000000;  // 2027-01-15T08:00:00Z
const std::string kTenMinutesAgo = wire::format_time(kNow - 600);

json list(json items) { return {{"kind", "List"}, {"items", std::move(items)}}; }

struct PodShape {
  std::string gpus = "";      // nvidia.com/gpu limit
  std::string fraction = "";  // gpu-fraction annotation
  std::string group = "";     // pod-group label
  std::string node = "";
  std::string gpu_index = "";
  std::string portion = "";
  std::string phase = "Pending";
  std::string queue = "";
  json controller = nullptr;
};

json pod(const std::string& ns, const std::string& name, const PodShape& shape) {
  json container = {{"name", "main"}, {"image", "busybox"}};
  if (!shape.gpus.empty()) container["resources"]["limits"]["nvidia.com/gpu"] = shape.gpus;
  json metadata = {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}, {"labels", json::object()},
                   {"annotations", json::object()}, {"creationTimestamp", kTenMinutesAgo}};
  if (!shape.group.empty()) metadata["labels"]["scheduling.tessera.dev/pod-group"] = shape.group;
  if (!shape.queue.empty()) metadata["labels"]["scheduling.tessera.dev/queue"] = shape.queue;
  if (!shape.fraction.empty()) metadata["annotations"]["scheduling.tessera.dev/gpu-fraction"] = shape.fraction;
  if (!shape.gpu_index.empty()) metadata["annotations"]["scheduling.tessera.dev/gpu-index"] = shape.gpu_index;
  if (!shape.portion.empty()) metadata["annotations"]["scheduling.tessera.dev/gpu-portion"] = shape.portion;
  if (!shape.controller.is_null()) metadata["ownerReferences"] = json::array({shape.controller});
  json spec = {{"schedulerName", "tessera"}, {"containers", json::array({container})}};
  if (!shape.node.empty()) spec["nodeName"] = shape.node;
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", spec},
          {"status", {{"phase", shape.phase}}}};
}

json pod_group(const std::string& ns, const std::string& name, int min_member, const std::string& queue,
               const std::string& phase, const json& scheduled, const json& owner = nullptr) {
  json group = {{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}, {"creationTimestamp", kTenMinutesAgo}}},
                {"spec", {{"minMember", min_member}, {"queue", queue}}},
                {"status", {{"phase", phase}, {"conditions", json::array({scheduled})}}}};
  if (!owner.is_null()) group["metadata"]["ownerReferences"] = json::array({owner});
  return group;
}

json scheduled(const std::string& status, const std::string& reason, const std::string& message) {
  return {{"type", "Scheduled"}, {"status", status}, {"reason", reason}, {"message", message},
          {"lastTransitionTime", kTenMinutesAgo}};
}

json job(const std::string& ns, const std::string& name, int parallelism) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-job-" + name}}},
          {"spec", {{"parallelism", parallelism}, {"completions", parallelism}}}};
}

json controller_of(const json& owner) {
  return {{"apiVersion", owner["apiVersion"]}, {"kind", owner["kind"]}, {"name", owner["metadata"]["name"]},
          {"uid", owner["metadata"]["uid"]}, {"controller", true}};
}

// A Job's pods are found through the PodGroup Tessera wrote for it; a PodGroup's through its label.
struct TwoWorkloads {
  json train_job = job("ml", "train", 2);
  json pod_groups = list({pod_group("ml", "job-train", 2, "team-a", "Running",
                                    scheduled("True", "Scheduled", "2 of 2 pods bound"), controller_of(train_job)),
                          pod_group("ml", "notebooks", 3, "team-b", "Pending",
                                    scheduled("False", "Unschedulable",
                                              "fits on no node (2 nodes: not enough GPU memory on any device)"))});
  json pods = list({pod("ml", "train-0", {.gpus = "8", .node = "node-0", .gpu_index = "0,1,2,3,4,5,6,7",
                                          .phase = "Running", .controller = controller_of(train_job)}),
                    pod("ml", "train-1", {.gpus = "8", .node = "node-1", .gpu_index = "0,1,2,3,4,5,6,7",
                                          .phase = "Running", .controller = controller_of(train_job)}),
                    pod("ml", "nb-0", {.fraction = "0.5", .group = "notebooks"}),
                    pod("ml", "nb-1", {.fraction = "0.5", .group = "notebooks"}),
                    pod("ml", "nb-2", {.gpus = "1", .group = "notebooks"})});
  adapter::OwnerObjects owners = owner_objects(list({train_job}), list({}), list({}), list({}), list({}));
};

TEST(CliWorkloads, ListShowsEachWorkloadWithItsGpusPodsAndWhyItWaits) {
  TwoWorkloads cluster;
  const auto workloads =
      summarize_workloads(cluster.pod_groups, cluster.pods, pod_groups_of_pods(cluster.pods, cluster.owners));
  ASSERT_EQ(workloads.size(), 2u);
  EXPECT_EQ(workloads[0].name, "job-train");
  EXPECT_EQ(workloads[0].owner, "Job/train");
  EXPECT_EQ(workloads[0].gpus, "16");
  EXPECT_EQ(workloads[0].bound, 2);
  EXPECT_EQ(workloads[0].reason, "");
  EXPECT_EQ(workloads[1].gpus, "1+2x0.5");
  EXPECT_DOUBLE_EQ(workloads[1].gpu_total, 2.0);
  EXPECT_EQ(workloads[1].bound, 0);
  EXPECT_EQ(workloads[1].reason, "Unschedulable");

  const std::string table = render_table(workload_table(workloads, false, kNow), false, "");
  EXPECT_EQ(table,
            "NAME        QUEUE    STATE     GPUS      PODS   AGE   REASON\n"
            "job-train   team-a   Running   16        2/2    10m   -\n"
            "notebooks   team-b   Pending   1+2x0.5   0/3    10m   Unschedulable: fits on no node (2 nodes: not enough "
            "GPU m...\n");
  const std::string all = render_table(workload_table(workloads, true, kNow), true, "");
  EXPECT_EQ(all.rfind("NAMESPACE   NAME", 0), 0u) << all;
  EXPECT_NE(all.find("fits on no node (2 nodes: not enough GPU memory on any device)"), std::string::npos) << all;

  const json data = workload_json(workloads);
  EXPECT_EQ(data["items"][1]["podNames"], json({"nb-0", "nb-1", "nb-2"}));
  EXPECT_EQ(data["items"][0]["created"], kTenMinutesAgo);
}

TEST(CliWorkloads, AWorkloadTheSchedulerHasNotReportedOnSaysSo) {
  json group = pod_group("ml", "fresh", 1, "team-a", "", nullptr);
  group.erase("status");
  const auto workloads = summarize_workloads(list({group}), list({}), {});
  ASSERT_EQ(workloads.size(), 1u);
  EXPECT_EQ(workloads[0].state, "Pending");
  EXPECT_EQ(workloads[0].reason, "NotSeen");
  EXPECT_EQ(workloads[0].gpus, "0");
}

TEST(CliWorkloads, GpuRequestsReadAsTheyWereAsked) {
  EXPECT_EQ(gpu_request_text({}), "0");
  EXPECT_EQ(gpu_request_text({GpuRequest::whole(8), GpuRequest::whole(8)}), "16");
  EXPECT_EQ(gpu_request_text({GpuRequest::portion(250)}), "0.25");
  EXPECT_EQ(gpu_request_text({GpuRequest::memory(int64_t{20} << 30, 0), GpuRequest::memory(int64_t{20} << 30, 0)}),
            "2x20Gi");
  EXPECT_EQ(age_text(kNow - 90, kNow), "90s");
  EXPECT_EQ(age_text(0, kNow), "<unknown>");
}

json queue_object(const std::string& name, const std::string& parent, json spec_gpu, json status) {
  json queue = {{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
                {"kind", "Queue"},
                {"metadata", {{"name", name}}},
                {"spec", {{"parent", parent}, {"resources", {{"gpu", std::move(spec_gpu)}}}}}};
  if (!status.is_null()) queue["status"] = std::move(status);
  return queue;
}

json queue_status(const std::string& deserved, const std::string& fair, const std::string& allocated,
                  const std::string& pending) {
  return {{"deserved", {{"gpu", deserved}}},
          {"fairShare", {{"gpu", fair}}},
          {"allocated", {{"gpu", allocated}}},
          {"pendingRequested", {{"gpu", pending}}},
          {"runningWorkloads", 1},
          {"pendingWorkloads", 0},
          {"conditions", json::array({{{"type", "Accepted"}, {"status", "True"}, {"reason", "Valid"}}})}};
}

TEST(CliQueues, TopQueuesShowsTheTreeWithWhatEachBorrows) {
  const json queues = list({queue_object("team-b", "org", {{"deserved", 8}}, queue_status("8", "4", "2", "0")),
                            queue_object("org", "", {{"deserved", "16"}}, queue_status("16", "16", "14", "1.5")),
                            queue_object("team-a", "org", {{"deserved", "8"}, {"limit", "12"}},
                                         queue_status("8", "12", "12", "1.5")),
                            // Not reported on yet: the spec's quota, no figures.
                            queue_object("lab", "", {{"deserved", "2.5"}}, nullptr)});
  const std::vector<QueueFigures> tree = queue_tree(queues);
  ASSERT_EQ(tree.size(), 4u);
  EXPECT_EQ(render_table(queue_table(tree), false, ""),
            "QUEUE      DESERVED   FAIR-SHARE   ALLOCATED   BORROWED   PENDING\n"
            "lab        2.5        -            -           -          -\n"
            "org        16         16           14          0          1.5\n"
            "  team-a   8          12           12          4          1.5\n"
            "  team-b   8          4            2           0          0\n");
  const std::string wide = render_table(queue_table(tree), true, "");
  EXPECT_NE(wide.find("12      1 running, 0 pending   True (Valid)"), std::string::npos) << wide;
  const json data = queue_json(tree);
  EXPECT_EQ(data["items"][2]["gpu"]["borrowed"], 4.0);
  EXPECT_TRUE(data["items"][0]["gpu"]["allocated"].is_null());
}

TEST(CliQueues, ACycleOfParentsShowsEachQueueOnce) {
  const json queues = list({queue_object("a", "b", {{"deserved", 1}}, nullptr),
                            queue_object("b", "a", {{"deserved", 1}}, nullptr)});
  const std::vector<QueueFigures> tree = queue_tree(queues);
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree[0].name, "a");
  EXPECT_EQ(tree[1].name, "b");
}

json node(const std::string& name, int gpus, const std::string& model) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"nvidia.com/gpu.product", model}}}}},
          {"status", {{"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

TEST(CliNodes, TopNodesMapsEachDeviceWithFractionsAndTheQueuesHoldingThem) {
  const json nodes = list({node("node-0", 4, "A100"), node("node-1", 2, "H100")});
  const json pods = list({
      pod("ml", "whole", {.gpus = "2", .node = "node-0", .gpu_index = "0,1", .phase = "Running", .queue = "team-a"}),
      pod("ml", "half", {.fraction = "0.5", .node = "node-0", .gpu_index = "2", .portion = "500", .phase = "Running",
                         .queue = "team-b"}),
      pod("ml", "quarter", {.fraction = "0.25", .node = "node-0", .gpu_index = "2", .portion = "250",
                            .phase = "Running", .queue = "team-b"}),
      pod("ml", "done", {.gpus = "1", .node = "node-0", .gpu_index = "3", .phase = "Succeeded", .queue = "team-a"}),
      // Another scheduler's pod: its devices are not known, its GPU is counted.
      pod("ml", "other", {.gpus = "1", .node = "node-1", .phase = "Running"}),
  });
  PodQueues queues = {{"ml/whole", "team-a"}, {"ml/half", "team-b"}, {"ml/quarter", "team-b"}, {"ml/other", ""}};
  const std::vector<NodeGpus> gpus = node_gpus(nodes, pods, queues);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].device_milli, (std::vector<int>{1000, 1000, 750, 0}));
  EXPECT_EQ(device_map(gpus[0].device_milli), "[##7.]");
  EXPECT_EQ(gpus[0].free_devices(), 1);
  EXPECT_EQ(render_table(node_table(gpus), false, ""),
            "NODE     MODEL   GPUS     MAP      FREE   FRAG   QUEUES\n"
            "node-0   A100    2.75/4   [##7.]   1      0.0    team-a(2),team-b(0.75)\n"
            "node-1   H100    1/2      [#.]     1      0.0    -(1)\n");
  EXPECT_EQ(node_json(gpus)["items"][0]["deviceMilli"], json({1000, 1000, 750, 0}));
}

// Fragmentation is FGD's, against the cluster's GPU pod types: a quarter GPU in use on node-0
// leaves 0.75 of a device that a 2-GPU gang cannot use, and with one device idle beside it the
// gang fits nowhere there: all 1.75 free GPUs are fragmented for it, none for the quarter-GPU
// type; weighted half each, 0.875. node-1 is idle: every type fits whole. A finished pod is no type.
TEST(CliNodes, TopNodesShowsEachNodesFragmentationAgainstThePodTypesAndTheClustersTotal) {
  const json nodes = list({node("node-0", 2, "A100"), node("node-1", 2, "A100")});
  const json pods = list({
      pod("ml", "quarter",
          {.fraction = "0.25",
           .node = "node-0",
           .gpu_index = "0",
           .portion = "250",
           .phase = "Running",
           .queue = "team-b"}),
      pod("ml", "gang-0", {.gpus = "2", .queue = "team-a"}),
      pod("ml", "done", {.gpus = "1", .node = "node-1", .gpu_index = "0", .phase = "Succeeded", .queue = "team-a"}),
  });
  const WorkloadMix mix = gpu_pod_mix(nodes, pods);
  ASSERT_EQ(mix.types().size(), 2u);
  std::vector<NodeGpus> gpus = node_gpus(nodes, pods, {});
  add_fragmentation(gpus, nodes, pods, mix);
  EXPECT_DOUBLE_EQ(gpus[0].fragmented_milli, 875);
  EXPECT_DOUBLE_EQ(gpus[1].fragmented_milli, 0);
  EXPECT_EQ(render_table(node_table(gpus), false, ""),
            "NODE     MODEL   GPUS     MAP    FREE   FRAG   QUEUES\n"
            "node-0   A100    0.25/2   [2.]   1      0.9    -(0.25)\n"
            "node-1   A100    0/2      [..]   2      0.0    -\n");
  EXPECT_EQ(cluster_line(cluster_gpus(gpus)),
            "Cluster: 0.25 of 4 GPUs in use; 3.75 free, of which 0.9 fragmented (23.3%; 21.9% of capacity)\n");
  const json data = node_json(gpus);
  EXPECT_DOUBLE_EQ(data["items"][0]["fragmentedGpus"].get<double>(), 0.875);
  EXPECT_DOUBLE_EQ(data["cluster"]["fragmentedGpus"].get<double>(), 0.875);
  EXPECT_DOUBLE_EQ(data["cluster"]["freeGpus"].get<double>(), 3.75);

  // Once the gang is gone, the quarter-GPU type alone finds room on every device: nothing fragmented.
  const json without_gang = list({pods["items"][0], pods["items"][2]});
  std::vector<NodeGpus> after = node_gpus(nodes, without_gang, {});
  add_fragmentation(after, nodes, without_gang, gpu_pod_mix(nodes, without_gang));
  EXPECT_DOUBLE_EQ(after[0].fragmented_milli, 0);
  // With no GPU pod at all, the measure is a pod of one whole GPU: the partly used device's free part.
  const json none = list({});
  std::vector<NodeGpus> idle = node_gpus(nodes, pods, {});
  add_fragmentation(idle, nodes, pods, gpu_pod_mix(nodes, none));
  EXPECT_DOUBLE_EQ(idle[0].fragmented_milli, 750);
}

TEST(CliNodes, APodsQueueComesFromItsLabelItsPodGroupOrItsNamespace) {
  WorkloadObjects objects;
  objects.pod_groups = list({pod_group("ml", "g", 1, "from-group", "Running", scheduled("True", "Scheduled", ""))});
  objects.namespaces = list({{{"metadata", {{"name", "ml"}, {"labels", {{"scheduling.tessera.dev/queue", "from-ns"}}}}}}});
  objects.pods = list({pod("ml", "labelled", {.group = "g", .queue = "own"}), pod("ml", "grouped", {.group = "g"}),
                       pod("ml", "alone", {})});
  const PodQueues queues = pod_queues(objects);
  EXPECT_EQ(queues.at("ml/labelled"), "own");
  EXPECT_EQ(queues.at("ml/grouped"), "from-group");
  EXPECT_EQ(queues.at("ml/alone"), "from-ns");
}

TEST(CliDescribe, TheStoryHasThePodsTheQuotaAndTheEventsOfTheWorkloadAndItsOwner) {
  TwoWorkloads cluster;
  const json queues = list({queue_object("org", "", {{"deserved", 16}}, queue_status("16", "16", "16", "2")),
                            queue_object("team-b", "org", {{"deserved", 4}}, queue_status("4", "4", "1", "2"))});
  const auto event = [](const std::string& kind, const std::string& name, const std::string& reason,
                        const std::string& time) {
    const std::string uid = kind == "Job" ? "uid-job-" + name : "uid-" + name;
    return json{{"involvedObject", {{"kind", kind}, {"name", name}, {"uid", uid}}},
                {"reason", reason},
                {"type", "Warning"},
                {"message", reason + " of " + name},
                {"count", 2},
                {"lastTimestamp", time}};
  };
  const json events = list({event("Pod", "nb-0", "FailedScheduling", wire::format_time(kNow - 30)),
                            event("PodGroup", "notebooks", "Unschedulable", wire::format_time(kNow - 60)),
                            event("Pod", "train-0", "Scheduled", wire::format_time(kNow - 10))});
  json notebooks = cluster.pod_groups["items"][1];
  notebooks["metadata"]["managedFields"] = json::array({{{"manager", "tessera"}}});
  const json story = workload_story(notebooks, cluster.pods,
                                    pod_groups_of_pods(cluster.pods, cluster.owners), queues, events);
  EXPECT_FALSE(story["podGroup"]["metadata"].contains("managedFields"));
  EXPECT_EQ(story["podGroup"]["metadata"]["name"], "notebooks");
  ASSERT_EQ(story["pods"].size(), 3u);
  EXPECT_EQ(story["pods"][0]["gpus"], "0.5");
  ASSERT_EQ(story["queues"].size(), 2u);
  EXPECT_EQ(story["queues"][0]["name"], "team-b");
  EXPECT_EQ(story["queues"][1]["name"], "org");
  ASSERT_EQ(story["events"].size(), 2u);  // not the other workload's pod's
  EXPECT_EQ(story["events"][0]["object"], "PodGroup/notebooks");  // oldest first
  EXPECT_EQ(story["events"][1]["object"], "Pod/nb-0");

  const std::string text = describe_text(story, kNow);
  for (const char* expected :
       {"Name:        notebooks\n", "Queue:       team-b\n", "State:       Pending\n",
        "Scheduled:   False (Unschedulable) since " /* the time, then its age */,
        "Why:         fits on no node (2 nodes: not enough GPU memory on any device)\n",
        "Pods:        0 bound of 3 needed to start; 3 exist\n", "  nb-2   Pending   -      1",
        "  team-b   4          4            1           0          2\n", "  60s         Warning   Unschedulable",
        "  30s         Warning   FailedScheduling   Pod/nb-0"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }

  // A Job's story includes the Job's events.
  const json job_events = list({event("Job", "train", "FailedScheduling", wire::format_time(kNow - 5))});
  const json job_story = workload_story(cluster.pod_groups["items"][0], cluster.pods,
                                        pod_groups_of_pods(cluster.pods, cluster.owners), queues, job_events);
  ASSERT_EQ(job_story["events"].size(), 1u);
  EXPECT_EQ(job_story["owner"]["kind"], "Job");
  EXPECT_NE(describe_text(job_story, kNow).find("its queue is not among the cluster's Queues"), std::string::npos);
}

// The scheduler's start estimate reaches list (wide: STARTS) and describe, counted from now.
TEST(CliWorkloads, APendingWorkloadShowsWhenItIsExpectedToStartAndWhy) {
  TwoWorkloads cluster;
  json& notebooks = cluster.pod_groups["items"][1];
  notebooks["status"]["startEstimate"] = {{"time", wire::format_time(kNow + 35 * 60)},
                                          {"message", "when 16 GPUs of queue ml-research's borrowed work end"}};
  const auto workloads =
      summarize_workloads(cluster.pod_groups, cluster.pods, pod_groups_of_pods(cluster.pods, cluster.owners));
  ASSERT_EQ(workloads.size(), 2u);
  EXPECT_DOUBLE_EQ(workloads[1].estimated_start, kNow + 35 * 60);
  EXPECT_EQ(workloads[0].estimate, "");  // running: no estimate

  const std::string wide = render_table(workload_table(workloads, false, kNow), true, "");
  EXPECT_NE(wide.find("STARTS"), std::string::npos) << wide;
  EXPECT_NE(wide.find("   ~35 min   "), std::string::npos) << wide;
  EXPECT_EQ(render_table(workload_table(workloads, false, kNow), false, "").find("STARTS"), std::string::npos);
  EXPECT_EQ(workload_json(workloads)["items"][1]["estimate"], "when 16 GPUs of queue ml-research's borrowed work end");

  // Five minutes later the wait reads 30 min; past its time, the next cycle.
  EXPECT_EQ(estimate_wait_text(workloads[1].estimated_start, workloads[1].estimate, kNow + 300), "~30 min");
  EXPECT_EQ(estimate_wait_text(workloads[1].estimated_start, workloads[1].estimate, kNow + 3600), "in the next cycle");
  EXPECT_EQ(estimate_wait_text(0, "no estimate: it waits for work with no time limit or expected runtime to end", kNow),
            "no estimate");
  EXPECT_EQ(estimate_wait_text(0, "", kNow), "-");

  const json story = workload_story(notebooks, cluster.pods, pod_groups_of_pods(cluster.pods, cluster.owners),
                                    list({}), list({}));
  const std::string text = describe_text(story, kNow);
  const std::string expected = "Estimate:    ~35 min (at " + wire::format_time(kNow + 35 * 60) +
                               "): when 16 GPUs of queue ml-research's borrowed work end\n";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
}

// Describe tells where the workload stands in its queue and what the actions found when they
// tried to make room, from the status the scheduler wrote.
TEST(CliDescribe, APendingWorkloadShowsItsPlaceInItsQueueAndWhatWasTriedToMakeRoom) {
  TwoWorkloads cluster;
  json& notebooks = cluster.pod_groups["items"][1];
  notebooks["status"]["queuePosition"] = {{"queue", "team-b"}, {"position", 2}, {"pending", 5}};
  notebooks["status"]["roomAttempts"] = json::parse(R"([
      {"action": "reclaim", "outcome": "no reclaim: queue 'team-b' holds 4 gpu, at or above its fair share of 4 gpu"},
      {"action": "preempt", "outcome": "no lower-priority preemptible work in its queue frees enough room"}])");
  const std::string text = describe_text(
      workload_story(notebooks, cluster.pods, pod_groups_of_pods(cluster.pods, cluster.owners), list({}), list({})),
      kNow);
  EXPECT_NE(text.find("Position:    2 of 5 pending in queue team-b (1 is considered first)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Room:        reclaim tried: no reclaim: queue 'team-b' holds 4 gpu, at or above its fair share "
                      "of 4 gpu\n             preempt tried: no lower-priority preemptible work in its queue "
                      "frees enough room\n"),
            std::string::npos)
      << text;
  // A running workload has neither.
  const std::string running =
      describe_text(workload_story(cluster.pod_groups["items"][0], cluster.pods,
                                   pod_groups_of_pods(cluster.pods, cluster.owners), list({}), list({})),
                    kNow);
  EXPECT_EQ(running.find("Position:"), std::string::npos) << running;
  EXPECT_EQ(running.find("Room:"), std::string::npos) << running;
}

}  // namespace
}  // namespace tessera::cli
