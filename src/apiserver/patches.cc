#include "apiserver/patches.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace tessera::apiserver {

namespace {

using nlohmann::json;

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";
constexpr std::string_view kRetainKeys = "$retainKeys";

// The merge key of a list field, by the field's name; empty: the list is replaced.
std::string merge_key_for(std::string_view field, const json& items) {
  if (field == "containers" || field == "initContainers" || field == "ephemeralContainers" || field == "volumes" ||
      field == "env" || field == "imagePullSecrets") {
    return "name";
  }
  if (field == "volumeMounts") return "mountPath";
  if (field == "volumeDevices") return "devicePath";
  if (field == "conditions") return "type";
  if (field == "ownerReferences") return "uid";
  if (field == "hostAliases" || field == "podIPs") return "ip";
  if (field == "topologySpreadConstraints") return "topologyKey";
  if (field == "ports") {
    // Container ports merge by containerPort, service ports by port.
    for (const json& item : items) {
      if (item.is_object() && item.contains("containerPort")) return "containerPort";
    }
    return "port";
  }
  return "";
}

bool merges_as_set(std::string_view field) { return field == "finalizers"; }

bool is_directive(const std::string& key) { return !key.empty() && key.front() == '$'; }

// A patch value with its directives removed, for where it is stored as is.
json without_directives(const json& value) {
  if (value.is_object()) {
    json result = json::object();
    for (const auto& [key, item] : value.items()) {
      if (!is_directive(key)) result[key] = without_directives(item);
    }
    return result;
  }
  if (value.is_array()) {
    json result = json::array();
    for (const json& item : value) {
      if (item.is_object() && item.value(std::string(kPatchDirective), "") == "delete") continue;
      if (item.is_object() && item.size() == 1 && item.contains(std::string(kPatchDirective))) continue;
      result.push_back(without_directives(item));
    }
    return result;
  }
  return value;
}

json merge_object(const json& original, const json& patch);

json merge_keyed_list(const json& original, const json& patch, const std::string& key) {
  for (const json& item : patch) {
    if (item.is_object() && item.value(std::string(kPatchDirective), "") == "replace") return without_directives(patch);
  }
  json result = original;
  for (const json& item : patch) {
    if (!item.is_object() || !item.contains(key)) {
      result.push_back(without_directives(item));
      continue;
    }
    auto same = std::find_if(result.begin(), result.end(), [&](const json& existing) {
      return existing.is_object() && existing.value(key, json()) == item[key];
    });
    if (item.value(std::string(kPatchDirective), "") == "delete") {
      if (same != result.end()) result.erase(same);
    } else if (same != result.end()) {
      *same = merge_object(*same, item);
    } else {
      result.push_back(without_directives(item));
    }
  }
  return result;
}

json merge_set_list(const json& original, const json& patch) {
  json result = original;
  for (const json& item : patch) {
    if (std::find(result.begin(), result.end(), item) == result.end()) result.push_back(item);
  }
  return result;
}

// Orders `list` as `order` names its items (by merge key, or by value for primitives); items the
// order does not name keep their relative order after those it names.
json apply_element_order(const json& list, const json& order, const std::string& key) {
  if (!list.is_array() || !order.is_array()) return list;
  json ordered = json::array();
  std::vector<bool> taken(list.size(), false);
  for (const json& wanted : order) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (taken[i]) continue;
      const bool same = key.empty() ? list[i] == wanted
                                    : (list[i].is_object() && wanted.is_object() &&
                                       list[i].value(key, json()) == wanted.value(key, json()));
      if (same) {
        ordered.push_back(list[i]);
        taken[i] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!taken[i]) ordered.push_back(list[i]);
  }
  return ordered;
}

json merge_object(const json& original, const json& patch) {
  if (!patch.is_object()) return patch;
  const std::string directive = patch.value(std::string(kPatchDirective), "");
  if (directive == "replace") return without_directives(patch);
  json result = original.is_object() ? original : json::object();
  for (const auto& [key, value] : patch.items()) {
    if (is_directive(key)) continue;
    if (value.is_null()) {
      result.erase(key);
    } else if (value.is_object()) {
      if (value.value(std::string(kPatchDirective), "") == "delete") {
        result.erase(key);
      } else {
        result[key] = merge_object(result.contains(key) ? result[key] : json::object(), value);
      }
    } else if (value.is_array()) {
      const json existing = result.contains(key) ? result[key] : json::array();
      const std::string merge_key = merge_key_for(key, value);
      if (!merge_key.empty() && existing.is_array()) {
        result[key] = merge_keyed_list(existing, value, merge_key);
      } else if (merges_as_set(key) && existing.is_array()) {
        result[key] = merge_set_list(existing, value);
      } else {
        result[key] = without_directives(value);
      }
    } else {
      result[key] = value;
    }
  }
  for (const auto& [key, value] : patch.items()) {
    if (key.starts_with(kDeleteFromPrimitiveList)) {
      const std::string field = key.substr(kDeleteFromPrimitiveList.size());
      if (result.contains(field) && result[field].is_array() && value.is_array()) {
        json kept = json::array();
        for (const json& item : result[field]) {
          if (std::find(value.begin(), value.end(), item) == value.end()) kept.push_back(item);
        }
        result[field] = std::move(kept);
      }
    } else if (key.starts_with(kSetElementOrder)) {
      const std::string field = key.substr(kSetElementOrder.size());
      if (result.contains(field)) {
        const std::string merge_key = merge_key_for(field, value);
        result[field] = apply_element_order(result[field], value, merge_key);
      }
    } else if (key == kRetainKeys && value.is_array()) {
      for (auto it = result.begin(); it != result.end();) {
        if (std::find(value.begin(), value.end(), it.key()) == value.end()) {
          it = result.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  return result;
}

}  // namespace

std::optional<PatchType> patch_type_for(std::string_view content_type) {
  const size_t parameters = content_type.find(';');
  if (parameters != std::string_view::npos) content_type = content_type.substr(0, parameters);
  while (!content_type.empty() && content_type.back() == ' ') content_type.remove_suffix(1);
  if (content_type == "application/merge-patch+json") return PatchType::kMerge;
  if (content_type == "application/json-patch+json") return PatchType::kJson;
  if (content_type == "application/strategic-merge-patch+json") return PatchType::kStrategicMerge;
  return std::nullopt;
}

json strategic_merge(const json& original, const json& patch) { return merge_object(original, patch); }

ApiResult<json> apply_patch(const json& original, PatchType type, std::string_view body) {
  json patch = json::parse(body, nullptr, false);
  if (patch.is_discarded()) return bad_request("error decoding patch: invalid JSON");
  switch (type) {
    case PatchType::kMerge: {
      if (!patch.is_object()) return bad_request("error decoding patch: a merge patch must be a JSON object");
      json result = original;
      result.merge_patch(patch);
      return result;
    }
    case PatchType::kStrategicMerge:
      if (!patch.is_object()) {
        return bad_request("error decoding patch: a strategic merge patch must be a JSON object");
      }
      return strategic_merge(original, patch);
    case PatchType::kJson: {
      if (!patch.is_array()) {
        return bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch (a JSON patch is an array of "
            "operations)");
      }
      try {
        return original.patch(patch);
      } catch (const json::exception& error) {
        ApiError failure = invalid("", "", "", {StatusCause{"FieldValueInvalid", error.what(), "patch"}});
        failure.message =
            fmt::format("the server rejected our request due to an error in our request: {}", error.what());
        return failure;
      }
    }
  }
  return bad_request("unknown patch type");
}

}  // namespace tessera::apiserver
