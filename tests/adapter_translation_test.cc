// Kubernetes objects read into the engine's model: Nodes, Pods, Queues, PodGroups, and the
// duration and timestamp formats they carry.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "adapter/gpu_model_selection.h"
#include "adapter/object_translation.h"
#include "wire/duration.h"

namespace tessera::adapter {
namespace {

using nlohmann::json;

// Expects `result` to fail with a message containing every one of `parts`.
template <typename T>
void expect_error(const Result<T>& result, std::initializer_list<std::string_view> parts) {
  ASSERT_FALSE(result.ok()) << "expected an error containing '" << *parts.begin() << "'";
  for (std::string_view part : parts) {
    EXPECT_NE(result.error().message.find(part), std::string::npos)
        << "'" << result.error().message << "' does not contain '" << part << "'";
  }
}

template <typename T>
const T& expect_ok(const Result<T>& result) {
  EXPECT_TRUE(result.ok()) << result.error().message;
  return result.value();
}

// ---------------------------------------------------------------------------------------------
// Nodes.

// A DGX node as the kubelet and GPU feature discovery publish it.
json dgx_node() {
  return json::parse(R"({
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
      "name": "dgx-a100-07",
      "uid": "3f5d9c1e-0f43-4e8e-9a70-5b7fd1c2a001",
      "resourceVersion": "918273",
      "creationTimestamp": "2026-01-05T08:00:00Z",
      "labels": {
        "kubernetes.io/hostname": "dgx-a100-07",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
        "nvidia.com/gpu.memory": "81920",
        "nvidia.com/gpu.count": "8",
        "topology.kubernetes.io/zone": "eu-west-1a",
        "pool": "training"
      }
    },
    "spec": {
      "podCIDR": "10.244.7.0/24",
      "taints": [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "maintenance", "effect": "PreferNoSchedule"}
      ]
    },
    "status": {
      "capacity": {"cpu": "128", "memory": "2113565504Ki", "nvidia.com/gpu": "8", "pods": "110"},
      "allocatable": {"cpu": "127500m", "memory": "2113463104Ki", "nvidia.com/gpu": "8", "pods": "110"},
      "conditions": [
        {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"},
        {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": "2026-01-05T09:00:00Z"}
      ]
    }
  })");
}

TEST(AdapterNodeTranslation, ReadsAllocatableGpusLabelsAndTaints) {
  GpuModelCatalog models;
  const NodeSpec node = expect_ok(node_from_object(dgx_node(), models));
  EXPECT_EQ(node.name, "dgx-a100-07");
  EXPECT_EQ(node.allocatable.cpu_milli, 127500);
  EXPECT_EQ(node.allocatable.memory_bytes, int64_t{2113463104} * 1024);
  ASSERT_EQ(node.gpu_count(), 8);
  ASSERT_EQ(models.size(), 1U);
  EXPECT_EQ(models.name(node.gpus[0].model), "NVIDIA-A100-SXM4-80GB");
  for (const GpuDevice& device : node.gpus) EXPECT_EQ(device.memory_bytes, int64_t{81920} * kMiB);
  EXPECT_EQ(node.labels.at("pool"), "training");
  EXPECT_EQ(node.labels.size(), 6U);
  ASSERT_EQ(node.taints.size(), 2U);
  EXPECT_EQ(node.taints[0], (Taint{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule}));
  EXPECT_EQ(node.taints[1], (Taint{"maintenance", "", TaintEffect::kPreferNoSchedule}));
  EXPECT_TRUE(node.schedulable);
}

TEST(AdapterNodeTranslation, InternsEachModelOnce) {
  GpuModelCatalog models;
  json other = dgx_node();
  other["metadata"]["name"] = "dgx-a100-08";
  const NodeSpec first = expect_ok(node_from_object(dgx_node(), models));
  const NodeSpec second = expect_ok(node_from_object(other, models));
  EXPECT_EQ(models.size(), 1U);
  EXPECT_EQ(first.gpus[0].model, second.gpus[0].model);
}

TEST(AdapterNodeTranslation, FallsBackToCapacityWithoutAllocatable) {
  json node = dgx_node();
  node["status"].erase("allocatable");
  GpuModelCatalog models;
  const NodeSpec spec = expect_ok(node_from_object(node, models));
  EXPECT_EQ(spec.allocatable.cpu_milli, 128000);
  EXPECT_EQ(spec.allocatable.memory_bytes, int64_t{2113565504} * 1024);
  EXPECT_EQ(spec.gpu_count(), 8);
}

TEST(AdapterNodeTranslation, GpusWithoutLabelsAreOfAnUnknownModelWithNoKnownMemory) {
  const json node = json::parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "gpu-node-3"},
    "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4"}}
  })");
  GpuModelCatalog models;
  const NodeSpec spec = expect_ok(node_from_object(node, models));
  ASSERT_EQ(spec.gpu_count(), 4);
  EXPECT_EQ(models.name(spec.gpus[0].model), "unknown");
  EXPECT_EQ(spec.gpus[0].memory_bytes, 0);
}

TEST(AdapterNodeTranslation, QuantitiesMayBeJsonNumbers) {
  json node = dgx_node();
  node["status"]["allocatable"] = json::parse(R"({"cpu": 64, "memory": 68719476736, "nvidia.com/gpu": 4})");
  GpuModelCatalog models;
  const NodeSpec spec = expect_ok(node_from_object(node, models));
  EXPECT_EQ(spec.allocatable, (Resources{64000, 64 * kGiB}));
  EXPECT_EQ(spec.gpu_count(), 4);
}

TEST(AdapterNodeTranslation, CpuNodesAddNoModel) {
  const json node = json::parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "cpu-1", "labels": {"pool": "system"}},
    "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
               "conditions": [{"type": "Ready", "status": "True"}]}
  })");
  GpuModelCatalog models;
  const NodeSpec spec = expect_ok(node_from_object(node, models));
  EXPECT_EQ(spec.gpu_count(), 0);
  EXPECT_EQ(models.size(), 0U);
  EXPECT_EQ(spec.allocatable, (Resources{16000, 64 * kGiB}));
}

TEST(AdapterNodeTranslation, NodeWithoutStatusIsSchedulableAndEmpty) {
  // What `kubectl create -f node.yaml` leaves: no status at all until a kubelet reports.
  const json node = json::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "by-hand"}})");
  GpuModelCatalog models;
  const NodeSpec spec = expect_ok(node_from_object(node, models));
  EXPECT_TRUE(spec.schedulable);
  EXPECT_EQ(spec.allocatable, Resources{});
  EXPECT_EQ(spec.gpu_count(), 0);
  EXPECT_TRUE(spec.taints.empty());
}

TEST(AdapterNodeTranslation, CordonedOrNotReadyNodesAreNotSchedulable) {
  GpuModelCatalog models;
  json cordoned = dgx_node();
  cordoned["spec"]["unschedulable"] = true;
  EXPECT_FALSE(expect_ok(node_from_object(cordoned, models)).schedulable);

  for (std::string_view status : {"False", "Unknown"}) {
    json not_ready = dgx_node();
    not_ready["status"]["conditions"][1]["status"] = status;
    EXPECT_FALSE(expect_ok(node_from_object(not_ready, models)).schedulable) << status;
  }
  // Conditions without a Ready one: the node has not reported readiness, as with no status.
  json no_ready = dgx_node();
  no_ready["status"]["conditions"].erase(1);
  EXPECT_TRUE(expect_ok(node_from_object(no_ready, models)).schedulable);
  json uncordoned = dgx_node();
  uncordoned["spec"]["unschedulable"] = false;
  EXPECT_TRUE(expect_ok(node_from_object(uncordoned, models)).schedulable);
}

