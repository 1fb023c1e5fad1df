// The pod subresources a scheduler uses: binding (place a pod on a node, once) and eviction
// (delete a pod unless a PodDisruptionBudget forbids it). Both answer as the real server does:
// 201 with a Success Status; 409 for a pod already bound; 429 for a budget with no disruption left.
#include <fmt/format.h>

#include "apiserver/disruption_budgets.h"
#include "apiserver/resource_api.h"
#include "wire/timestamp.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

const ResourceName kPodBinding{"pods/binding", ""};

}  // namespace

ApiResult<Ok> ResourceApi::bind(const std::string& namespace_name, const std::string& pod_name, const json& binding) {
  if (!binding.is_object()) return bad_request("the object provided is unrecognized (must be of type Binding)");
  const std::string kind = binding.value("kind", "Binding");
  if (kind != "Binding") {
    return bad_request(fmt::format("the kind in the data ({}) does not match the expected kind (Binding)", kind));
  }
  const json metadata = binding.value("metadata", json::object());
  if (metadata.value("name", "") != pod_name) return bad_request("name in URL does not match name in Binding object");
  const json target = binding.value("target", json::object());
  const std::string node = target.value("name", "");
  std::vector<StatusCause> causes;
  if (target.value("kind", "") != "" && target.value("kind", "") != "Node") {
    causes.push_back({"FieldValueNotSupported", "Unsupported value: must be empty or 'Node'", "target.kind"});
  }
  if (node.empty()) causes.push_back({"FieldValueRequired", "Required value", "target.name"});
  if (!causes.empty()) return invalid("Binding", "", pod_name, std::move(causes));
  const std::string precondition_uid = metadata.value("uid", "");

  const std::optional<ResourceType> pods = registry_.find("", "v1", "pods");
  ApiResult<ObjectPtr> bound = store_.mutate(
      pods->storage_key(), namespace_name, pod_name, [&](const ObjectPtr& current, uint64_t) -> ApiResult<Change> {
        if (!current) return not_found(pods->resource_name(), pod_name);
        json pod = *current;
        if (!precondition_uid.empty() && precondition_uid != pod["metadata"].value("uid", "")) {
          return conflict(kPodBinding, pod_name,
                          fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: {}",
                                      precondition_uid, pod["metadata"].value("uid", "")));
        }
        if (pod["metadata"].contains("deletionTimestamp")) {
          return conflict(kPodBinding, pod_name,
                          fmt::format("pod {} is being deleted, cannot be assigned to a host", pod_name));
        }
        const std::string assigned = pod.value("spec", json::object()).value("nodeName", "");
        if (!assigned.empty()) {
          return conflict(kPodBinding, pod_name,
                          fmt::format("pod {} is already assigned to node \"{}\"", pod_name, assigned));
        }
        pod["spec"]["nodeName"] = node;
        if (metadata.contains("annotations") && metadata["annotations"].is_object()) {
          for (const auto& [key, value] : metadata["annotations"].items()) pod["metadata"]["annotations"][key] = value;
        }
        // PodScheduled=True, updating the condition in place when there is one.
        json& conditions = pod["status"]["conditions"];
        if (!conditions.is_array()) conditions = json::array();
        const std::string now = wire::format_time(wire::WallClock::now());
        auto scheduled = std::find_if(conditions.begin(), conditions.end(), [](const json& condition) {
          return condition.value("type", "") == "PodScheduled";
        });
        if (scheduled == conditions.end()) {
          conditions.push_back(
              {{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", now}});
        } else {
          if ((*scheduled).value("status", "") != "True") (*scheduled)["lastTransitionTime"] = now;
          (*scheduled)["status"] = "True";
          scheduled->erase("reason");
          scheduled->erase("message");
        }
        return Change::put(std::move(pod));
      });
  if (!bound) return bound.error();
  return Ok{};
}

ApiResult<ObjectPtr> ResourceApi::delete_pod_for_eviction(const ResourceType& pods, const std::string& namespace_name,
                                                          const std::string& name, const json& eviction) {
  DeleteOptions options;
  const json delete_options = eviction.value("deleteOptions", json::object());
  if (delete_options.contains("gracePeriodSeconds") && delete_options["gracePeriodSeconds"].is_number_integer()) {
    options.grace_period_seconds = delete_options["gracePeriodSeconds"].get<int64_t>();
  }
  const json preconditions = delete_options.value("preconditions", json::object());
  options.precondition_uid = preconditions.value("uid", "");
  options.precondition_resource_version = preconditions.value("resourceVersion", "");
  options.dry_run = delete_options.contains("dryRun") && !delete_options["dryRun"].empty();
  ApiResult<DeleteOutcome> outcome = remove(pods, namespace_name, name, options);
  if (!outcome) return outcome.error();
  return outcome->object;
}

ApiResult<Ok> ResourceApi::evict(const std::string& namespace_name, const std::string& pod_name, const json& eviction) {
  if (!eviction.is_object()) return bad_request("the object provided is unrecognized (must be of type Eviction)");
  const std::string api_version = eviction.value("apiVersion", "policy/v1");
  if (eviction.value("kind", "Eviction") != "Eviction" ||
      (api_version != "policy/v1" && api_version != "policy/v1beta1")) {
    return bad_request(fmt::format("the object provided is unrecognized (must be of type Eviction): {} {}", api_version,
                                   eviction.value("kind", "")));
  }
  if (eviction.value("metadata", json::object()).value("name", "") != pod_name) {
    return bad_request("name in URL does not match name in Eviction object");
  }
  const std::optional<ResourceType> pods = registry_.find("", "v1", "pods");
  std::lock_guard lock(eviction_mutex_);
  ObjectPtr pod = store_.get(pods->storage_key(), namespace_name, pod_name);
  if (!pod) return not_found(pods->resource_name(), pod_name);

  // Pods that are not running, or already going, are not protected by budgets.
  const std::string phase = pod->value("status", json::object()).value("phase", "");
  const bool ignores_budgets = phase == "Succeeded" || phase == "Failed" || phase == "Pending" ||
                               (*pod)["metadata"].contains("deletionTimestamp");
  if (!ignores_budgets) {
    const std::string budget_key = "poddisruptionbudgets.policy";
    ApiResult<ObjectList> budgets = store_.list(budget_key, namespace_name);
    std::vector<ObjectPtr> matching;
    for (const ObjectPtr& budget : budgets->items) {
      if (budget_selects(*budget, *pod)) matching.push_back(budget);
    }
    if (matching.size() > 1) {
      return internal_error(
          "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.");
    }
    if (matching.size() == 1) {
      const json& budget = *matching.front();
      ApiResult<ObjectList> namespace_pods = store_.list(pods->storage_key(), namespace_name);
      ApiResult<DisruptionStatus> status = disruption_status(budget, namespace_pods->items);
      if (!status) return status.error();
      const std::string budget_name = meta_string(budget, "name");
      const bool healthy = pod_is_healthy(*pod);
      const bool always_allow =
          budget.value("spec", json::object()).value("unhealthyPodEvictionPolicy", "") == "AlwaysAllow";
      // An unhealthy pod may go when the application is not disrupted already (IfHealthyBudget).
      const bool allowed = healthy ? status->disruptions_allowed > 0
                                   : (always_allow || status->current_healthy >= status->desired_healthy);
      if (!allowed) {
        return too_many_requests(
            "Cannot evict pod as it would violate the pod's disruption budget.",
            {StatusCause{"DisruptionBudget",
                         fmt::format("The disruption budget {} needs {} healthy pods and has {} currently", budget_name,
                                     status->desired_healthy, status->current_healthy),
                         ""}});
      }
      ApiResult<ObjectPtr> deleted = delete_pod_for_eviction(*pods, namespace_name, pod_name, eviction);
      if (!deleted) return deleted.error();
      // Record what the disruption controller would: the budget as now spent.
      if (healthy) {
        --status->current_healthy;
        status->disruptions_allowed = std::max<int64_t>(0, status->current_healthy - status->desired_healthy);
      }
      (void)store_.mutate(
          budget_key, namespace_name, budget_name, [&](const ObjectPtr& current, uint64_t) -> ApiResult<Change> {
            if (!current) return Change::keep();
            json updated = *current;
            updated["status"] = budget_status_json(*status, (*current)["metadata"].value("generation", int64_t{1}));
            return Change::put(std::move(updated));
          });
      return Ok{};
    }
  }
  ApiResult<ObjectPtr> deleted = delete_pod_for_eviction(*pods, namespace_name, pod_name, eviction);
  if (!deleted) return deleted.error();
  return Ok{};
}

}  // namespace tessera::apiserver
