#include "cli/user/submission.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "adapter/annotations.h"
#include "cli/user/object_reads.h"
#include "wire/duration.h"
#include "wire/quantity.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

struct KindRoute {
  const char* api_version;
  const char* kind;
  const char* group_version_path;
  const char* resource;
  bool namespaced;
};

constexpr KindRoute kRoutes[] = {
    {"v1", "Pod", "/api/v1", "pods", true},
    {"batch/v1", "Job", "/apis/batch/v1", "jobs", true},
    {"scheduling.tessera.dev/v1alpha1", "PodGroup", "/apis/scheduling.tessera.dev/v1alpha1", "podgroups", true},
    {"scheduling.tessera.dev/v1alpha1", "Queue", "/apis/scheduling.tessera.dev/v1alpha1", "queues", false},
    {"apps/v1", "Deployment", "/apis/apps/v1", "deployments", true},
    {"apps/v1", "StatefulSet", "/apis/apps/v1", "statefulsets", true},
    {"jobset.x-k8s.io/v1alpha2", "JobSet", "/apis/jobset.x-k8s.io/v1alpha2", "jobsets", true},
    {"kubeflow.org/v1", "PyTorchJob", "/apis/kubeflow.org/v1", "pytorchjobs", true},
    {"trainer.kubeflow.org/v1alpha1", "TrainJob", "/apis/trainer.kubeflow.org/v1alpha1", "trainjobs", true},
    {"ray.io/v1", "RayCluster", "/apis/ray.io/v1", "rayclusters", true},
    {"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "/apis/leaderworkerset.x-k8s.io/v1", "leaderworkersets", true},
};

// A DNS-1123 label, as a Job's name must be (its pods carry it in a label).
bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(name.front())) || !std::isalnum(static_cast<unsigned char>(name.back()))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return (std::islower(c) != 0) || (std::isdigit(c) != 0) || c == '-';
  });
}

Result<json> key_values(const std::vector<std::string>& pairs, const char* flag) {
  json map = json::object();
  for (const std::string& pair : pairs) {
    const size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Error{fmt::format("{} {}: expected KEY=VALUE", flag, pair)};
    }
    map[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  return map;
}

// The GPU part of a pod: its container limit and its annotations.
Status add_gpus(const SubmitRequest& request, json& limits, json& annotations) {
  if (!request.gpus.empty() && !request.gpu_memory.empty()) {
    return Error{"--gpus and --gpu-memory: give one (whole GPUs or a fraction, or an amount of GPU memory)"};
  }
  if (!request.gpu_memory.empty()) {
    Result<int64_t> bytes = wire::parse_quantity(request.gpu_memory);
    if (!bytes || *bytes <= 0) {
      return Error{fmt::format("--gpu-memory {}: expected an amount of GPU memory such as 20Gi", request.gpu_memory)};
    }
    annotations[std::string(adapter::kGpuMemoryAnnotation)] = request.gpu_memory;
    return Ok{};
  }
  if (request.gpus.empty()) return Ok{};
  Result<int64_t> milli = wire::parse_quantity_milli(request.gpus);
  const bool whole = milli && *milli >= 1000 && *milli % 1000 == 0;
  const bool portion = milli && *milli > 0 && *milli < 1000;
  if (!whole && !portion) {
    return Error{fmt::format("--gpus {}: expected a whole number of GPUs (1, 8) or a fraction of one between 0 and 1 "
                             "(0.5); for part of a GPU's memory use --gpu-memory",
                             request.gpus)};
  }
  if (whole) {
    limits[std::string(adapter::kGpuResourceName)] = std::to_string(*milli / 1000);
  } else {
    annotations[std::string(adapter::kGpuFractionAnnotation)] = request.gpus;
  }
  return Ok{};
}

}  // namespace