TEST(AdapterNodeTranslation, ReadsEveryTaintEffect) {
  json node = dgx_node();
  node["spec"]["taints"] = json::parse(R"([
    {"key": "a", "value": "1", "effect": "NoSchedule"},
    {"key": "b", "effect": "PreferNoSchedule"},
    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-01-05T09:00:00Z"}
  ])");
  GpuModelCatalog models;
  const NodeSpec spec = expect_ok(node_from_object(node, models));
  ASSERT_EQ(spec.taints.size(), 3U);
  EXPECT_EQ(spec.taints[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(spec.taints[1].effect, TaintEffect::kPreferNoSchedule);
  EXPECT_EQ(spec.taints[2].effect, TaintEffect::kNoExecute);
}

TEST(AdapterNodeTranslation, ErrorsNameTheNodeAndTheField) {
  GpuModelCatalog models;
  json bad_cpu = dgx_node();
  bad_cpu["status"]["allocatable"]["cpu"] = "12Q";
  expect_error(node_from_object(bad_cpu, models), {"node dgx-a100-07", "status.allocatable[cpu]", "'12Q'"});

  json fractional_gpus = dgx_node();
  fractional_gpus["status"]["allocatable"]["nvidia.com/gpu"] = "1.5";
  expect_error(node_from_object(fractional_gpus, models),
               {"node dgx-a100-07", "status.allocatable[nvidia.com/gpu]", "whole number"});

  json negative_memory = dgx_node();
  negative_memory["status"]["allocatable"]["memory"] = "-1Gi";
  expect_error(node_from_object(negative_memory, models), {"status.allocatable[memory]", "negative"});

  json bad_memory_label = dgx_node();
  bad_memory_label["metadata"]["labels"]["nvidia.com/gpu.memory"] = "80GB";
  expect_error(node_from_object(bad_memory_label, models),
               {"node dgx-a100-07", "metadata.labels[nvidia.com/gpu.memory]", "'80GB'", "MiB"});

  json bad_effect = dgx_node();
  bad_effect["spec"]["taints"][0]["effect"] = "NoWay";
  expect_error(node_from_object(bad_effect, models), {"spec.taints[0].effect", "'NoWay'", "NoSchedule"});

  json mistyped = dgx_node();
  mistyped["spec"]["unschedulable"] = "yes";
  expect_error(node_from_object(mistyped, models), {"spec.unschedulable", "expected true or false, got string"});

  json mistyped_label = dgx_node();
  mistyped_label["metadata"]["labels"]["pool"] = 3;
  expect_error(node_from_object(mistyped_label, models), {"metadata.labels[pool]", "expected a string"});

  json too_many = dgx_node();
  too_many["status"]["allocatable"]["nvidia.com/gpu"] = "100000";
  expect_error(node_from_object(too_many, models), {"status.allocatable[nvidia.com/gpu]"});
}

TEST(AdapterNodeTranslation, ReportsAFullModelCatalog) {
  GpuModelCatalog models;
  for (int i = 0; i < GpuModelSet::kMaxModels; ++i) ASSERT_TRUE(models.intern(fmt::format("M{}", i)).has_value());
  expect_error(node_from_object(dgx_node(), models), {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB", "64"});
}

// ---------------------------------------------------------------------------------------------
// Pods.

// A pod of a distributed training job, bound and running, as the API server returns it.
json training_pod() {
  return json::parse(R"({
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "llama-pretrain-worker-2",
      "namespace": "team-a",
      "uid": "8d0a6f5c-7a9e-4a3b-bb1f-3c2e9d4f5a62",
      "resourceVersion": "4471",
      "creationTimestamp": "2026-11-21T10:00:00Z",
      "labels": {
        "app": "llama-pretrain",
        "scheduling.tessera.dev/pod-group": "llama-pretrain",
        "scheduling.tessera.dev/queue": "team-a-research"
      },
      "annotations": {
        "scheduling.tessera.dev/gpu-index": "0,1,2,3,4,5,6,7"
      }
    },
    "spec": {
      "schedulerName": "tessera",
      "nodeName": "dgx-a100-07",
      "priority": 100,
      "priorityClassName": "training",
      "restartPolicy": "Never",
      "nodeSelector": {"pool": "training"},
      "tolerations": [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
      ],
      "containers": [
        {
          "name": "trainer",
          "image": "nvcr.io/nvidia/pytorch:24.05-py3",
          "command": ["torchrun", "train.py"],
          "resources": {
            "requests": {"cpu": "30", "memory": "200Gi", "nvidia.com/gpu": "8"},
            "limits": {"memory": "200Gi", "nvidia.com/gpu": "8"}
          }
        },
        {
          "name": "log-shipper",
          "image": "fluent/fluent-bit:3.0",
          "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}}
        }
      ],
      "initContainers": [
        {"name": "fetch-dataset", "image": "busybox:1.36", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}
      ]
    },
    "status": {
      "phase": "Running",
      "startTime": "2026-11-21T10:00:05.250Z",
      "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-21T10:00:09Z"},
                     {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-21T10:00:02Z"}],
      "podIP": "10.244.7.12"
    }
  })");
}

GpuModelCatalog catalog_of(std::initializer_list<std::string_view> names) {
  GpuModelCatalog models;
  for (std::string_view name : names) EXPECT_TRUE(models.intern(name).has_value());
  return models;
}

const GpuModelCatalog kModels = catalog_of({"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-T4"});

json notebook_pod() {
  return json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
      "name": "notebook-susan", "namespace": "team-b",
      "creationTimestamp": "2026-11-21T09:30:00Z",
      "annotations": {
        "scheduling.tessera.dev/workload-type": "interactive",
        "scheduling.tessera.dev/gpu-fraction": "0.5"
      }
    },
    "spec": {
      "schedulerName": "tessera",
      "containers": [{"name": "jupyter", "image": "jupyter/base-notebook",
                      "resources": {"requests": {"cpu": "2", "memory": "8Gi"}}}]
    },
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]}
  })");
}

TEST(AdapterPodTranslation, ReadsABoundTrainingPod) {
  const PodInfo pod = expect_ok(pod_from_object(training_pod(), kModels));
  EXPECT_EQ(pod.key, "team-a/llama-pretrain-worker-2");
  EXPECT_EQ(pod.namespace_name, "team-a");
  EXPECT_EQ(pod.name, "llama-pretrain-worker-2");
  EXPECT_EQ(pod.uid, "8d0a6f5c-7a9e-4a3b-bb1f-3c2e9d4f5a62");
  EXPECT_EQ(pod.resource_version, "4471");
  EXPECT_TRUE(pod.tessera);
  EXPECT_EQ(pod.node_name, "dgx-a100-07");
  EXPECT_EQ(pod.phase, PodPhase::kRunning);
  EXPECT_FALSE(pod.terminating);
  EXPECT_EQ(pod.pod_group, "llama-pretrain");
  EXPECT_EQ(pod.queue_label, "team-a-research");
  EXPECT_EQ(pod.kind, WorkloadKind::kTrain);
  EXPECT_FALSE(pod.preemptible_explicit);
  EXPECT_EQ(pod.gpu_indices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(pod.created_at, 1795255200.0);
  EXPECT_DOUBLE_EQ(pod.started_at, 1795255205.25);
  EXPECT_DOUBLE_EQ(pod.bound_at, 1795255202.0);  // PodScheduled=True since

  EXPECT_EQ(pod.spec.name, "team-a/llama-pretrain-worker-2");
  // The two containers run together (30 + 0.25 CPUs); the init container ran alone before.
  EXPECT_EQ(pod.spec.request, (Resources{30250, 200 * kGiB + 128 * kMiB}));
  EXPECT_EQ(pod.spec.gpu, GpuRequest::whole(8));
  EXPECT_TRUE(pod.spec.allowed_models.is_any());
  EXPECT_EQ(pod.spec.node_selector, (Labels{{"pool", "training"}}));
  ASSERT_EQ(pod.spec.tolerations.size(), 2U);
  EXPECT_EQ(pod.spec.tolerations[0], (Toleration{.key = "nvidia.com/gpu",
                                                 .op = Toleration::Operator::kExists,
                                                 .value = "",
                                                 .effect = TaintEffect::kNoSchedule}));
  EXPECT_EQ(pod.spec.tolerations[1].effect, TaintEffect::kNoExecute);
  EXPECT_EQ(pod.spec.priority, 100);
  EXPECT_TRUE(pod.spec.preemptible);
}

TEST(AdapterPodTranslation, ReadsAPendingInteractiveNotebook) {
  const PodInfo pod = expect_ok(pod_from_object(notebook_pod(), kModels));
  EXPECT_EQ(pod.key, "team-b/notebook-susan");
  EXPECT_EQ(pod.phase, PodPhase::kPending);
  EXPECT_TRUE(pod.node_name.empty());
  EXPECT_EQ(pod.kind, WorkloadKind::kInteractive);
  EXPECT_FALSE(pod.spec.preemptible);  // the interactive default
  EXPECT_EQ(pod.spec.gpu, GpuRequest::portion(500));
  EXPECT_EQ(pod.spec.request, (Resources{2000, 8 * kGiB}));
  EXPECT_EQ(pod.spec.priority, 0);
  EXPECT_TRUE(pod.gpu_indices.empty());
  EXPECT_TRUE(pod.pod_group.empty());
  EXPECT_DOUBLE_EQ(pod.started_at, 0);
  EXPECT_DOUBLE_EQ(pod.bound_at, 0);  // PodScheduled=False: not bound
}

// A pod of one container with the given resources block, and any spec fields merged in.
json pod_with(const json& container_resources, const json& spec_fields = json::object()) {
  json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "creationTimestamp": "2026-11-21T10:00:00Z"},
    "spec": {"schedulerName": "tessera", "containers": [{"name": "main", "image": "busybox"}]}
  })");
  pod["spec"]["containers"][0]["resources"] = container_resources;
  for (const auto& [key, value] : spec_fields.items()) pod["spec"][key] = value;
  return pod;
}

