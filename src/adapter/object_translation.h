// Kubernetes objects (as JSON from the API server) read into the engine's model: Nodes into
// NodeSpecs, Pods into PodSpecs plus what the adapter needs to group and track them, Queue
// and PodGroup custom resources into QueueSpecs and gang terms. Pure functions: the same
// object always reads the same way. Errors name the object and the field.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "adapter/object_fields.h"
#include "core/gpu_model.h"
#include "core/node.h"
#include "core/pod.h"
#include "core/queue.h"
#include "core/result.h"
#include "core/workload.h"

namespace tessera::adapter {

// A Node: allocatable cpu/memory, `nvidia.com/gpu` devices of the model and memory its
// labels give (nvidia.com/gpu.product, nvidia.com/gpu.memory in MiB), labels, taints.
// Resources come from status.allocatable, else status.capacity. Devices without a product label
// are of model "unknown", without a memory label of 0 bytes (no memory request fits them).
// Schedulable unless spec.unschedulable or its Ready condition is not True; a node with no
// Ready condition (made by hand, never reported by a kubelet) counts as ready. The model is
// interned into `models`.
Result<NodeSpec> node_from_object(const nlohmann::json& node, GpuModelCatalog& models);

enum class PodPhase : uint8_t { kPending, kRunning, kSucceeded, kFailed, kUnknown };
// status.phase as a value: "" and "Pending" are pending, a name not in the API is unknown.
PodPhase pod_phase_named(std::string_view phase);

// What the adapter reads of one pod.
// What a GPU-memory pod tells the node agent through the annotations written at binding: its
// request and limit in bytes and the resolver it chose (annotations.h). Zero bytes: not a
// GPU-memory pod.
struct GpuMemoryTerms {
  int64_t request_bytes = 0;
  int64_t limit_bytes = 0;
  std::string resolver = "wait";  // wait, priority or swap (kGpuMemoryResolverAnnotation)
  friend bool operator==(const GpuMemoryTerms&, const GpuMemoryTerms&) = default;
};

struct PodInfo {
  std::string key;  // "namespace/name"
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  bool tessera = false;   // spec.schedulerName == "tessera"
  std::string node_name;  // spec.nodeName; empty while unbound
  PodPhase phase = PodPhase::kPending;
  bool terminating = false;  // metadata.deletionTimestamp is set
  // Engine requirements: requests (sum of containers, or the largest init container if larger,
  // plus overhead), whole GPUs from the nvidia.com/gpu limit (or request), or a fraction/memory
  // from the annotations; nodeSelector (a nvidia.com/gpu.product selector also sets
  // allowed_models), tolerations, spec.priority, preemptible.
  PodSpec spec;
  std::string pod_group;    // label scheduling.tessera.dev/pod-group
  std::string queue_label;  // label scheduling.tessera.dev/queue
  std::string subgroup;     // label scheduling.tessera.dev/subgroup: a subgroup of its PodGroup
  WorkloadKind kind = WorkloadKind::kTrain;
  bool preemptible_explicit = false;  // the annotation set preemptible
  std::vector<int> gpu_indices;       // annotation gpu-index (bound Tessera pods)
  std::string gpu_memory_resolver = "wait";  // annotation gpu-memory-resolver, validated
  double created_at = 0;              // metadata.creationTimestamp, Unix seconds
  double started_at = 0;              // status.startTime, 0 when absent
  // When it was bound: the lastTransitionTime of its condition PodScheduled=True, which the API
  // server sets at the binding; 0 when absent. A bound pod its kubelet has not started yet has
  // no startTime, but holds its node's GPUs from then.
  double bound_at = 0;
  // spec.activeDeadlineSeconds: the kubelet ends the pod this long after it starts; 0 when absent.
  double active_deadline_seconds = 0;
  // The annotations max-runtime and idle-limit: shorter limits than its queue's.
  std::optional<double> max_runtime_seconds;
  std::optional<double> idle_limit_seconds;
};

// The terms of a GPU-memory pod (empty for any other).
GpuMemoryTerms gpu_memory_terms(const PodInfo& pod);

// Reads a pod. Errors (a malformed annotation or quantity) name the pod and the field; the
// adapter reports them on the pod instead of scheduling it. GPU models are looked up in
// `models`, never added, so read the nodes first; a model no node has makes the pod fit no
// device (adapter/gpu_model_selection.h says how, and which node affinity is read).
Result<PodInfo> pod_from_object(const nlohmann::json& pod, const GpuModelCatalog& models);

// A Queue (cluster-scoped): spec.parent, spec.priority, spec.resources.{gpu,cpu,memory}
// .{deserved,overQuotaWeight,limit}, spec.gpuModels.MODEL.{...}, spec.preemptMinRuntime and
// spec.reclaimMinRuntime (durations). Per-model resources are added to `resources`
// ("gpu/A100"). cpu is counted in millicores and memory in bytes, as the engine does.
Result<QueueSpec> queue_from_object(const nlohmann::json& queue, ResourceNames& resources);

// A Queue's spec.rules.{train,interactive,inference}.{maxRuntime, idleLimit, onExpiry, notice,
// requeueDelay, warmupGrace, idleWindow} (durations) and idleThreshold (percent): its time and
// idle-GPU limits (docs/design.md §6). Errors name the queue and the field.
Result<WorkRulesByKind> work_rules_from(const ObjectFields& fields);

// The limits a pod asks for through the max-runtime and idle-limit annotations.
struct AskedLimits {
  std::optional<double> max_runtime_seconds;
  std::optional<double> idle_limit_seconds;
};
Result<AskedLimits> asked_limits(const ObjectFields& fields, const Labels& annotations);

// A PodGroup: spec.minMember, spec.queue, and optional spec.priority, spec.preemptible,
// spec.workloadType.
struct PodGroupInfo {
  std::string key;  // "namespace/name"
  std::string namespace_name;
  std::string name;
  int min_member = 1;
  std::string queue;
  std::optional<int> priority;
  std::optional<bool> preemptible;
  std::optional<WorkloadKind> kind;
  double created_at = 0;
  // spec.topologyConstraint {topology, requiredTopologyLevel, preferredTopologyLevel} and
  // spec.subGroups [{name, minMember, topologyConstraint}] (docs/topology.md): pods join a
  // subgroup by the label scheduling.tessera.dev/subgroup.
  TopologyConstraint topology;
  std::vector<SubGroupSpec> subgroups;
};
Result<PodGroupInfo> pod_group_from_object(const nlohmann::json& pod_group);

// A Topology (cluster-scoped): metadata.name and spec.levels [{nodeLabel}], widest first, at
// least one, no label twice.
Result<Topology> topology_from_object(const nlohmann::json& topology);

}  // namespace tessera::adapter
