#include "adapter/owner_conditions.h"

#include <fmt/format.h>

#include "adapter/status_reports.h"

namespace tessera::adapter {

using nlohmann::json;

namespace {

struct OwnerKind {
  std::string_view kind;
  std::string_view plural;
  std::map<std::string, kube::ObjectPtr> OwnerObjects::*cache;
};

constexpr OwnerKind kOwnerKinds[] = {{"Job", "jobs", &OwnerObjects::jobs},
                                     {"JobSet", "jobsets", &OwnerObjects::jobsets},
                                     {"PyTorchJob", "pytorchjobs", &OwnerObjects::pytorchjobs},
                                     {"TrainJob", "trainjobs", &OwnerObjects::trainjobs},
                                     {"RayCluster", "rayclusters", &OwnerObjects::rayclusters}};

const OwnerKind* owner_kind(std::string_view kind) {
  for (const OwnerKind& known : kOwnerKinds) {
    if (known.kind == kind) return &known;
  }
  return nullptr;
}

}  // namespace

std::string owner_status_path(const ObjectRef& owner) {
  const OwnerKind* kind = owner_kind(owner.kind);
  if (!kind || owner.api_version.empty()) return "";
  // A core-group kind would be under /api; every kind here has a group.
  return fmt::format("/apis/{}/namespaces/{}/{}/{}/status", owner.api_version, owner.namespace_name, kind->plural,
                     owner.name);
}

kube::ObjectPtr cached_owner(const OwnerObjects& owners, const ObjectRef& owner) {
  const OwnerKind* kind = owner_kind(owner.kind);
  if (!kind) return nullptr;
  const auto& cache = owners.*(kind->cache);
  auto it = cache.find(owner.namespace_name + "/" + owner.name);
  return it == cache.end() ? nullptr : it->second;
}

std::optional<json> owner_condition_patch(const json& owner, const OwnerCondition& wanted, bool refresh_due,
                                          double now) {
  const std::string status = wanted.scheduled ? "True" : "False";
  json condition = {{"type", std::string(kOwnerConditionType)},
                    {"status", status},
                    {"reason", wanted.reason},
                    {"message", wanted.message},
                    {"lastTransitionTime", condition_transition_time(owner, kOwnerConditionType, status, now)}};
  if (auto generation = owner.value("/metadata/generation"_json_pointer, json()); generation.is_number_integer()) {
    condition["observedGeneration"] = generation;
  }
  // An add only to the object as cached: over a list its controller wrote meanwhile it would
  // replace the list, and a second add from a cache that does not show the first yet would add
  // the entry twice.
  const json unchanged = {{"op", "test"},
                          {"path", "/metadata/resourceVersion"},
                          {"value", owner.value("/metadata/resourceVersion"_json_pointer, std::string())}};
  const json conditions = owner.value("/status/conditions"_json_pointer, json());
  if (!conditions.is_array()) {
    // No list yet: make it (and the status, where there is none).
    if (owner.value("status", json()).is_object()) {
      return json::array(
          {unchanged, {{"op", "add"}, {"path", "/status/conditions"}, {"value", json::array({condition})}}});
    }
    return json::array(
        {unchanged, {{"op", "add"}, {"path", "/status"}, {"value", {{"conditions", json::array({condition})}}}}});
  }
  for (size_t index = 0; index < conditions.size(); ++index) {
    const json& current = conditions[index];
    if (!current.is_object() || current.value("type", "") != kOwnerConditionType) continue;
    const bool same_state = current.value("status", "") == status && current.value("reason", "") == wanted.reason;
    if (same_state && (current.value("message", "") == wanted.message || !refresh_due)) return std::nullopt;
    const std::string path = fmt::format("/status/conditions/{}", index);
    // The test fails the patch if the list changed meanwhile (the entry moved): tried again next cycle.
    return json::array({{{"op", "test"}, {"path", path + "/type"}, {"value", std::string(kOwnerConditionType)}},
                        {{"op", "replace"}, {"path", path}, {"value", condition}}});
  }
  return json::array({unchanged, {{"op", "add"}, {"path", "/status/conditions/-"}, {"value", condition}}});
}

}  // namespace tessera::adapter