Resources requests_of(const json& pod) {
  auto info = pod_from_object(pod, kModels);
  EXPECT_TRUE(info.ok()) << info.error().message;
  return info.ok() ? info->spec.request : Resources{-1, -1};
}

TEST(AdapterPodTranslation, ActiveDeadlineIsTheTimeLimit) {
  auto limited = pod_from_object(pod_with(json::object(), {{"activeDeadlineSeconds", 1200}}), kModels);
  ASSERT_TRUE(limited.ok()) << limited.error().message;
  EXPECT_DOUBLE_EQ(limited->active_deadline_seconds, 1200);
  auto unlimited = pod_from_object(pod_with(json::object()), kModels);
  ASSERT_TRUE(unlimited.ok());
  EXPECT_DOUBLE_EQ(unlimited->active_deadline_seconds, 0);
  auto wrong = pod_from_object(pod_with(json::object(), {{"activeDeadlineSeconds", "soon"}}), kModels);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("spec.activeDeadlineSeconds"), std::string::npos) << wrong.error().message;
}

TEST(AdapterPodTranslation, ContainerLimitsStandInForMissingRequests) {
  EXPECT_EQ(requests_of(pod_with(json::parse(R"({"limits": {"cpu": "4", "memory": "16Gi"}})"))),
            (Resources{4000, 16 * kGiB}));
  // Per resource: the cpu request stays, the memory request comes from the limit.
  EXPECT_EQ(
      requests_of(pod_with(json::parse(R"({"requests": {"cpu": "1"}, "limits": {"cpu": "4", "memory": "2Gi"}})"))),
      (Resources{1000, 2 * kGiB}));
  EXPECT_EQ(requests_of(pod_with(json::object())), Resources{});
}

TEST(AdapterPodTranslation, QuantitiesMayBeJsonNumbers) {
  // kubectl sends `cpu: 2` from YAML as a number; the API server accepts it.
  EXPECT_EQ(requests_of(pod_with(json::parse(R"({"requests": {"cpu": 2, "memory": 1073741824}})"))),
            (Resources{2000, kGiB}));
  EXPECT_EQ(requests_of(pod_with(json::parse(R"({"requests": {"cpu": 0.5}})"))), (Resources{500, 0}));
  const PodInfo pod =
      expect_ok(pod_from_object(pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": 2}})")), kModels));
  EXPECT_EQ(pod.spec.gpu, GpuRequest::whole(2));
  expect_error(pod_from_object(pod_with(json::parse(R"({"requests": {"cpu": [1]}})")), kModels),
               {"spec.containers[0].resources.requests[cpu]", "expected a quantity"});
}

TEST(AdapterPodTranslation, TheLargestInitContainerCountsWhenItExceedsTheContainers) {
  const json spec = json::parse(R"({
    "initContainers": [
      {"name": "unpack", "resources": {"requests": {"cpu": "8", "memory": "1Gi"}}},
      {"name": "warm", "resources": {"requests": {"cpu": "1", "memory": "32Gi"}}}
    ]
  })");
  // Per resource: cpu max(2, 8, 1) = 8; memory max(4Gi, 1Gi, 32Gi) = 32Gi.
  EXPECT_EQ(requests_of(pod_with(json::parse(R"({"requests": {"cpu": "2", "memory": "4Gi"}})"), spec)),
            (Resources{8000, 32 * kGiB}));
}

TEST(AdapterPodTranslation, SidecarsRunBesideTheContainersAndLaterInitContainers) {
  const json spec = json::parse(R"({
    "initContainers": [
      {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
      {"name": "migrate", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}
    ]
  })");
  // Containers 1 + sidecar 0.5 = 1.5 CPUs; the init container runs beside the sidecar: 3.5.
  EXPECT_EQ(requests_of(pod_with(json::parse(R"({"requests": {"cpu": "1", "memory": "4Gi"}})"), spec)),
            (Resources{3500, 5 * kGiB}));
}

TEST(AdapterPodTranslation, OverheadIsAdded) {
  const json spec = json::parse(R"({"runtimeClassName": "kata", "overhead": {"cpu": "250m", "memory": "120Mi"}})");
  EXPECT_EQ(requests_of(pod_with(json::parse(R"({"requests": {"cpu": "1", "memory": "1Gi"}})"), spec)),
            (Resources{1250, kGiB + 120 * kMiB}));
}

TEST(AdapterPodTranslation, MemoryRequestsRoundUpToWholeBytes) {
  EXPECT_EQ(requests_of(pod_with(json::parse(R"({"requests": {"memory": "1500m", "cpu": "0.0001"}})"))),
            (Resources{1, 2}));
}

GpuRequest gpu_of(const json& pod) {
  auto info = pod_from_object(pod, kModels);
  EXPECT_TRUE(info.ok()) << info.error().message;
  return info.ok() ? info->spec.gpu : GpuRequest{.kind = GpuRequest::Kind::kWhole, .whole_gpus = -1};
}

json with_annotations(json pod, const json& annotations) {
  for (const auto& [key, value] : annotations.items()) pod["metadata"]["annotations"][key] = value;
  return pod;
}

TEST(AdapterPodTranslation, WholeGpusFromLimitsElseRequestsSummedOverContainers) {
  EXPECT_EQ(gpu_of(pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": "2"}})"))), GpuRequest::whole(2));
  EXPECT_EQ(gpu_of(pod_with(json::parse(R"({"requests": {"nvidia.com/gpu": "1"}})"))), GpuRequest::whole(1));
  json two_containers = pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": "2"}})"));
  two_containers["spec"]["containers"].push_back(
      json::parse(R"({"name": "b", "resources": {"limits": {"nvidia.com/gpu": "1"}}})"));
  EXPECT_EQ(gpu_of(two_containers), GpuRequest::whole(3));
  EXPECT_EQ(gpu_of(pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": "0"}})"))), GpuRequest::none());
  EXPECT_EQ(gpu_of(pod_with(json::object())), GpuRequest::none());
}

