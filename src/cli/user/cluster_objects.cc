#include "cli/user/cluster_objects.h"

#include <fmt/format.h>

#include "adapter/annotations.h"
#include "cli/user/object_reads.h"
#include "cli/user/workload_view.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

std::map<std::string, kube::ObjectPtr> keyed(const json& list) {
  std::map<std::string, kube::ObjectPtr> objects;
  for (const json& item : list_items(list)) objects[object_key(item)] = std::make_shared<const json>(item);
  return objects;
}

// An optional kind's list: empty where the cluster does not serve it or the user may not list it.
json optional_list(const Cluster& cluster, const std::string& group_version, const std::string& resource) {
  Result<json> list = cluster.get_if_present(scope_path(cluster, group_version, resource));
  return list ? *list : json::object();
}

std::string label_of(const json& object, std::string_view label) {
  const json labels = object.value("/metadata/labels"_json_pointer, json::object());
  return labels.is_object() ? labels.value(std::string(label), "") : "";
}

}  // namespace

adapter::OwnerObjects owner_objects(const json& jobs, const json& jobsets, const json& pytorchjobs,
                                    const json& trainjobs, const json& rayclusters) {
  return {keyed(jobs), keyed(jobsets), keyed(pytorchjobs), keyed(trainjobs), keyed(rayclusters)};
}

Result<json> list_tessera_kind(const Cluster& cluster, const std::string& path, const std::string& plural) {
  Result<json> list = cluster.get_if_present(path);
  if (list && list->is_null()) {
    return Error{fmt::format("the server does not serve {}.{}: Tessera's CRDs are not installed (kubectl apply -f "
                             "deploy/crds/)",
                             plural, adapter::kApiGroup)};
  }
  return list;
}

Result<WorkloadObjects> fetch_workload_objects(const Cluster& cluster) {
  WorkloadObjects objects;
  Result<json> pod_groups =
      list_tessera_kind(cluster, scope_path(cluster, kTesseraGroupVersion, "podgroups"), "podgroups");
  if (!pod_groups) return pod_groups.error();
  objects.pod_groups = std::move(*pod_groups);
  Result<json> pods = cluster.get(scope_path(cluster, "/api/v1", "pods"));
  if (!pods) return pods.error();
  objects.pods = std::move(*pods);
  // Only a namespace's queue label is read; a user who may not list namespaces still sees the rest.
  Result<json> namespaces = cluster.get_if_present("/api/v1/namespaces");
  objects.namespaces = namespaces ? *namespaces : json::object();
  objects.owners = owner_objects(optional_list(cluster, "/apis/batch/v1", "jobs"),
                                 optional_list(cluster, "/apis/jobset.x-k8s.io/v1alpha2", "jobsets"),
                                 optional_list(cluster, "/apis/kubeflow.org/v1", "pytorchjobs"),
                                 optional_list(cluster, "/apis/trainer.kubeflow.org/v1alpha1", "trainjobs"),
                                 optional_list(cluster, "/apis/ray.io/v1", "rayclusters"));
  return objects;
}

PodQueues pod_queues(const WorkloadObjects& objects) {
  std::map<std::string, std::string> group_queue, namespace_queue;
  for (const json& group : list_items(objects.pod_groups)) group_queue[object_key(group)] = text_at(group, "/spec/queue");
  for (const json& space : list_items(objects.namespaces)) {
    namespace_queue[text_at(space, "/metadata/name")] = label_of(space, adapter::kNamespaceQueueLabel);
  }
  const std::map<std::string, std::string> groups = pod_groups_of_pods(objects.pods, objects.owners);
  PodQueues queues;
  for (const json& pod : list_items(objects.pods)) {
    const std::string key = object_key(pod);
    std::string queue = label_of(pod, adapter::kQueueLabel);
    if (auto group = groups.find(key); queue.empty() && group != groups.end()) queue = group_queue[group->second];
    if (queue.empty()) queue = namespace_queue[text_at(pod, "/metadata/namespace")];
    queues[key] = queue;
  }
  return queues;
}

Result<json> find_workload(const Cluster& cluster, const std::string& namespace_name, const std::string& name) {
  Result<json> group =
      cluster.get_if_present(namespaced_path(kTesseraGroupVersion, namespace_name, "podgroups", name));
  if (!group) return group.error();
  if (!group->is_null()) return *group;
  Result<json> groups =
      list_tessera_kind(cluster, namespaced_path(kTesseraGroupVersion, namespace_name, "podgroups"), "podgroups");
  if (!groups) return groups.error();
  for (const json& candidate : list_items(*groups)) {
    const json owners = candidate.value("/metadata/ownerReferences"_json_pointer, json::array());
    for (const json& owner : owners.is_array() ? owners : json::array()) {
      if (owner.is_object() && owner.value("name", "") == name) return candidate;
    }
  }
  return Error{fmt::format("workload \"{}\" not found in namespace \"{}\"", name, namespace_name)};
}

}  // namespace tessera::cli
