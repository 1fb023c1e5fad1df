// The REST semantics of the API, independent of HTTP: get, list (selectors, pagination,
// resourceVersion semantics), create, update and patch (optimistic concurrency, the status
// subresource, generation), delete (graceful for running pods, finalizers, namespace and CRD
// cascades), and the pod subresources binding and eviction. Each kind's defaulting and
// validation happens here, before objects reach the store.
#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/object_meta.h"
#include "apiserver/object_store.h"
#include "apiserver/patches.h"
#include "apiserver/resource_registry.h"
#include "core/result.h"

namespace tessera::apiserver {

struct ApiBehaviour {
  // Pods bound to a node are deleted gracefully: marked with a deletionTimestamp and left for a
  // kubelet (the dev cluster's simulated one) to remove. Without one, they are removed at once.
  bool graceful_pod_deletion = false;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;
  std::string continue_token;
  std::string resource_version;
  std::string resource_version_match;
};

struct ListPage {
  std::vector<ObjectPtr> items;
  uint64_t revision = 0;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count = std::nullopt;
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds = std::nullopt;
  std::string precondition_uid;
  std::string precondition_resource_version;
  bool dry_run = false;
};

struct DeleteOutcome {
  ObjectPtr object;
  bool removed = false;  // false: marked for deletion (graceful, or waiting on finalizers)
};

class ResourceApi {
 public:
  ResourceApi(ObjectStore& store, ResourceRegistry& registry, ApiBehaviour behaviour);

  ApiResult<ObjectPtr> get(const ResourceType& type, const std::string& namespace_name, const std::string& name);
  ApiResult<ListPage> list(const ResourceType& type, const std::string& namespace_name, const ListOptions& options);
  ApiResult<ObjectPtr> create(const ResourceType& type, const std::string& namespace_name, nlohmann::json body,
                              bool dry_run = false);
  // PUT: a whole object; 409 when its metadata.resourceVersion is given and stale.
  ApiResult<ObjectPtr> update(const ResourceType& type, const std::string& namespace_name, const std::string& name,
                              nlohmann::json body, bool status_subresource, bool dry_run = false);
  ApiResult<ObjectPtr> patch(const ResourceType& type, const std::string& namespace_name, const std::string& name,
                             PatchType patch_type, std::string_view body, bool status_subresource,
                             bool dry_run = false);
  // Read-modify-write through the same checks as update: `edit` gets the current object and
  // returns the new one. What the server's own simulated controllers use.
  using Edit = std::function<ApiResult<nlohmann::json>(const nlohmann::json& current)>;
  ApiResult<ObjectPtr> update_with(const ResourceType& type, const std::string& namespace_name, const std::string& name,
                                   const Edit& edit, bool status_subresource, bool dry_run = false);
  ApiResult<DeleteOutcome> remove(const ResourceType& type, const std::string& namespace_name, const std::string& name,
                                  const DeleteOptions& options);
  ApiResult<std::vector<ObjectPtr>> remove_collection(const ResourceType& type, const std::string& namespace_name,
                                                      const ListOptions& selection, const DeleteOptions& options);

  // POST pods/NAME/binding (or the bindings collection): sets spec.nodeName once.
  ApiResult<Ok> bind(const std::string& namespace_name, const std::string& pod_name, const nlohmann::json& binding);
  // POST pods/NAME/eviction: deletes the pod unless a PodDisruptionBudget forbids it (429).
  ApiResult<Ok> evict(const std::string& namespace_name, const std::string& pod_name, const nlohmann::json& eviction);

  // The namespaces and PriorityClasses a fresh cluster has.
  void install_defaults(const std::vector<std::string>& namespaces);

  // The object as `type`'s version serves it: custom resources are stored once and may be served
  // at several versions (no conversion: only apiVersion differs).
  static ObjectPtr as_served(const ResourceType& type, const ObjectPtr& object);

  ObjectStore& store() { return store_; }
  ResourceRegistry& registry() { return registry_; }
  const ApiBehaviour& behaviour() const { return behaviour_; }

 private:
  ApiResult<nlohmann::json> prepare_new(const ResourceType& type, const std::string& namespace_name,
                                        nlohmann::json body);
  ApiResult<nlohmann::json> admit(const ResourceType& type, nlohmann::json object);
  ApiResult<nlohmann::json> finish_update(const ResourceType& type, const nlohmann::json& current,
                                          nlohmann::json updated, bool status_subresource);
  ApiResult<ObjectPtr> create_object(const ResourceType& type, const std::string& namespace_name,
                                     const std::string& name, nlohmann::json object, bool dry_run);
  void after_write(const ResourceType& type, const ObjectPtr& object, bool removed);
  void remove_namespace_contents(const std::string& namespace_name);
  void finish_namespace_if_empty(const std::string& namespace_name);
  void remove_custom_resources(const std::string& crd_name);
  std::optional<int64_t> priority_class_value(const std::string& name) const;
  ApiResult<ObjectPtr> delete_pod_for_eviction(const ResourceType& pods, const std::string& namespace_name,
                                               const std::string& name, const nlohmann::json& eviction);

  ObjectStore& store_;
  ResourceRegistry& registry_;
  const ApiBehaviour behaviour_;
  IdSource ids_;
  std::mutex eviction_mutex_;  // evictions of one budget must not both pass on the same count
};

}  // namespace tessera::apiserver