TEST(AdapterPodTranslation, WholeGpusMustBeWhole) {
  expect_error(pod_from_object(pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": "0.5"}})")), kModels),
               {"pod ns/p", "spec.containers[0].resources.limits[nvidia.com/gpu]", "'0.5' is not a whole number",
                "gpu-fraction"});
  expect_error(pod_from_object(pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": "500m"}})")), kModels),
               {"not a whole number"});
}

TEST(AdapterPodTranslation, GpuFractionIsAPortionInThousandths) {
  const json pod = pod_with(json::object());
  EXPECT_EQ(gpu_of(with_annotations(pod, {{"scheduling.tessera.dev/gpu-fraction", "0.25"}})), GpuRequest::portion(250));
  EXPECT_EQ(gpu_of(with_annotations(pod, {{"scheduling.tessera.dev/gpu-fraction", "0.3333"}})),
            GpuRequest::portion(334));  // rounded up
  EXPECT_EQ(gpu_of(with_annotations(pod, {{"scheduling.tessera.dev/gpu-fraction", "0.999"}})),
            GpuRequest::portion(999));
  for (std::string_view bad : {"0", "1", "1.5", "-0.5", "half"}) {
    expect_error(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/gpu-fraction", bad}}), kModels),
                 {"pod ns/p", "metadata.annotations[scheduling.tessera.dev/gpu-fraction]", bad});
  }
}

TEST(AdapterPodTranslation, GpuMemoryWithAnOptionalLimit) {
  const json pod = pod_with(json::object());
  EXPECT_EQ(gpu_of(with_annotations(pod, {{"scheduling.tessera.dev/gpu-memory", "20Gi"}})),
            GpuRequest::memory(20 * kGiB, 20 * kGiB));
  EXPECT_EQ(gpu_of(with_annotations(pod, {{"scheduling.tessera.dev/gpu-memory", "20Gi"},
                                          {"scheduling.tessera.dev/gpu-memory-limit", "40Gi"}})),
            GpuRequest::memory(20 * kGiB, 40 * kGiB));
  expect_error(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/gpu-memory", "20Gi"},
                                                      {"scheduling.tessera.dev/gpu-memory-limit", "10Gi"}}),
                               kModels),
               {"metadata.annotations[scheduling.tessera.dev/gpu-memory-limit]", "below"});
  expect_error(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/gpu-memory-limit", "10Gi"}}), kModels),
               {"gpu-memory-limit", "only together with"});
  expect_error(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/gpu-memory", "0"}}), kModels),
               {"gpu-memory]", "positive"});
  expect_error(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/gpu-memory", "20GB"}}), kModels),
               {"gpu-memory]", "'20GB' is not a quantity"});
}

TEST(AdapterPodTranslation, GpuMemoryResolverIsWaitPriorityOrSwap) {
  const json memory = with_annotations(pod_with(json::object()), {{"scheduling.tessera.dev/gpu-memory", "20Gi"},
                                                                  {"scheduling.tessera.dev/gpu-memory-limit", "40Gi"}});
  auto plain = pod_from_object(memory, kModels);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->gpu_memory_resolver, "wait");
  EXPECT_EQ(gpu_memory_terms(*plain), (GpuMemoryTerms{20 * kGiB, 40 * kGiB, "wait"}));
  for (std::string_view resolver : {"wait", "priority", "swap"}) {
    auto read =
        pod_from_object(with_annotations(memory, {{"scheduling.tessera.dev/gpu-memory-resolver", resolver}}), kModels);
    ASSERT_TRUE(read.ok()) << resolver;
    EXPECT_EQ(gpu_memory_terms(*read).resolver, resolver);
  }
  expect_error(
      pod_from_object(with_annotations(memory, {{"scheduling.tessera.dev/gpu-memory-resolver", "kill"}}), kModels),
      {"pod ns/p", "metadata.annotations[scheduling.tessera.dev/gpu-memory-resolver]",
       "'kill' is not a GPU memory "
       "resolver: expected wait"});
  const json portion = with_annotations(
      pod_with(json::object()),
      {{"scheduling.tessera.dev/gpu-fraction", "0.5"}, {"scheduling.tessera.dev/gpu-memory-resolver", "swap"}});
  expect_error(pod_from_object(portion, kModels), {"gpu-memory-resolver]", "only together with"});
  auto fraction = pod_from_object(
      with_annotations(pod_with(json::object()), {{"scheduling.tessera.dev/gpu-fraction", "0.5"}}), kModels);
  ASSERT_TRUE(fraction.ok());
  EXPECT_EQ(gpu_memory_terms(*fraction), GpuMemoryTerms{});
  EXPECT_EQ(gpu_memory_terms(*fraction).request_bytes, 0);
}

TEST(AdapterPodTranslation, OneKindOfGpuRequestAtATime) {
  const json whole = pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": "1"}})"));
  expect_error(pod_from_object(with_annotations(whole, {{"scheduling.tessera.dev/gpu-fraction", "0.5"}}), kModels),
               {"pod ns/p", "gpu-fraction", "not more than one"});
  expect_error(
      pod_from_object(with_annotations(pod_with(json::object()), {{"scheduling.tessera.dev/gpu-fraction", "0.5"},
                                                                  {"scheduling.tessera.dev/gpu-memory", "10Gi"}}),
                      kModels),
      {"not more than one"});
  expect_error(pod_from_object(with_annotations(whole, {{"scheduling.tessera.dev/gpu-memory", "10Gi"}}), kModels),
               {"not more than one"});
}

GpuModelSet models_of(const json& pod) {
  auto info = pod_from_object(pod, kModels);
  EXPECT_TRUE(info.ok()) << info.error().message;
  return info.ok() ? info->spec.allowed_models : GpuModelSet::any();
}

GpuModelSet set_of(std::initializer_list<GpuModelId> ids) {
  GpuModelSet set;
  for (GpuModelId id : ids) set.add(id);
  return set;
}

json affinity_on(const json& values, std::string_view op = "In") {
  json affinity;
  affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
      json::array({{{"matchExpressions",
                     json::array({{{"key", "nvidia.com/gpu.product"}, {"operator", op}, {"values", values}}})}}});
  return affinity;
}

TEST(AdapterPodTranslation, NodeSelectorOnTheProductLabelRestrictsModels) {
  const json pod = pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": "1"}})"),
                            {{"nodeSelector", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}});
  EXPECT_EQ(models_of(pod), set_of({1}));
  const PodInfo info = expect_ok(pod_from_object(pod, kModels));
  EXPECT_EQ(info.spec.node_selector.at("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");  // kept as well
}

TEST(AdapterPodTranslation, AModelNoNodeHasMakesThePodFitNothing) {
  const json pod = pod_with(json::parse(R"({"limits": {"nvidia.com/gpu": "1"}})"),
                            {{"nodeSelector", {{"nvidia.com/gpu.product", "NVIDIA-B200"}}}});
  const GpuModelSet models = models_of(pod);
  EXPECT_FALSE(models.is_any());
  for (GpuModelId id = 0; id < kModels.size(); ++id) EXPECT_FALSE(models.allows(id)) << kModels.name(id);
  EXPECT_EQ(models, set_of({kNoKnownGpuModel}));
}

TEST(AdapterPodTranslation, RequiredAffinityInOnTheProductLabelRestrictsModels) {
  const json gpu = json::parse(R"({"limits": {"nvidia.com/gpu": "1"}})");
  EXPECT_EQ(models_of(pod_with(gpu, {{"affinity", affinity_on({"Tesla-T4", "NVIDIA-A100-SXM4-80GB", "NVIDIA-B200"})}})),
            set_of({0, 2}));
  EXPECT_EQ(models_of(pod_with(gpu, {{"affinity", affinity_on({"NVIDIA-B200"})}})), set_of({kNoKnownGpuModel}));
  // Both ways at once: the models both allow.
  EXPECT_EQ(models_of(pod_with(gpu, {{"affinity", affinity_on({"Tesla-T4", "NVIDIA-H100-80GB-HBM3"})},
                                     {"nodeSelector", {{"nvidia.com/gpu.product", "Tesla-T4"}}}})),
            set_of({2}));
  EXPECT_EQ(models_of(pod_with(gpu, {{"affinity", affinity_on({"NVIDIA-H100-80GB-HBM3"})},
                                     {"nodeSelector", {{"nvidia.com/gpu.product", "Tesla-T4"}}}})),
            set_of({kNoKnownGpuModel}));
}

