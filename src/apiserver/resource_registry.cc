#include "apiserver/resource_registry.h"

#include <algorithm>
#include <mutex>

namespace tessera::apiserver {

namespace {

const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                            "list",   "patch",  "update",           "watch"};
const std::vector<std::string> kStatusVerbs = {"get", "patch", "update"};

struct Declaration {
  std::string group;
  std::string version;
  std::string plural;
  std::string kind;
  bool namespaced = true;
  std::vector<std::string> short_names = {};
  std::vector<std::string> categories = {};
  bool status = false;
  std::vector<std::string> field_labels = {};
};

ResourceType declare(Declaration declaration) {
  ResourceType type;
  type.group = std::move(declaration.group);
  type.version = std::move(declaration.version);
  type.plural = std::move(declaration.plural);
  type.kind = std::move(declaration.kind);
  type.singular = type.kind;
  std::transform(type.singular.begin(), type.singular.end(), type.singular.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  type.list_kind = type.kind + "List";
  type.namespaced = declaration.namespaced;
  type.short_names = std::move(declaration.short_names);
  type.categories = std::move(declaration.categories);
  type.verbs = kAllVerbs;
  if (declaration.status) type.subresources.push_back(Subresource{"status", type.kind, "", "", kStatusVerbs});
  type.field_labels = std::move(declaration.field_labels);
  return type;
}

std::vector<ResourceType> builtin_resources() {
  std::vector<ResourceType> types;
  types.push_back(declare({.group = "",
                           .version = "v1",
                           .plural = "namespaces",
                           .kind = "Namespace",
                           .namespaced = false,
                           .short_names = {"ns"},
                           .status = true,
                           .field_labels = {"status.phase"}}));
  types.push_back(declare({.group = "",
                           .version = "v1",
                           .plural = "nodes",
                           .kind = "Node",
                           .namespaced = false,
                           .short_names = {"no"},
                           .status = true,
                           .field_labels = {"spec.unschedulable"}}));
  ResourceType pods =
      declare({.group = "",
               .version = "v1",
               .plural = "pods",
               .kind = "Pod",
               .short_names = {"po"},
               .categories = {"all"},
               .status = true,
               .field_labels = {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                                "status.phase", "status.podIP", "status.nominatedNodeName"}});
  pods.subresources.push_back(Subresource{"binding", "Binding", "", "", {"create"}});
  pods.subresources.push_back(Subresource{"eviction", "Eviction", "policy", "v1", {"create"}});
  types.push_back(std::move(pods));
  ResourceType bindings = declare({.group = "", .version = "v1", .plural = "bindings", .kind = "Binding"});
  bindings.verbs = {"create"};
  types.push_back(std::move(bindings));
  types.push_back(
      declare({.group = "",
               .version = "v1",
               .plural = "events",
               .kind = "Event",
               .short_names = {"ev"},
               .field_labels = {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                                "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                                "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}}));
  types.push_back(declare({.group = "",
                           .version = "v1",
                           .plural = "services",
                           .kind = "Service",
                           .short_names = {"svc"},
                           .categories = {"all"},
                           .status = true}));
  types.push_back(declare(
      {.group = "", .version = "v1", .plural = "serviceaccounts", .kind = "ServiceAccount", .short_names = {"sa"}}));
  types.push_back(
      declare({.group = "", .version = "v1", .plural = "configmaps", .kind = "ConfigMap", .short_names = {"cm"}}));
  types.push_back(
      declare({.group = "", .version = "v1", .plural = "secrets", .kind = "Secret", .field_labels = {"type"}}));
  types.push_back(declare({.group = "apps",
                           .version = "v1",
                           .plural = "deployments",
                           .kind = "Deployment",
                           .short_names = {"deploy"},
                           .categories = {"all"},
                           .status = true}));
  // Stored only (no controller runs them): what a controller makes pods from, for the scheduler's
  // grouping of those pods, with tests that act as the controller.
  types.push_back(declare({.group = "apps",
                           .version = "v1",
                           .plural = "replicasets",
                           .kind = "ReplicaSet",
                           .short_names = {"rs"},
                           .categories = {"all"},
                           .status = true}));
  types.push_back(declare({.group = "apps",
                           .version = "v1",
                           .plural = "statefulsets",
                           .kind = "StatefulSet",
                           .short_names = {"sts"},
                           .categories = {"all"},
                           .status = true}));
  types.push_back(declare(
      {.group = "batch", .version = "v1", .plural = "jobs", .kind = "Job", .categories = {"all"}, .status = true}));
  types.push_back(declare({.group = "coordination.k8s.io", .version = "v1", .plural = "leases", .kind = "Lease"}));
  types.push_back(declare({.group = "policy",
                           .version = "v1",
                           .plural = "poddisruptionbudgets",
                           .kind = "PodDisruptionBudget",
                           .short_names = {"pdb"},
                           .status = true}));
  types.push_back(declare({.group = "scheduling.k8s.io",
                           .version = "v1",
                           .plural = "priorityclasses",
                           .kind = "PriorityClass",
                           .namespaced = false,
                           .short_names = {"pc"}}));
  const std::string rbac = "rbac.authorization.k8s.io";
  types.push_back(
      declare({.group = rbac, .version = "v1", .plural = "clusterroles", .kind = "ClusterRole", .namespaced = false}));
  types.push_back(declare({.group = rbac,
                           .version = "v1",
                           .plural = "clusterrolebindings",
                           .kind = "ClusterRoleBinding",
                           .namespaced = false}));
  types.push_back(declare({.group = rbac, .version = "v1", .plural = "roles", .kind = "Role"}));
  types.push_back(declare({.group = rbac, .version = "v1", .plural = "rolebindings", .kind = "RoleBinding"}));
  types.push_back(declare({.group = "apiextensions.k8s.io",
                           .version = "v1",
                           .plural = "customresourcedefinitions",
                           .kind = "CustomResourceDefinition",
                           .namespaced = false,
                           .short_names = {"crd", "crds"},
                           .categories = {"api-extensions"},
                           .status = true}));
  return types;
}

}  // namespace

ResourceRegistry::ResourceRegistry() : types_(builtin_resources()) {}

std::optional<ResourceType> ResourceRegistry::find(const std::string& group, const std::string& version,
                                                   const std::string& plural) const {
  std::shared_lock lock(mutex_);
  for (const ResourceType& type : types_) {
    if (type.group == group && type.version == version && type.plural == plural) return type;
  }
  return std::nullopt;
}

std::optional<ResourceType> ResourceRegistry::find_by_storage_key(const std::string& storage_key) const {
  std::shared_lock lock(mutex_);
  for (const ResourceType& type : types_) {
    if (type.storage_key() == storage_key) return type;
  }
  return std::nullopt;
}

std::vector<ResourceType> ResourceRegistry::all() const {
  std::shared_lock lock(mutex_);
  return types_;
}

std::vector<std::string> ResourceRegistry::group_versions() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> result;
  for (const ResourceType& type : types_) {
    const std::string group_version = type.api_version();
    if (std::find(result.begin(), result.end(), group_version) == result.end()) result.push_back(group_version);
  }
  return result;
}

void ResourceRegistry::register_custom(const std::string& crd_name, std::vector<ResourceType> types) {
  std::unique_lock lock(mutex_);
  std::erase_if(types_, [&](const ResourceType& type) { return type.crd_name == crd_name; });
  for (ResourceType& type : types) {
    type.crd_name = crd_name;
    types_.push_back(std::move(type));
  }
}

void ResourceRegistry::unregister_custom(const std::string& crd_name) {
  std::unique_lock lock(mutex_);
  std::erase_if(types_, [&](const ResourceType& type) { return type.crd_name == crd_name; });
}

}  // namespace tessera::apiserver
