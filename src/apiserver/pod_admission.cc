#include "apiserver/pod_admission.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "apiserver/object_meta.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

void default_value(json& object, const char* key, json value) {
  if (!object.contains(key) || object[key].is_null()) object[key] = std::move(value);
}

std::string image_pull_policy(const std::string& image) {
  // :latest or no tag pulls always; a tag or a digest pulls if not present.
  const size_t slash = image.rfind('/');
  const std::string last = slash == std::string::npos ? image : image.substr(slash + 1);
  if (image.find('@') != std::string::npos) return "IfNotPresent";
  const size_t colon = last.rfind(':');
  if (colon == std::string::npos || last.substr(colon + 1) == "latest") return "Always";
  return "IfNotPresent";
}

// Quantities travel as strings: a number given for one ({"nvidia.com/gpu": 1}) is stored as the
// string the real server would serialise ("1", "500m").
void canonical_quantities(json& list) {
  if (!list.is_object()) return;
  for (auto& [name, value] : list.items()) {
    if (value.is_number_integer()) {
      value = value.dump();
    } else if (value.is_number_float()) {
      const double number = value.get<double>();
      value = number == std::floor(number) ? fmt::format("{}", static_cast<int64_t>(number))
                                           : fmt::format("{}m", static_cast<int64_t>(std::llround(number * 1000)));
    }
  }
}

void default_containers(json& containers) {
  if (!containers.is_array()) return;
  for (json& container : containers) {
    if (!container.is_object()) continue;
    if (container.contains("resources") && container["resources"].is_object()) {
      for (const char* part : {"requests", "limits"}) {
        if (container["resources"].contains(part)) canonical_quantities(container["resources"][part]);
      }
    }
    default_value(container, "imagePullPolicy", image_pull_policy(container.value("image", "")));
    default_value(container, "terminationMessagePath", "/dev/termination-log");
    default_value(container, "terminationMessagePolicy", "File");
    default_value(container, "resources", json::object());
    // Requests default to limits, as the API's defaulting does.
    json& resources = container["resources"];
    if (resources.is_object() && resources.contains("limits") && resources["limits"].is_object()) {
      for (const auto& [name, limit] : resources["limits"].items()) {
        if (!resources.contains("requests") || !resources["requests"].contains(name)) {
          resources["requests"][name] = limit;
        }
      }
    }
  }
}

void validate_containers(const json& containers, const std::string& path, std::vector<StatusCause>& causes,
                         bool required) {
  if (!containers.is_array() || containers.empty()) {
    if (required) causes.push_back({"FieldValueRequired", "Required value", path});
    return;
  }
  for (size_t i = 0; i < containers.size(); ++i) {
    const json& container = containers[i];
    const std::string at = fmt::format("{}[{}]", path, i);
    if (!container.is_object()) {
      causes.push_back({"FieldValueInvalid", "Invalid value: must be an object", at});
      continue;
    }
    if (!container.contains("name") || !container["name"].is_string() || container["name"].get<std::string>().empty()) {
      causes.push_back({"FieldValueRequired", "Required value", at + ".name"});
    }
    if (!container.contains("image") || !container["image"].is_string() ||
        container["image"].get<std::string>().empty()) {
      causes.push_back({"FieldValueRequired", "Required value", at + ".image"});
    }
  }
}

bool has_toleration(const json& tolerations, const std::string& key) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const json& toleration) { return toleration.value("key", "") == key; });
}

// A spec with the fields an update may change blanked out.
json frozen_spec(json spec) {
  if (!spec.is_object()) return spec;
  for (const char* list : {"containers", "initContainers"}) {
    if (spec.contains(list) && spec[list].is_array()) {
      for (json& container : spec[list]) {
        if (container.is_object()) container.erase("image");
      }
    }
  }
  spec.erase("activeDeadlineSeconds");
  spec.erase("terminationGracePeriodSeconds");
  spec.erase("tolerations");
  return spec;
}

}  // namespace

void default_pod_spec(json& spec) {
  if (!spec.is_object()) return;
  default_value(spec, "restartPolicy", "Always");
  default_value(spec, "terminationGracePeriodSeconds", 30);
  default_value(spec, "dnsPolicy", "ClusterFirst");
  default_value(spec, "schedulerName", "default-scheduler");
  default_value(spec, "securityContext", json::object());
  default_value(spec, "enableServiceLinks", true);
  default_value(spec, "preemptionPolicy", "PreemptLowerPriority");
  if (spec.contains("containers")) default_containers(spec["containers"]);
  if (spec.contains("initContainers")) default_containers(spec["initContainers"]);
}