TEST(AdapterPodTranslation, OtherAffinityDoesNotRestrictModels) {
  const json gpu = json::parse(R"({"limits": {"nvidia.com/gpu": "1"}})");
  EXPECT_TRUE(models_of(pod_with(gpu, {{"affinity", affinity_on({"Tesla-T4"}, "NotIn")}})).is_any());
  // Two terms are alternatives: a model may be allowed through either.
  json two_terms = affinity_on({"Tesla-T4"});
  auto& terms = two_terms["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  terms.push_back(json::parse(R"({"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]})"));
  EXPECT_TRUE(models_of(pod_with(gpu, {{"affinity", two_terms}})).is_any());
  const json preferred = json::parse(R"({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 1, "preference": {"matchExpressions": [
      {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["Tesla-T4"]}]}}]}})");
  EXPECT_TRUE(models_of(pod_with(gpu, {{"affinity", preferred}})).is_any());
  const json other_label = json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}})");
  EXPECT_TRUE(models_of(pod_with(gpu, {{"affinity", other_label}})).is_any());
  const json pod_affinity = json::parse(R"({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}})");
  EXPECT_TRUE(models_of(pod_with(gpu, {{"affinity", pod_affinity}})).is_any());
}

TEST(AdapterPodTranslation, ReadsTolerations) {
  const json spec = json::parse(R"({"tolerations": [
    {"key": "dedicated", "operator": "Equal", "value": "research", "effect": "NoSchedule"},
    {"key": "spot", "value": "true"},
    {"operator": "Exists"}
  ]})");
  const PodInfo pod = expect_ok(pod_from_object(pod_with(json::object(), spec), kModels));
  ASSERT_EQ(pod.spec.tolerations.size(), 3U);
  EXPECT_EQ(pod.spec.tolerations[0], (Toleration{.key = "dedicated",
                                                 .op = Toleration::Operator::kEqual,
                                                 .value = "research",
                                                 .effect = TaintEffect::kNoSchedule}));
  EXPECT_EQ(pod.spec.tolerations[1],
            (Toleration{.key = "spot", .op = Toleration::Operator::kEqual, .value = "true", .effect = std::nullopt}));
  EXPECT_TRUE(pod.spec.tolerations[2].tolerates(Taint{"anything", "x", TaintEffect::kNoExecute}));

  expect_error(
      pod_from_object(pod_with(json::object(), json::parse(R"({"tolerations": [{"key": "a", "operator": "Is"}]})")),
                      kModels),
      {"pod ns/p", "spec.tolerations[0].operator", "'Is'"});
  expect_error(
      pod_from_object(pod_with(json::object(), json::parse(R"({"tolerations": [{"key": "a", "effect": "Never"}]})")),
                      kModels),
      {"spec.tolerations[0].effect", "'Never'"});
}

TEST(AdapterPodTranslation, WorkloadTypeAndPreemptibleAnnotations) {
  const json pod = pod_with(json::object());
  const PodInfo plain = expect_ok(pod_from_object(pod, kModels));
  EXPECT_EQ(plain.kind, WorkloadKind::kTrain);
  EXPECT_TRUE(plain.spec.preemptible);

  const PodInfo pinned_train =
      expect_ok(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/preemptible", "false"}}), kModels));
  EXPECT_FALSE(pinned_train.spec.preemptible);
  EXPECT_TRUE(pinned_train.preemptible_explicit);

  const PodInfo loose_notebook =
      expect_ok(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/workload-type", "interactive"},
                                                       {"scheduling.tessera.dev/preemptible", "true"}}),
                                kModels));
  EXPECT_EQ(loose_notebook.kind, WorkloadKind::kInteractive);
  EXPECT_TRUE(loose_notebook.spec.preemptible);
  EXPECT_TRUE(loose_notebook.preemptible_explicit);

  expect_error(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/workload-type", "batch"}}), kModels),
               {"pod ns/p", "metadata.annotations[scheduling.tessera.dev/workload-type]", "'batch'",
                "train, interactive or inference"});
  expect_error(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/preemptible", "yes"}}), kModels),
               {"metadata.annotations[scheduling.tessera.dev/preemptible]", "'yes'"});
}

TEST(AdapterPodTranslation, ReadsPhasesAndTermination) {
  json pod = pod_with(json::object());
  const std::pair<std::string_view, PodPhase> phases[] = {{"Pending", PodPhase::kPending},
                                                          {"Running", PodPhase::kRunning},
                                                          {"Succeeded", PodPhase::kSucceeded},
                                                          {"Failed", PodPhase::kFailed},
                                                          {"Unknown", PodPhase::kUnknown}};
  for (const auto& [text, phase] : phases) {
    pod["status"]["phase"] = text;
    EXPECT_EQ(expect_ok(pod_from_object(pod, kModels)).phase, phase) << text;
  }
  pod["metadata"]["deletionTimestamp"] = "2026-11-21T11:00:00Z";
  pod["metadata"]["deletionGracePeriodSeconds"] = 30;
  EXPECT_TRUE(expect_ok(pod_from_object(pod, kModels)).terminating);
}

TEST(AdapterPodTranslation, PodsOfOtherSchedulersAreMarked) {
  json pod = training_pod();
  pod["spec"]["schedulerName"] = "default-scheduler";
  EXPECT_FALSE(expect_ok(pod_from_object(pod, kModels)).tessera);
  pod["spec"].erase("schedulerName");
  EXPECT_FALSE(expect_ok(pod_from_object(pod, kModels)).tessera);
}

