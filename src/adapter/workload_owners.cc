#include "adapter/workload_owners.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <initializer_list>

#include "adapter/annotations.h"

namespace tessera::adapter {

namespace {

using nlohmann::json;

constexpr std::string_view kLwsNameLabel = "leaderworkerset.sigs.k8s.io/name";
constexpr std::string_view kLwsGroupIndexLabel = "leaderworkerset.sigs.k8s.io/group-index";
constexpr std::string_view kLwsSizeAnnotation = "leaderworkerset.sigs.k8s.io/size";

// The value at `path` (object keys), or nullptr. Direct lookups: this runs for every pod, every cycle.
const json* field(const json& object, std::initializer_list<std::string_view> path) {
  const json* value = &object;
  for (std::string_view key : path) {
    if (!value->is_object()) return nullptr;
    const auto it = value->find(key);
    if (it == value->end()) return nullptr;
    value = &*it;
  }
  return value;
}

std::string text_at(const json& object, std::initializer_list<std::string_view> path) {
  const json* value = field(object, path);
  return value != nullptr && value->is_string() ? value->get<std::string>() : "";
}

// A whole number field, `fallback` when absent or not a non-negative integer.
int64_t count_at(const json& object, std::initializer_list<std::string_view> path, int64_t fallback) {
  const json* value = field(object, path);
  if (value != nullptr && value->is_number_integer() && value->get<int64_t>() >= 0) return value->get<int64_t>();
  return fallback;
}

std::string metadata_text(const json& object, std::string_view map, std::string_view key) {
  return text_at(object, {"metadata", map, key});
}

// The ownerReference with controller: true (the object that made this one), if any.
const json* controller_of(const json& object) {
  const json* references = field(object, {"metadata", "ownerReferences"});
  if (references == nullptr || !references->is_array()) return nullptr;
  for (const json& reference : *references) {
    const json* controller = field(reference, {"controller"});
    if (controller != nullptr && controller->is_boolean() && controller->get<bool>()) return &reference;
  }
  return nullptr;
}

bool text_is(const json& object, std::string_view key, std::string_view expected) {
  const json* value = field(object, {key});
  return value != nullptr && value->is_string() && value->get_ref<const std::string&>() == expected;
}

// Whether the reference names `kind` of API group `group` (any version).
bool refers_to(const json* reference, std::string_view group, std::string_view kind) {
  if (reference == nullptr || !text_is(*reference, "kind", kind)) return false;
  const json* api_version = field(*reference, {"apiVersion"});
  if (api_version == nullptr || !api_version->is_string()) return false;
  const std::string_view text = api_version->get_ref<const std::string&>();
  return text.substr(0, text.find('/')) == group;
}

ObjectRef ref_of(const json& reference, const std::string& ns) {
  return {reference.value("apiVersion", ""), reference.value("kind", ""), ns, reference.value("name", ""),
          reference.value("uid", "")};
}

const json* find(const std::map<std::string, kube::ObjectPtr>& objects, const std::string& ns,
                 const std::string& name) {
  auto it = objects.find(ns + "/" + name);
  return it == objects.end() ? nullptr : it->second.get();
}

// Pods of a Job that run at once: its parallelism (default 1), no more than its completions.
int64_t job_pods(const json& job_spec) {
  const int64_t parallelism = count_at(job_spec, {"parallelism"}, 1);
  const int64_t completions = count_at(job_spec, {"completions"}, INT64_MAX);
  return std::min(parallelism, completions);
}

int clamp_members(int64_t count) { return static_cast<int>(std::clamp<int64_t>(count, 1, INT_MAX)); }

// "job-train": the kind in lower case, then the name (and a LeaderWorkerSet's group); empty where
// that passes the 253 characters of a name.
std::string pod_group_name_for(std::string_view kind, std::string_view name, std::string_view group = "") {
  std::string result;
  for (char c : kind) result.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  result += fmt::format("-{}", name);
  if (!group.empty()) result += fmt::format("-{}", group);
  return result.size() <= 253 ? result : "";
}

OwnedWorkload workload_of(const ObjectRef& owner, const json* owner_object, int64_t min_member) {
  OwnedWorkload workload;
  workload.key = fmt::format("{}/{}/{}", owner.namespace_name, owner.kind, owner.name);
  workload.owner = owner;
  workload.pod_group_name = pod_group_name_for(owner.kind, owner.name);
  workload.collected_with = owner;
  workload.min_member = clamp_members(min_member);
  if (owner_object != nullptr) workload.queue = metadata_text(*owner_object, "labels", kQueueLabel);
  return workload;
}

OwnedWorkload waiting(const ObjectRef& owner, const std::string& missing) {
  OwnedWorkload workload = workload_of(owner, nullptr, 1);
  workload.waiting_for = missing;
  return workload;
}

// A JobSet's pods: every replicated job's replicas times the pods each job runs at once.
OwnedWorkload jobset_workload(const json& jobset, const ObjectRef& jobset_ref, const OwnerObjects& owners) {
  int64_t members = 0;
  const json* replicated = field(jobset, {"spec", "replicatedJobs"});
  if (replicated != nullptr && replicated->is_array()) {
    for (const json& entry : *replicated) {
      const json* job_spec = field(entry, {"template", "spec"});
      members += count_at(entry, {"replicas"}, 1) * (job_spec != nullptr ? job_pods(*job_spec) : 1);
    }
  }
  // A TrainJob (Kubeflow Trainer) makes the JobSet: it is what the user created.
  const json* maker = controller_of(jobset);
  if (refers_to(maker, "trainer.kubeflow.org", "TrainJob")) {
    const ObjectRef trainjob_ref = ref_of(*maker, jobset_ref.namespace_name);
    const json* trainjob = find(owners.trainjobs, trainjob_ref.namespace_name, trainjob_ref.name);
    OwnedWorkload workload = workload_of(trainjob_ref, trainjob, members);
    if (workload.queue.empty()) workload.queue = metadata_text(jobset, "labels", kQueueLabel);
    return workload;
  }
  return workload_of(jobset_ref, &jobset, members);
}

OwnedWorkload job_workload(const json& pod_reference, const std::string& ns, const OwnerObjects& owners) {
  const ObjectRef job_ref = ref_of(pod_reference, ns);
  const json* job = find(owners.jobs, ns, job_ref.name);
  if (job == nullptr) return waiting(job_ref, job_ref.describe());
  const json* maker = controller_of(*job);
  if (refers_to(maker, "jobset.x-k8s.io", "JobSet")) {
    const ObjectRef jobset_ref = ref_of(*maker, ns);
    const json* jobset = find(owners.jobsets, ns, jobset_ref.name);
    if (jobset == nullptr) return waiting(jobset_ref, jobset_ref.describe());
    return jobset_workload(*jobset, jobset_ref, owners);
  }
  const json* spec = field(*job, {"spec"});
  return workload_of(job_ref, job, spec != nullptr ? job_pods(*spec) : 1);
}

// Master and workers; an elastic job (elasticPolicy.minReplicas) starts with its minimum workers.
OwnedWorkload pytorchjob_workload(const json& pod_reference, const std::string& ns, const OwnerObjects& owners) {
  const ObjectRef ref = ref_of(pod_reference, ns);
  const json* job = find(owners.pytorchjobs, ns, ref.name);
  if (job == nullptr) return waiting(ref, ref.describe());
  int64_t masters = 0;
  int64_t workers = 0;
  const json* specs = field(*job, {"spec", "pytorchReplicaSpecs"});
  if (specs != nullptr && specs->is_object()) {
    for (const auto& [type, spec] : specs->items())
      (type == "Worker" ? workers : masters) += count_at(spec, {"replicas"}, 1);
  }
  const int64_t min_workers = count_at(*job, {"spec", "elasticPolicy", "minReplicas"}, workers);
  return workload_of(ref, job, masters + std::min(workers, min_workers));
}

// The pods of one RayCluster worker group that must run, as KubeRay's own gang schedulers count
// them (its utils.CalculateMinReplicas and GetWorkerGroupDesiredReplicas): with the autoscaler on,
// its minReplicas; else its replicas kept within [minReplicas, maxReplicas]; times numOfHosts
// (pods per replica); none while the group is suspended.
int64_t ray_group_pods(const json& group, bool autoscaling) {
  if (const json* suspend = field(group, {"suspend"}); suspend != nullptr && suspend->is_boolean() && *suspend)
    return 0;
  const int64_t min = count_at(group, {"minReplicas"}, 0);
  const int64_t max = count_at(group, {"maxReplicas"}, INT32_MAX);
  const int64_t hosts = count_at(group, {"numOfHosts"}, 1);
  if (autoscaling) return min * hosts;
  const int64_t replicas = count_at(group, {"replicas"}, 0);
  return (min > max ? max : std::clamp(replicas, min, max)) * hosts;
}

// The head and the workers every group must run; an autoscaled group's workers above its minimum
// are elastic extras (placed when there is room, taken back first).
OwnedWorkload raycluster_workload(const json& pod_reference, const std::string& ns, const OwnerObjects& owners) {
  const ObjectRef ref = ref_of(pod_reference, ns);
  const json* cluster = find(owners.rayclusters, ns, ref.name);
  if (cluster == nullptr) return waiting(ref, ref.describe());
  const json* autoscaler = field(*cluster, {"spec", "enableInTreeAutoscaling"});
  const bool autoscaling = autoscaler != nullptr && autoscaler->is_boolean() && autoscaler->get<bool>();
  int64_t members = 1;  // the head
  const json* groups = field(*cluster, {"spec", "workerGroupSpecs"});
  if (groups != nullptr && groups->is_array()) {
    for (const json& group : *groups) members += ray_group_pods(group, autoscaling);
  }
  return workload_of(ref, cluster, members);
}

std::optional<int64_t> whole_number(const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

}  // namespace

std::optional<OwnedWorkload> owned_workload(const json& pod, const OwnerObjects& owners) {
  const json* controller = controller_of(pod);
  if (controller == nullptr) return std::nullopt;
  const std::string ns = text_at(pod, {"metadata", "namespace"});
  if (refers_to(controller, "batch", "Job")) return job_workload(*controller, ns, owners);
  if (refers_to(controller, "kubeflow.org", "PyTorchJob")) return pytorchjob_workload(*controller, ns, owners);
  if (refers_to(controller, "ray.io", "RayCluster")) return raycluster_workload(*controller, ns, owners);
  if (refers_to(controller, "apps", "StatefulSet")) {
    const std::string lws = metadata_text(pod, "labels", kLwsNameLabel);
    const std::string group = metadata_text(pod, "labels", kLwsGroupIndexLabel);
    if (!lws.empty() && !group.empty()) {
      OwnedWorkload workload;
      workload.owner = {"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", ns, lws, ""};
      workload.key = fmt::format("{}/LeaderWorkerSet/{}/{}", ns, lws, group);
      workload.min_member =
          clamp_members(whole_number(metadata_text(pod, "annotations", kLwsSizeAnnotation)).value_or(1));
      workload.pod_group_name = pod_group_name_for("LeaderWorkerSet", lws, group);
      workload.collected_with = ref_of(*controller, ns);  // the group's StatefulSet: its pods carry no LWS uid
      return workload;
    }
  }
  if (refers_to(controller, "apps", "StatefulSet") || refers_to(controller, "apps", "ReplicaSet")) {
    OwnedWorkload workload;
    workload.owner = ref_of(*controller, ns);
    workload.key = ns + "/" + text_at(pod, {"metadata", "name"});
    workload.inference = true;
    return workload;
  }
  return std::nullopt;
}

}  // namespace tessera::adapter