std::string pod_qos_class(const json& spec) {
  bool any = false;
  bool guaranteed = true;
  for (const char* list : {"initContainers", "containers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (const json& container : spec[list]) {
      const json resources = container.value("resources", json::object());
      const json requests = resources.value("requests", json::object());
      const json limits = resources.value("limits", json::object());
      for (const char* name : {"cpu", "memory"}) {
        if (requests.contains(name) || limits.contains(name)) any = true;
        if (!limits.contains(name) || (requests.contains(name) && requests[name] != limits[name])) guaranteed = false;
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

namespace {

// The decoding errors the real server reports for fields of the wrong JSON type.
std::optional<ApiError> spec_shape_problem(const json& spec) {
  auto problem = [](const std::string& field, const json& value, const char* type) {
    return bad_request(
        fmt::format("json: cannot unmarshal {} into Go struct field {} of type {}", value.type_name(), field, type));
  };
  if (!spec.is_object()) return problem("Pod.spec", spec, "v1.PodSpec");
  for (const char* key : {"nodeName", "schedulerName", "priorityClassName", "serviceAccountName", "restartPolicy"}) {
    if (spec.contains(key) && !spec[key].is_string() && !spec[key].is_null())
      return problem(fmt::format("PodSpec.spec.{}", key), spec[key], "string");
  }
  for (const char* key : {"priority", "terminationGracePeriodSeconds"}) {
    if (spec.contains(key) && !spec[key].is_number_integer() && !spec[key].is_null()) {
      return problem(fmt::format("PodSpec.spec.{}", key), spec[key], "int64");
    }
  }
  for (const char* list : {"containers", "initContainers", "tolerations"}) {
    if (!spec.contains(list) || spec[list].is_null()) continue;
    if (!spec[list].is_array()) return problem(fmt::format("PodSpec.spec.{}", list), spec[list], "[]object");
    for (const json& item : spec[list]) {
      if (!item.is_object()) return problem(fmt::format("PodSpec.spec.{}", list), item, "object");
      if (item.contains("resources") && !item["resources"].is_object() && !item["resources"].is_null()) {
        return problem("Container.spec.containers.resources", item["resources"], "v1.ResourceRequirements");
      }
      for (const char* part : {"requests", "limits"}) {
        if (item.contains("resources") && item["resources"].is_object() && item["resources"].contains(part) &&
            !item["resources"][part].is_object()) {
          return problem(fmt::format("ResourceRequirements.spec.containers.resources.{}", part),
                         item["resources"][part], "v1.ResourceList");
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

ApiResult<json> admit_new_pod(json pod, const PriorityLookup& priority_of) {
  const std::string name = pod["metadata"].value("name", "");
  if (!pod.contains("spec") || pod["spec"].is_null()) pod["spec"] = json::object();
  if (std::optional<ApiError> problem = spec_shape_problem(pod["spec"])) return *problem;
  json& spec = pod["spec"];
  std::vector<StatusCause> causes;
  validate_containers(spec.value("containers", json()), "spec.containers", causes, true);
  validate_containers(spec.value("initContainers", json()), "spec.initContainers", causes, false);
  if (!causes.empty()) return invalid("Pod", "", name, std::move(causes));

  default_pod_spec(spec);

  // The DefaultTolerationSeconds admission plugin.
  if (!spec.contains("tolerations") || !spec["tolerations"].is_array()) spec["tolerations"] = json::array();
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    if (!has_toleration(spec["tolerations"], key)) {
      spec["tolerations"].push_back(
          {{"key", key}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}});
    }
  }

  // The Priority admission plugin: the priority comes from the PriorityClass, never from the pod.
  const std::string class_name = spec.value("priorityClassName", "");
  std::optional<int64_t> priority = priority_of(class_name);
  if (!class_name.empty() && !priority) {
    return forbidden({"pods", ""}, name, fmt::format("no PriorityClass with name {} was found", class_name));
  }
  const int64_t computed = priority.value_or(0);
  if (spec.contains("priority") && spec["priority"].is_number_integer() &&
      spec["priority"].get<int64_t>() != computed) {
    return forbidden({"pods", ""}, name,
                     fmt::format("the integer value of priority ({}) must not be provided in pod spec; priority "
                                 "admission controller computed {} from the given PriorityClass name",
                                 spec["priority"].get<int64_t>(), computed));
  }
  spec["priority"] = computed;

  pod["status"] = {{"phase", "Pending"}, {"qosClass", pod_qos_class(spec)}};
  return pod;
}

std::optional<ApiError> check_pod_spec_update(const json& current, const json& updated) {
  const json before = current.value("spec", json::object());
  const json after = updated.value("spec", json::object());
  if (frozen_spec(before) == frozen_spec(after)) {
    // Tolerations may only be added to.
    const json old_tolerations = before.value("tolerations", json::array());
    const json new_tolerations = after.value("tolerations", json::array());
    const bool kept = std::all_of(old_tolerations.begin(), old_tolerations.end(), [&](const json& toleration) {
      return std::find(new_tolerations.begin(), new_tolerations.end(), toleration) != new_tolerations.end();
    });
    if (kept) return std::nullopt;
  }
  return invalid("Pod", "", meta_string(updated, "name"),
                 {{"FieldValueForbidden",
                   "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, "
                   "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions "
                   "to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
                   "was previously negative)",
                   "spec"}});
}

}  // namespace tessera::apiserver