TEST(AdapterPodTranslation, GpuIndexAnnotation) {
  const json pod = pod_with(json::object());
  EXPECT_EQ(expect_ok(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/gpu-index", "3"}}), kModels))
                .gpu_indices,
            std::vector<int>{3});
  EXPECT_EQ(expect_ok(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/gpu-index", "0, 1"}}), kModels))
                .gpu_indices,
            (std::vector<int>{0, 1}));
  for (std::string_view bad : {"", "a", "1,", ",1", "-1", "1;2", "1.5"}) {
    expect_error(pod_from_object(with_annotations(pod, {{"scheduling.tessera.dev/gpu-index", bad}}), kModels),
                 {"pod ns/p", "metadata.annotations[scheduling.tessera.dev/gpu-index]"});
  }
}

TEST(AdapterPodTranslation, ErrorsNameThePodAndTheField) {
  expect_error(pod_from_object(pod_with(json::parse(R"({"requests": {"cpu": "12Q"}})")), kModels),
               {"pod ns/p: spec.containers[0].resources.requests[cpu]: '12Q' is not a quantity"});
  expect_error(pod_from_object(pod_with(json::parse(R"({"requests": {"memory": "-1Gi"}})")), kModels),
               {"spec.containers[0].resources.requests[memory]", "negative"});
  json init = pod_with(json::object(),
                       json::parse(R"({"initContainers": [{"name": "i", "resources": {"limits": {"cpu": "x"}}}]})"));
  expect_error(pod_from_object(init, kModels), {"spec.initContainers[0].resources.limits[cpu]"});
  expect_error(pod_from_object(pod_with(json::object(), {{"overhead", {{"cpu", "lots"}}}}), kModels),
               {"spec.overhead[cpu]"});
  expect_error(pod_from_object(pod_with(json::object(), {{"priority", "high"}}), kModels),
               {"pod ns/p", "spec.priority", "expected an integer, got string"});
  expect_error(pod_from_object(pod_with(json::object(), {{"priority", 1.5}}), kModels), {"spec.priority"});
  expect_error(pod_from_object(pod_with(json::object(), {{"priority", int64_t{1} << 40}}), kModels),
               {"spec.priority", "32-bit"});
  expect_error(pod_from_object(pod_with(json::object(), {{"nodeSelector", {{"pool", 1}}}}), kModels),
               {"spec.nodeSelector[pool]"});
  expect_error(pod_from_object(pod_with(json::object(), {{"containers", "main"}}), kModels),
               {"spec.containers", "expected a list"});
  json bad_time = pod_with(json::object());
  bad_time["metadata"]["creationTimestamp"] = "yesterday";
  expect_error(pod_from_object(bad_time, kModels), {"pod ns/p", "metadata.creationTimestamp", "'yesterday'"});
  json bad_binding_time = pod_with(json::object());
  bad_binding_time["status"]["conditions"] =
      json::array({{{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", "soon"}}});
  expect_error(pod_from_object(bad_binding_time, kModels),
               {"pod ns/p", "status.conditions[0].lastTransitionTime", "'soon'"});
  json bad_labels = pod_with(json::object());
  bad_labels["metadata"]["labels"] = json::array();
  expect_error(pod_from_object(bad_labels, kModels), {"metadata.labels", "expected an object of strings, got array"});
}

// ---------------------------------------------------------------------------------------------
// Queues.

json research_queue() {
  return json::parse(R"({
    "apiVersion": "scheduling.tessera.dev/v1alpha1",
    "kind": "Queue",
    "metadata": {"name": "research", "uid": "a1", "resourceVersion": "12", "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {
      "parent": "org",
      "priority": 2,
      "resources": {
        "gpu": {"deserved": "2.5", "overQuotaWeight": 2, "limit": 16},
        "cpu": {"deserved": "64", "limit": "128"},
        "memory": {"deserved": "512Gi", "overQuotaWeight": 0.5}
      },
      "gpuModels": {
        "NVIDIA-H100-80GB-HBM3": {"deserved": 8, "overQuotaWeight": 0}
      },
      "preemptMinRuntime": "10m",
      "reclaimMinRuntime": "1h30m"
    },
    "status": {"allocated": {"gpu": "4"}, "pendingWorkloads": 3}
  })");
}

TEST(AdapterQueueTranslation, ReadsQuotasInEngineUnits) {
  ResourceNames resources = ResourceNames::standard();
  const QueueSpec queue = expect_ok(queue_from_object(research_queue(), resources));
  EXPECT_EQ(queue.name, "research");
  EXPECT_EQ(queue.parent, "org");
  EXPECT_EQ(queue.priority, 2);
  ASSERT_EQ(resources.size(), 4U);
  EXPECT_EQ(resources.name(3), "gpu/NVIDIA-H100-80GB-HBM3");
  ASSERT_EQ(queue.quota.size(), 4U);
  EXPECT_EQ(queue.quota[0], (QueueQuota{.deserved = 2.5, .over_quota_weight = 2, .limit = 16}));
  EXPECT_EQ(queue.quota[1], (QueueQuota{.deserved = 64000, .over_quota_weight = 1, .limit = 128000}));
  EXPECT_EQ(queue.quota[2], (QueueQuota{.deserved = 512.0 * kGiB, .over_quota_weight = 0.5, .limit = std::nullopt}));
  EXPECT_EQ(queue.quota[3], (QueueQuota{.deserved = 8, .over_quota_weight = 0, .limit = std::nullopt}));
  EXPECT_EQ(queue.preempt_min_runtime_seconds, 600);
  EXPECT_EQ(queue.reclaim_min_runtime_seconds, 5400);
}

TEST(AdapterQueueTranslation, AddsEachModelResourceOnceAcrossQueues) {
  ResourceNames resources;  // even an empty list gets gpu, cpu, memory first
  json other = research_queue();
  other["metadata"]["name"] = "vision";
  other["spec"]["gpuModels"]["Tesla-T4"] = json::parse(R"({"deserved": "4"})");
  expect_ok(queue_from_object(research_queue(), resources));
  const QueueSpec second = expect_ok(queue_from_object(other, resources));
  EXPECT_EQ(resources.names(),
            (std::vector<std::string>{"gpu", "cpu", "memory", "gpu/NVIDIA-H100-80GB-HBM3", "gpu/Tesla-T4"}));
  ASSERT_EQ(second.quota.size(), 5U);
  EXPECT_EQ(second.quota[4].deserved, 4);
}

TEST(AdapterQueueTranslation, ModelNamesMayHoldDots) {
  json queue = research_queue();
  queue["spec"]["gpuModels"] = json::parse(R"({"A10.G": {"deserved": "1.5"}})");
  ResourceNames resources = ResourceNames::standard();
  const QueueSpec spec = expect_ok(queue_from_object(queue, resources));
  EXPECT_EQ(spec.quota[*resources.find("gpu/A10.G")].deserved, 1.5);
}

TEST(AdapterQueueTranslation, AQueueWithoutSpecHasNoQuota) {
  const json queue = json::parse(R"({"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "Queue",
                                     "metadata": {"name": "scratch"}})");
  ResourceNames resources = ResourceNames::standard();
  const QueueSpec spec = expect_ok(queue_from_object(queue, resources));
  EXPECT_EQ(spec.name, "scratch");
  EXPECT_TRUE(spec.parent.empty());
  EXPECT_EQ(spec.priority, 0);
  for (const QueueQuota& quota : spec.quota) EXPECT_EQ(quota, QueueQuota{});
  EXPECT_FALSE(spec.preempt_min_runtime_seconds.has_value());
  EXPECT_FALSE(spec.reclaim_min_runtime_seconds.has_value());
}

TEST(AdapterQueueTranslation, ErrorsNameTheQueueAndTheField) {
  ResourceNames resources = ResourceNames::standard();
  const auto with = [](std::string_view pointer, const json& value) {
    json queue = research_queue();
    queue[json::json_pointer(std::string(pointer))] = value;
    return queue;
  };
  expect_error(queue_from_object(with("/spec/resources/gpu/deserved", "lots"), resources),
               {"queue research", "spec.resources.gpu.deserved", "'lots' is not a quantity"});
  expect_error(queue_from_object(with("/spec/resources/cpu/deserved", "-1"), resources),
               {"spec.resources.cpu.deserved", "negative"});
  expect_error(queue_from_object(with("/spec/resources/gpu/limit", 1), resources),
               {"spec.resources.gpu.limit", "below deserved"});
  expect_error(queue_from_object(with("/spec/resources/gpu/overQuotaWeight", -1), resources),
               {"spec.resources.gpu.overQuotaWeight"});
  expect_error(queue_from_object(with("/spec/resources/gpu/overQuotaWeight", "2"), resources),
               {"spec.resources.gpu.overQuotaWeight", "expected a number"});
  expect_error(queue_from_object(with("/spec/resources/gpu/deserved", true), resources),
               {"spec.resources.gpu.deserved", "expected a quantity"});
  expect_error(queue_from_object(with("/spec/resources/gpus", json::parse(R"({"deserved": 1})")), resources),
               {"spec.resources.gpus", "unknown resource", "gpuModels"});
  expect_error(queue_from_object(with("/spec/resources/gpu/desrved", 1), resources),
               {"spec.resources.gpu.desrved", "unknown field"});
  expect_error(queue_from_object(with("/spec/gpuModels/Tesla-T4", 4), resources),
               {"spec.gpuModels.Tesla-T4", "expected an object"});
  expect_error(queue_from_object(with("/spec/preemptMinRuntime", "10 minutes"), resources),
               {"queue research", "spec.preemptMinRuntime", "not a duration"});
  expect_error(queue_from_object(with("/spec/reclaimMinRuntime", "-5m"), resources),
               {"spec.reclaimMinRuntime", "negative"});
  expect_error(queue_from_object(with("/spec/parent", 7), resources), {"spec.parent", "expected a string"});
  expect_error(queue_from_object(with("/spec/priority", "high"), resources), {"spec.priority"});
}

TEST(AdapterQueueTranslation, ReadsRulesPerWorkloadKind) {
  ResourceNames resources = ResourceNames::standard();
  json queue = research_queue();
  queue["spec"]["rules"] = json::parse(R"({
    "interactive": {"idleLimit": "1h", "notice": "15m", "warmupGrace": "30m", "idleThreshold": 10, "idleWindow": "2m",
                    "onExpiry": "stop"},
    "train": {"maxRuntime": "24h", "requeueDelay": "5m"}
  })");
  const QueueSpec spec = expect_ok(queue_from_object(queue, resources));
  const WorkRules& interactive = spec.work_rules[static_cast<size_t>(WorkloadKind::kInteractive)];
  EXPECT_EQ(interactive.idle_limit_seconds, 3600);
  EXPECT_EQ(interactive.notice_seconds, 900);
  EXPECT_EQ(interactive.warmup_grace_seconds, 1800);
  EXPECT_EQ(interactive.idle_threshold_pct, 10);
  EXPECT_EQ(interactive.idle_window_seconds, 120);
  EXPECT_EQ(interactive.on_expiry, ExpiryAction::kStop);
  EXPECT_FALSE(interactive.max_runtime_seconds);
  const WorkRules& train = spec.work_rules[static_cast<size_t>(WorkloadKind::kTrain)];
  EXPECT_EQ(train.max_runtime_seconds, 86400);
  EXPECT_EQ(train.requeue_delay_seconds, 300);
  EXPECT_FALSE(train.on_expiry);  // the kind's default, unless a parent sets one
  EXPECT_TRUE(spec.work_rules[static_cast<size_t>(WorkloadKind::kInference)].empty());
  EXPECT_TRUE(expect_ok(queue_from_object(research_queue(), resources)).work_rules[0].empty());

  const auto with_rules = [](const char* rules) {
    json bad = research_queue();
    bad["spec"]["rules"] = json::parse(rules);
    return bad;
  };
  expect_error(queue_from_object(with_rules(R"({"batch": {}})"), resources),
               {"queue research", "spec.rules.batch", "unknown workload kind"});
  expect_error(queue_from_object(with_rules(R"({"train": {"maxRuntime": "a day"}})"), resources),
               {"spec.rules.train.maxRuntime", "not a duration"});
  expect_error(queue_from_object(with_rules(R"({"train": {"notice": "-5m"}})"), resources),
               {"spec.rules.train.notice", "negative"});
  expect_error(queue_from_object(with_rules(R"({"interactive": {"onExpiry": "kill"}})"), resources),
               {"spec.rules.interactive.onExpiry", "'kill' is not an action"});
  expect_error(queue_from_object(with_rules(R"({"interactive": {"idleThreshold": 150}})"), resources),
               {"spec.rules.interactive.idleThreshold", "not a percentage"});
  expect_error(queue_from_object(with_rules(R"({"interactive": {"idleWindow": "0s"}})"), resources),
               {"spec.rules.interactive.idleWindow", "zero"});
  expect_error(queue_from_object(with_rules(R"({"interactive": {"idleLimt": "1h"}})"), resources),
               {"spec.rules.interactive.idleLimt", "unknown field"});
}

TEST(AdapterPodTranslation, APodMayAskForShorterLimitsAndTheInferenceType) {
  json pod = with_annotations(notebook_pod(), {{"scheduling.tessera.dev/max-runtime", "2h"},
                                               {"scheduling.tessera.dev/idle-limit", "20m"},
                                               {"scheduling.tessera.dev/workload-type", "inference"}});
  const PodInfo info = expect_ok(pod_from_object(pod, kModels));
  EXPECT_EQ(info.max_runtime_seconds, 7200);
  EXPECT_EQ(info.idle_limit_seconds, 1200);
  EXPECT_EQ(info.kind, WorkloadKind::kInference);
  EXPECT_FALSE(expect_ok(pod_from_object(notebook_pod(), kModels)).max_runtime_seconds);
  expect_error(
      pod_from_object(with_annotations(notebook_pod(), {{"scheduling.tessera.dev/idle-limit", "0s"}}), kModels),
      {"scheduling.tessera.dev/idle-limit", "not a duration > 0"});
  expect_error(
      pod_from_object(with_annotations(notebook_pod(), {{"scheduling.tessera.dev/max-runtime", "soon"}}), kModels),
      {"scheduling.tessera.dev/max-runtime", "not a duration"});
}

TEST(AdapterQueueTranslation, QuantitiesAsStringsOrNumbers) {
  ResourceNames resources = ResourceNames::standard();
  json queue = research_queue();
  queue["spec"]["resources"] = json::parse(R"({
    "gpu": {"deserved": 0.5, "limit": "1500m"},
    "cpu": {"deserved": 0.25, "limit": "2k"},
    "memory": {"deserved": 1073741824, "limit": "1.5Gi"}
  })");
  const QueueSpec spec = expect_ok(queue_from_object(queue, resources));
  EXPECT_EQ(spec.quota[0].deserved, 0.5);
  EXPECT_EQ(spec.quota[0].limit, 1.5);
  EXPECT_EQ(spec.quota[1].deserved, 250);
  EXPECT_EQ(spec.quota[1].limit, 2'000'000);
  EXPECT_EQ(spec.quota[2].deserved, static_cast<double>(kGiB));
  EXPECT_EQ(spec.quota[2].limit, 1.5 * static_cast<double>(kGiB));
}

// ---------------------------------------------------------------------------------------------
// PodGroups.

json llama_pod_group() {
  return json::parse(R"({
    "apiVersion": "scheduling.tessera.dev/v1alpha1",
    "kind": "PodGroup",
    "metadata": {"name": "llama-pretrain", "namespace": "team-a", "creationTimestamp": "2026-11-21T09:59:58Z"},
    "spec": {"minMember": 4, "queue": "team-a-research", "priority": 50, "preemptible": false,
             "workloadType": "interactive"},
    "status": {"phase": "Pending"}
  })");
}

TEST(AdapterPodGroupTranslation, ReadsEveryField) {
  const PodGroupInfo group = expect_ok(pod_group_from_object(llama_pod_group()));
  EXPECT_EQ(group.key, "team-a/llama-pretrain");
  EXPECT_EQ(group.namespace_name, "team-a");
  EXPECT_EQ(group.name, "llama-pretrain");
  EXPECT_EQ(group.min_member, 4);
  EXPECT_EQ(group.queue, "team-a-research");
  EXPECT_EQ(group.priority, 50);
  EXPECT_EQ(group.preemptible, false);
  EXPECT_EQ(group.kind, WorkloadKind::kInteractive);
  EXPECT_DOUBLE_EQ(group.created_at, 1795255198.0);
}

TEST(AdapterPodGroupTranslation, OptionalFieldsStayUnset) {
  const json minimal = json::parse(R"({"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "PodGroup",
    "metadata": {"name": "g", "namespace": "ns"}, "spec": {"minMember": 1}})");
  const PodGroupInfo group = expect_ok(pod_group_from_object(minimal));
  EXPECT_EQ(group.min_member, 1);
  EXPECT_TRUE(group.queue.empty());
  EXPECT_FALSE(group.priority.has_value());
  EXPECT_FALSE(group.preemptible.has_value());
  EXPECT_FALSE(group.kind.has_value());
}