Result<std::vector<json>> submission_objects(const SubmitRequest& request) {
  if (!valid_name(request.name)) {
    return Error{fmt::format("name \"{}\": expected lower-case letters, digits and '-', starting and ending with a "
                             "letter or digit, at most 63 characters",
                             request.name)};
  }
  if (request.type != "train" && request.type != "interactive") {
    return Error{fmt::format("--type {}: expected train or interactive", request.type)};
  }
  if (request.image.empty()) return Error{"--image: required"};
  if (request.pods < 1) return Error{fmt::format("--pods {}: expected at least 1", request.pods)};
  json container = {{"name", "main"}, {"image", request.image}};
  if (!request.command.empty()) container["command"] = request.command;
  json limits = json::object(), requests = json::object();
  Result<json> annotations = key_values(request.annotations, "--annotation");
  if (!annotations) return annotations.error();
  Result<json> labels = key_values(request.labels, "--label");
  if (!labels) return labels.error();
  if (Status gpus = add_gpus(request, limits, *annotations); !gpus) return gpus.error();
  for (const auto& [flag, resource, value] :
       {std::tuple{"--cpu", "cpu", request.cpu}, std::tuple{"--memory", "memory", request.memory}}) {
    if (value.empty()) continue;
    if (!wire::parse_quantity_milli(value)) return Error{fmt::format("{} {}: expected a quantity", flag, value)};
    requests[resource] = value;
  }
  if (!limits.empty()) container["resources"]["limits"] = limits;
  if (!requests.empty()) container["resources"]["requests"] = requests;
  if (!request.queue.empty()) (*labels)[std::string(adapter::kQueueLabel)] = request.queue;
  json pod_spec = {{"schedulerName", adapter::kSchedulerName}, {"containers", json::array({container})}};
  if (!request.time_limit.empty()) {
    Result<double> seconds = wire::parse_duration_seconds(request.time_limit);
    if (!seconds || *seconds < 1) {
      return Error{fmt::format("--time-limit {}: expected a duration of at least a second, such as 90m or 2h",
                               request.time_limit)};
    }
    pod_spec["activeDeadlineSeconds"] = static_cast<int64_t>(std::ceil(*seconds));
  }
  const json metadata = {{"name", request.name}, {"namespace", request.namespace_name}, {"labels", *labels}};

  if (request.type == "train") {
    pod_spec["restartPolicy"] = "Never";
    json template_metadata = {{"labels", *labels}};
    if (!annotations->empty()) template_metadata["annotations"] = *annotations;
    return std::vector<json>{{{"apiVersion", "batch/v1"},
                              {"kind", "Job"},
                              {"metadata", metadata},
                              {"spec",
                               {{"parallelism", request.pods},
                                {"completions", request.pods},
                                {"completionMode", "Indexed"},
                                {"template", {{"metadata", template_metadata}, {"spec", pod_spec}}}}}}};
  }
  // Interactive: a PodGroup of its pods, which nothing recreates; not preemptible by its type.
  (*annotations)[std::string(adapter::kWorkloadTypeAnnotation)] = "interactive";
  json group_spec = {{"minMember", request.pods}, {"workloadType", "interactive"}};
  if (!request.queue.empty()) group_spec["queue"] = request.queue;
  std::vector<json> objects = {
      {{"apiVersion", adapter::kApiVersion}, {"kind", "PodGroup"}, {"metadata", metadata}, {"spec", group_spec}}};
  for (int index = 0; index < request.pods; ++index) {
    json pod_metadata = metadata;
    pod_metadata["name"] = fmt::format("{}-{}", request.name, index);
    pod_metadata["labels"][std::string(adapter::kPodGroupLabel)] = request.name;
    pod_metadata["annotations"] = *annotations;
    objects.push_back({{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", pod_metadata}, {"spec", pod_spec}});
  }
  return objects;
}

Result<std::string> creation_path(const json& object, const std::string& default_namespace) {
  const std::string api_version = text_at(object, "/apiVersion"), kind = text_at(object, "/kind");
  for (const KindRoute& route : kRoutes) {
    if (api_version != route.api_version || kind != route.kind) continue;
    if (!route.namespaced) return fmt::format("{}/{}", route.group_version_path, route.resource);
    std::string space = text_at(object, "/metadata/namespace");
    if (space.empty()) space = default_namespace;
    return fmt::format("{}/namespaces/{}/{}", route.group_version_path, space, route.resource);
  }
  std::string known;
  for (const KindRoute& route : kRoutes) known += fmt::format("{}{} ({})", known.empty() ? "" : ", ", route.kind, route.api_version);
  return Error{fmt::format("kind {} ({}) is not one tessera submit creates: {}; use kubectl for others",
                           kind.empty() ? "<none>" : kind, api_version.empty() ? "no apiVersion" : api_version, known)};
}

std::string created_line(const json& object, std::string_view verb) {
  std::string kind = text_at(object, "/kind");
  std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::string api_version = text_at(object, "/apiVersion");
  const size_t slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : "." + api_version.substr(0, slash);
  return fmt::format("{}{}/{} {}", kind, group, text_at(object, "/metadata/name"), verb);
}

}  // namespace tessera::cli