TEST(AdapterPodGroupTranslation, ErrorsNameTheGroupAndTheField) {
  json group = llama_pod_group();
  group["spec"]["minMember"] = 0;
  expect_error(pod_group_from_object(group), {"podgroup team-a/llama-pretrain", "spec.minMember", "below 1"});
  group["spec"].erase("minMember");
  expect_error(pod_group_from_object(group), {"spec.minMember", "required"});
  group["spec"]["minMember"] = "4";
  expect_error(pod_group_from_object(group), {"spec.minMember", "expected an integer"});
  group = llama_pod_group();
  group["spec"]["workloadType"] = "batch";
  expect_error(pod_group_from_object(group), {"spec.workloadType", "'batch'"});
  group = llama_pod_group();
  group["spec"]["preemptible"] = "no";
  expect_error(pod_group_from_object(group), {"spec.preemptible", "expected true or false"});
}

TEST(AdapterTopologyTranslation, PodGroupConstraintsSubgroupsAndTopologiesRead) {
  json group = llama_pod_group();
  group["spec"]["topologyConstraint"] = {{"topology", "network"},
                                         {"requiredTopologyLevel", "tessera.dev/block"},
                                         {"preferredTopologyLevel", "tessera.dev/rack"}};
  group["spec"]["subGroups"] =
      json::array({{{"name", "tp-0"},
                    {"minMember", 2},
                    {"topologyConstraint", {{"requiredTopologyLevel", "nvidia.com/gpu.clique"}}}},
                   {{"name", "tp-1"}, {"minMember", 2}}});
  const PodGroupInfo info = expect_ok(pod_group_from_object(group));
  EXPECT_EQ(info.topology.topology, "network");
  EXPECT_EQ(info.topology.required_level, "tessera.dev/block");
  EXPECT_EQ(info.topology.preferred_level, "tessera.dev/rack");
  ASSERT_EQ(info.subgroups.size(), 2u);
  EXPECT_EQ(info.subgroups[0].constraint.required_level, "nvidia.com/gpu.clique");
  EXPECT_EQ(info.subgroups[1].min_member, 2);
  EXPECT_TRUE(info.subgroups[1].constraint.empty());

  const json topology = json::parse(R"({"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "Topology",
    "metadata": {"name": "network"}, "spec": {"levels": [{"nodeLabel": "tessera.dev/block"},
    {"nodeLabel": "tessera.dev/rack"}]}})");
  const Topology read = expect_ok(topology_from_object(topology));
  EXPECT_EQ(read.name, "network");
  EXPECT_EQ(read.levels, (std::vector<std::string>{"tessera.dev/block", "tessera.dev/rack"}));
}

TEST(AdapterTopologyTranslation, ErrorsNameTheObjectAndTheField) {
  json group = llama_pod_group();
  group["spec"]["topologyConstraint"] = {{"requiredTopologyLevel", "tessera.dev/rack"}};
  expect_error(pod_group_from_object(group),
               {"podgroup team-a/llama-pretrain", "spec.topologyConstraint.topology", "required"});
  group["spec"]["topologyConstraint"] = {{"topology", "network"}};
  expect_error(pod_group_from_object(group), {"spec.topologyConstraint", "no level"});
  group["spec"]["topologyConstraint"] = {{"topology", "network"}, {"requiredTopologyLevel", "tessera.dev/rack"}};
  group["spec"]["subGroups"] = json::array({{{"name", "a"}}, {{"name", "a"}}});
  expect_error(pod_group_from_object(group), {"spec.subGroups[1].name", "'a' appears twice"});
  group["spec"]["subGroups"] =
      json::array({{{"name", "a"}, {"topologyConstraint", {{"topology", "other"}, {"requiredTopologyLevel", "x"}}}}});
  expect_error(pod_group_from_object(group), {"spec.subGroups[0].topologyConstraint.topology", "differs"});
  json topology = json::parse(R"({"metadata": {"name": "network"}, "spec": {"levels": []}})");
  expect_error(topology_from_object(topology), {"topology network", "spec.levels", "required"});
  topology["spec"]["levels"] = json::array({{{"nodeLabel", "rack"}}, {{"nodeLabel", "rack"}}});
  expect_error(topology_from_object(topology), {"spec.levels[1].nodeLabel", "'rack' appears twice"});
}

// ---------------------------------------------------------------------------------------------
// The manifests in deploy/examples read as they say.

// A YAML node as the JSON kubectl would send: plain scalars that read as integers or booleans
// become numbers and booleans, everything else strings.
json json_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json object = json::object();
      for (const auto& entry : node) object[entry.first.as<std::string>()] = json_of(entry.second);
      return object;
    }
    case YAML::NodeType::Sequence: {
      json array = json::array();
      for (const auto& item : node) array.push_back(json_of(item));
      return array;
    }
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() == "?") {
        if (text == "true" || text == "false") return text == "true";
        int64_t number = 0;
        if (YAML::convert<int64_t>::decode(node, number)) return number;
      }
      return text;
    }
    default:
      return nullptr;
  }
}

std::vector<json> example_objects(std::string_view file) {
  const std::string path = fmt::format("{}/deploy/examples/{}", TESSERA_SOURCE_DIR, file);
  std::vector<json> objects;
  for (const YAML::Node& document : YAML::LoadAllFromFile(path)) objects.push_back(json_of(document));
  return objects;
}

TEST(AdapterDeployExamples, QueuesFormATwoLevelTree) {
  ResourceNames resources = ResourceNames::standard();
  std::map<std::string, QueueSpec> queues;
  for (const json& object : example_objects("queues.yaml")) {
    ASSERT_EQ(object["kind"], "Queue");
    const QueueSpec queue = expect_ok(queue_from_object(object, resources));
    queues.emplace(queue.name, queue);
  }
  ASSERT_EQ(queues.size(), 6U);
  const ResourceId gpu = *resources.find("gpu");
  for (std::string_view department : {"research", "product"}) {
    const QueueSpec& parent = queues.at(std::string(department));
    EXPECT_TRUE(parent.parent.empty());
    double children_deserved = 0;
    int children = 0;
    for (const auto& [name, queue] : queues) {
      if (queue.parent != department) continue;
      ++children;
      children_deserved += queue.quota_for(gpu).deserved;
    }
    EXPECT_EQ(children, 2) << department;
    EXPECT_LE(children_deserved, parent.quota_for(gpu).deserved) << department;
  }
  EXPECT_EQ(queues.at("product-ads").quota_for(gpu).deserved, 3.5);
  EXPECT_TRUE(resources.find("gpu/NVIDIA-H100-80GB-HBM3").has_value());
}

TEST(AdapterDeployExamples, GangJobIsFourPodsOfEightGpus) {
  int pods = 0;
  for (const json& object : example_objects("gang-job.yaml")) {
    if (object["kind"] == "PodGroup") {
      EXPECT_EQ(expect_ok(pod_group_from_object(object)).min_member, 4);
    } else if (object["kind"] == "Pod") {
      const PodInfo pod = expect_ok(pod_from_object(object, kModels));
      EXPECT_TRUE(pod.tessera);
      EXPECT_EQ(pod.pod_group, "llama-pretrain");
      EXPECT_EQ(pod.spec.gpu, GpuRequest::whole(8));
      EXPECT_EQ(pod.spec.request, (Resources{16000, 128 * kGiB}));
      EXPECT_EQ(expect_ok(wire::parse_duration_seconds(
                    object["metadata"]["annotations"]["scheduling.tessera.dev/duration"].get<std::string>())),
                600);
      ++pods;
    }
  }
  EXPECT_EQ(pods, 4);
}

TEST(AdapterDeployExamples, NotebookAsksForHalfAGpuAndIsNotPreemptible) {
  int pods = 0;
  for (const json& object : example_objects("fractional-notebook.yaml")) {
    if (object["kind"] != "Pod") continue;
    const PodInfo pod = expect_ok(pod_from_object(object, kModels));
    EXPECT_EQ(pod.spec.gpu, GpuRequest::portion(500));
    EXPECT_EQ(pod.kind, WorkloadKind::kInteractive);
    EXPECT_FALSE(pod.spec.preemptible);
    ++pods;
  }
  EXPECT_EQ(pods, 1);
}

}  // namespace
}  // namespace tessera::adapter
