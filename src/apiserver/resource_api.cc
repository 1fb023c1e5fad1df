#include "apiserver/resource_api.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "apiserver/continue_token.h"
#include "apiserver/crd_registration.h"
#include "apiserver/custom_resource_schema.h"
#include "apiserver/metadata_validation.h"
#include "apiserver/pod_admission.h"
#include "apiserver/selectors.h"
#include "wire/timestamp.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

std::string now_text() { return wire::format_time(wire::WallClock::now()); }

bool is_core(const ResourceType& type, const char* plural) { return type.group.empty() && type.plural == plural; }
bool is_crd(const ResourceType& type) {
  return type.group == "apiextensions.k8s.io" && type.plural == "customresourcedefinitions";
}

// What generation tracks: everything but metadata and status.
json generation_content(const json& object) {
  json content = object;
  content.erase("metadata");
  content.erase("status");
  content.erase("apiVersion");
  content.erase("kind");
  return content;
}

std::optional<uint64_t> parse_revision(const std::string& text) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

ApiError too_large_revision(uint64_t asked, uint64_t current) {
  ApiError error = server_timeout(fmt::format("Too large resource version: {}, current: {}", asked, current));
  error.causes.push_back(StatusCause{"ResourceVersionTooLarge", "Too large resource version", ""});
  error.retry_after_seconds = 1;
  return error;
}

constexpr const char* kContinueExpired =
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.";

const std::set<std::string> kUndeletableNamespaces = {"default", "kube-system", "kube-public"};

bool pod_is_terminal(const json& pod) {
  const std::string phase = pod.value("status", json::object()).value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

ResourceApi::ResourceApi(ObjectStore& store, ResourceRegistry& registry, ApiBehaviour behaviour)
    : store_(store), registry_(registry), behaviour_(behaviour) {}

ObjectPtr ResourceApi::as_served(const ResourceType& type, const ObjectPtr& object) {
  if (!object || object->value("apiVersion", "") == type.api_version()) return object;
  auto copy = std::make_shared<json>(*object);
  (*copy)["apiVersion"] = type.api_version();
  return copy;
}

ApiResult<ObjectPtr> ResourceApi::get(const ResourceType& type, const std::string& namespace_name,
                                      const std::string& name) {
  ObjectPtr object = store_.get(type.storage_key(), type.namespaced ? namespace_name : "", name);
  if (!object) return not_found(type.resource_name(), name);
  return as_served(type, object);
}

ApiResult<ListPage> ResourceApi::list(const ResourceType& type, const std::string& namespace_name,
                                      const ListOptions& options) {
  ApiResult<LabelSelector> labels = LabelSelector::parse(options.label_selector);
  if (!labels) return labels.error();
  ApiResult<FieldSelector> fields = FieldSelector::parse(options.field_selector, type);
  if (!fields) return fields.error();
  if (options.limit < 0) return bad_request("limit: Invalid value: must be non-negative");

  uint64_t at = 0;
  std::optional<ContinuePoint> start;
  const uint64_t current = store_.revision();
  if (!options.continue_token.empty()) {
    if (!options.resource_version.empty() && options.resource_version != "0") {
      return bad_request("specifying resource version is not allowed when using continue");
    }
    start = decode_continue_token(options.continue_token);
    if (!start) return bad_request("continue key is not valid: the token could not be decoded");
    at = start->revision;
  } else {
    const std::string& match = options.resource_version_match;
    std::optional<uint64_t> asked;
    if (!options.resource_version.empty()) {
      asked = parse_revision(options.resource_version);
      if (!asked) return bad_request(fmt::format("invalid resource version: \"{}\"", options.resource_version));
    }
    if (!match.empty() && !asked) {
      return bad_request(
          "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
    }
    if (!match.empty() && match != "Exact" && match != "NotOlderThan") {
      return bad_request(
          fmt::format("resourceVersionMatch: Unsupported value: \"{}\": supported values: \"Exact\", "
                      "\"NotOlderThan\", \"\"",
                      match));
    }
    if (match == "Exact" && asked == uint64_t{0}) {
      return bad_request(
          "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
    }
    if (asked && *asked > current) return too_large_revision(*asked, current);
    if (match == "Exact") at = *asked;
  }

  ApiResult<ObjectList> snapshot = store_.list(type.storage_key(), type.namespaced ? namespace_name : "", at);
  if (!snapshot) {
    // The messages of the real server, whose storage answers a compacted revision so.
    if (start) return expired(kContinueExpired);
    return expired("The resourceVersion for the provided list is too old.");
  }
  ListPage page;
  page.revision = snapshot->revision;
  const auto key_of = [](const json& object) {
    return std::pair{meta_string(object, "namespace"), meta_string(object, "name")};
  };
  size_t index = 0;
  if (start) {
    const std::pair<std::string, std::string> after{start->namespace_name, start->name};
    while (index < snapshot->items.size() && key_of(*snapshot->items[index]) <= after) ++index;
  }
  const bool filtered = !labels->empty() || !fields->empty();
  for (; index < snapshot->items.size(); ++index) {
    if (options.limit > 0 && static_cast<int64_t>(page.items.size()) >= options.limit) break;
    const ObjectPtr& object = snapshot->items[index];
    const json empty = json::object();
    const json& metadata = object->contains("metadata") ? (*object)["metadata"] : empty;
    if (!labels->matches(metadata.value("labels", json::object())) || !fields->matches(*object)) continue;
    page.items.push_back(as_served(type, object));
  }
  if (index < snapshot->items.size() && !page.items.empty()) {
    const auto [last_namespace, last_name] = key_of(*page.items.back());
    page.continue_token = encode_continue_token(ContinuePoint{page.revision, last_namespace, last_name});
    if (!filtered) page.remaining_item_count = static_cast<int64_t>(snapshot->items.size() - index);
  }
  return page;
}

ApiResult<json> ResourceApi::prepare_new(const ResourceType& type, const std::string& namespace_name, json body) {
  if (!body.is_object()) {
    return bad_request(fmt::format(
        "the object provided is unrecognized (must be of type {}): the body is not a JSON object", type.kind));
  }
  for (const char* key : {"apiVersion", "kind"}) {
    if (body.contains(key) && !body[key].is_string()) {
      return bad_request(
          fmt::format("json: cannot unmarshal {} into Go struct field .{} of type string", body[key].type_name(), key));
    }
  }
  const std::string api_version = body.value("apiVersion", "");
  const std::string kind = body.value("kind", "");
  const std::string group =
      api_version.find('/') == std::string::npos ? "" : api_version.substr(0, api_version.find('/'));
  if (!api_version.empty() && (group != type.group || (!type.custom() && api_version != type.api_version()))) {
    return bad_request(fmt::format("the API version in the data ({}) does not match the expected API version ({})",
                                   api_version, type.api_version()));
  }
  if (!kind.empty() && kind != type.kind) {
    return bad_request(fmt::format("the kind in the data ({}) does not match the expected kind ({})", kind, type.kind));
  }
  body["apiVersion"] = type.api_version();
  body["kind"] = type.kind;
  if (!body.contains("metadata") || body["metadata"].is_null()) body["metadata"] = json::object();
  if (std::optional<std::string> problem = metadata_shape_problem(body["metadata"])) return bad_request(*problem);
  json& metadata = body["metadata"];
  drop_null_fields(metadata);
  if (type.namespaced) {
    const std::string given = metadata.value("namespace", "");
    if (!given.empty() && given != namespace_name) {
      return bad_request("the namespace of the provided object does not match the namespace sent on the request");
    }
    metadata["namespace"] = namespace_name;
  } else {
    metadata.erase("namespace");
  }
  std::string name = metadata.value("name", "");
  const std::string generate_name = metadata.value("generateName", "");
  if (name.empty() && !generate_name.empty()) {
    name = generate_name.substr(0, 58) + ids_.name_suffix();
    metadata["name"] = name;
  }
  if (name.empty()) {
    return invalid(type.kind, type.group, "",
                   {{"FieldValueRequired", "Required value: name or generateName is required", "metadata.name"}});
  }
  std::optional<std::string> name_problem = is_core(type, "namespaces") ? dns_label_problem(name)
                                            : type.custom()             ? path_segment_problem(name)
                                                                        : dns_subdomain_problem(name);
  if (name_problem) {
    return invalid(
        type.kind, type.group, name,
        {{"FieldValueInvalid", fmt::format("Invalid value: \"{}\": {}", name, *name_problem), "metadata.name"}});
  }
  if (std::vector<StatusCause> problems = label_and_annotation_problems(metadata); !problems.empty()) {
    return invalid(type.kind, type.group, name, std::move(problems));
  }
  if (!metadata.value("resourceVersion", "").empty()) {
    return bad_request("resourceVersion should not be set on objects to be created");
  }
  if (type.namespaced) {
    ObjectPtr owner = store_.get("namespaces", "", namespace_name);
    if (!owner) return not_found({"namespaces", ""}, namespace_name);
    if (owner->contains("metadata") && (*owner)["metadata"].contains("deletionTimestamp")) {
      return forbidden(
          type.resource_name(), name,
          fmt::format("unable to create new content in namespace {} because it is being terminated", namespace_name));
    }
  }
  metadata["uid"] = ids_.uid();
  metadata["creationTimestamp"] = now_text();
  metadata["generation"] = 1;
  for (const char* ignored : {"deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "resourceVersion"}) {
    metadata.erase(ignored);
  }
  return admit(type, std::move(body));
}

ApiResult<json> ResourceApi::admit(const ResourceType& type, json object) {
  const std::string name = object["metadata"].value("name", "");
  if (type.custom()) {
    if (type.has_status()) object.erase("status");
    return apply_structural_schema(type, std::move(object));
  }
  if (is_core(type, "pods")) {
    return admit_new_pod(std::move(object),
                         [this](const std::string& class_name) { return priority_class_value(class_name); });
  }
  if (is_core(type, "namespaces")) {
    object["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
    object["status"] = {{"phase", "Active"}};
    object.erase("spec");
    return object;
  }
  if (is_crd(type)) {
    ApiResult<std::vector<ResourceType>> types = custom_resource_types(object);
    if (!types) return types.error();
    return with_established_status(std::move(object), now_text());
  }
  if (type.group == "scheduling.k8s.io" && type.plural == "priorityclasses") {
    if (!object.contains("value") || !object["value"].is_number_integer()) {
      return invalid(type.kind, type.group, name, {{"FieldValueRequired", "Required value", "value"}});
    }
    if (object.value("globalDefault", false)) {
      const ApiResult<ObjectList> classes = store_.list(type.storage_key(), "");
      for (const ObjectPtr& other : classes->items) {
        if (other->value("globalDefault", false)) {
          return invalid(
              type.kind, type.group, name,
              {{"FieldValueForbidden",
                fmt::format("Forbidden: globalDefault is already set by PriorityClass {}", meta_string(*other, "name")),
                "globalDefault"}});
        }
      }
    }
  }
  return object;
}

ApiResult<ObjectPtr> ResourceApi::create_object(const ResourceType& type, const std::string& namespace_name,
                                                const std::string& name, json object, bool dry_run) {
  ApiResult<ObjectPtr> stored = store_.mutate(
      type.storage_key(), type.namespaced ? namespace_name : "", name,
      [&](const ObjectPtr& current, uint64_t) -> ApiResult<Change> {
        if (current) return already_exists(type.resource_name(), name);
        return Change::put(std::move(object));
      },
      dry_run);
  if (stored && !dry_run) after_write(type, *stored, false);
  return stored;
}

ApiResult<ObjectPtr> ResourceApi::create(const ResourceType& type, const std::string& namespace_name, json body,
                                         bool dry_run) {
  const bool generated = body.is_object() && body.contains("metadata") && body["metadata"].is_object() &&
                         body["metadata"].value("name", "").empty() &&
                         !body["metadata"].value("generateName", "").empty();
  for (int attempt = 0;; ++attempt) {
    ApiResult<json> prepared = prepare_new(type, namespace_name, body);
    if (!prepared) return prepared.error();
    const std::string name = (*prepared)["metadata"]["name"].get<std::string>();
    ApiResult<ObjectPtr> created = create_object(type, namespace_name, name, std::move(*prepared), dry_run);
    // A generated name that is taken: draw another, as clients of the real server would retry.
    if (!created && generated && created.error().reason == "AlreadyExists" && attempt < 8) continue;
    if (!created) return created.error();
    return as_served(type, *created);
  }
}

ApiResult<json> ResourceApi::finish_update(const ResourceType& type, const json& current, json updated,
                                           bool status_subresource) {
  if (!updated.is_object())
    return bad_request(fmt::format("the object provided is unrecognized (must be of type {})", type.kind));
  if (!updated.contains("metadata") || updated["metadata"].is_null()) updated["metadata"] = json::object();
  if (std::optional<std::string> problem = metadata_shape_problem(updated["metadata"])) return bad_request(*problem);
  drop_null_fields(updated["metadata"]);
  for (const char* key : {"apiVersion", "kind"}) {
    if (updated.contains(key) && !updated[key].is_string()) {
      return bad_request(fmt::format("json: cannot unmarshal {} into Go struct field .{} of type string",
                                     updated[key].type_name(), key));
    }
  }
  const json& old_meta = current["metadata"];
  json& metadata = updated["metadata"];
  const std::string name = old_meta.value("name", "");
  if (metadata.value("name", name) != name) {
    return bad_request(fmt::format("the name of the object ({}) does not match the name on the URL ({})",
                                   metadata.value("name", ""), name));
  }
  if (type.namespaced &&
      metadata.value("namespace", old_meta.value("namespace", "")) != old_meta.value("namespace", "")) {
    return bad_request("the namespace of the provided object does not match the namespace sent on the request");
  }
  const std::string given_version = metadata.value("resourceVersion", "");
  if (!given_version.empty() && given_version != old_meta.value("resourceVersion", "")) {
    return stale_version_conflict(type.resource_name(), name);
  }
  json result;
  if (status_subresource) {
    // The status endpoint changes nothing but status.
    result = current;
    if (updated.contains("status")) {
      result["status"] = updated["status"];
    } else {
      result.erase("status");
    }
  } else {
    result = std::move(updated);
    if (type.has_status()) {
      if (current.contains("status")) {
        result["status"] = current["status"];
      } else {
        result.erase("status");
      }
    }
    json& meta = result["metadata"];
    meta["name"] = name;
    if (type.namespaced) meta["namespace"] = old_meta.value("namespace", "");
    for (const char* kept : {"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"}) {
      if (old_meta.contains(kept)) {
        meta[kept] = old_meta[kept];
      } else {
        meta.erase(kept);
      }
    }
    if (is_core(type, "pods")) {
      if (result.contains("spec")) default_pod_spec(result["spec"]);
      if (std::optional<ApiError> problem = check_pod_spec_update(current, result)) return *problem;
    }
    if (is_crd(type)) {
      ApiResult<std::vector<ResourceType>> types = custom_resource_types(result);
      if (!types) return types.error();
      result = with_established_status(std::move(result), now_text());
      // Keep the transition times of conditions that did not change.
      if (current.contains("status") && current["status"].contains("conditions")) {
        result["status"]["conditions"] = current["status"]["conditions"];
      }
    }
  }
  result["apiVersion"] = current.value("apiVersion", type.api_version());
  result["kind"] = type.kind;
  if (type.custom()) {
    ApiResult<json> checked = apply_structural_schema(type, std::move(result));
    if (!checked) return checked.error();
    result = std::move(*checked);
  }
  json& meta = result["metadata"];
  // Patches are checked here too: what they produce, not what they send.
  if (std::vector<StatusCause> problems = label_and_annotation_problems(meta); !problems.empty()) {
    return invalid(type.kind, type.group, name, std::move(problems));
  }
  meta["resourceVersion"] = old_meta.value("resourceVersion", "");
  const int64_t generation = old_meta.value("generation", int64_t{1});
  meta["generation"] = generation_content(result) == generation_content(current) ? generation : generation + 1;
  return result;
}

ApiResult<ObjectPtr> ResourceApi::update_with(const ResourceType& type, const std::string& namespace_name,
                                              const std::string& name, const Edit& edit, bool status_subresource,
                                              bool dry_run) {
  bool removed = false;
  ApiResult<ObjectPtr> stored = store_.mutate(
      type.storage_key(), type.namespaced ? namespace_name : "", name,
      [&](const ObjectPtr& current, uint64_t) -> ApiResult<Change> {
        if (!current) return not_found(type.resource_name(), name);
        ApiResult<json> candidate = edit(*as_served(type, current));
        if (!candidate) return candidate.error();
        ApiResult<json> updated = finish_update(type, *current, std::move(*candidate), status_subresource);
        if (!updated) return updated.error();
        if (*updated == *current) return Change::keep();
        // Removing the last finalizer of an object being deleted completes its deletion (not for
        // a pod in its grace period, which its kubelet removes, nor for a namespace, which goes
        // when it is empty).
        const json& metadata = (*updated)["metadata"];
        const bool finalized = !metadata.contains("finalizers") || metadata["finalizers"].empty();
        if (metadata.contains("deletionTimestamp") && finalized &&
            metadata.value("deletionGracePeriodSeconds", int64_t{0}) == 0 && !is_core(type, "namespaces")) {
          removed = true;
          return Change::remove(std::move(*updated));
        }
        return Change::put(std::move(*updated));
      },
      dry_run);
  if (!stored) return stored.error();
  if (!dry_run) {
    after_write(type, *stored, removed);
    if (removed && type.namespaced) finish_namespace_if_empty(namespace_name);
  }
  return as_served(type, *stored);
}

ApiResult<ObjectPtr> ResourceApi::update(const ResourceType& type, const std::string& namespace_name,
                                         const std::string& name, json body, bool status_subresource, bool dry_run) {
  if (!body.is_object()) {
    return bad_request(fmt::format(
        "the object provided is unrecognized (must be of type {}): the body is not a JSON object", type.kind));
  }
  const std::string kind = body.contains("kind") && body["kind"].is_string() ? body["kind"].get<std::string>() : "";
  if (!kind.empty() && kind != type.kind) {
    return bad_request(fmt::format("the kind in the data ({}) does not match the expected kind ({})", kind, type.kind));
  }
  const std::string body_name = meta_string(body, "name");
  if (body_name != name) {
    return bad_request(
        fmt::format("the name of the object ({}) does not match the name on the URL ({})", body_name, name));
  }
  return update_with(
      type, namespace_name, name, [&](const json&) -> ApiResult<json> { return body; }, status_subresource, dry_run);
}

ApiResult<ObjectPtr> ResourceApi::patch(const ResourceType& type, const std::string& namespace_name,
                                        const std::string& name, PatchType patch_type, std::string_view body,
                                        bool status_subresource, bool dry_run) {
  if (type.custom() && patch_type == PatchType::kStrategicMerge) {
    return unsupported_media_type(
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
  }
  return update_with(
      type, namespace_name, name,
      [&](const json& current) -> ApiResult<json> { return apply_patch(current, patch_type, body); },
      status_subresource, dry_run);
}

ApiResult<DeleteOutcome> ResourceApi::remove(const ResourceType& type, const std::string& namespace_name,
                                             const std::string& name, const DeleteOptions& options) {
  const std::string scope = type.namespaced ? namespace_name : "";
  if (is_core(type, "namespaces") && kUndeletableNamespaces.contains(name)) {
    return forbidden(type.resource_name(), name, "this namespace may not be deleted");
  }
  if (is_crd(type) && !options.dry_run) {
    if (store_.get(type.storage_key(), "", name)) remove_custom_resources(name);
  }
  bool removed = false;
  ApiResult<ObjectPtr> stored = store_.mutate(
      type.storage_key(), scope, name,
      [&](const ObjectPtr& current, uint64_t) -> ApiResult<Change> {
        if (!current) return not_found(type.resource_name(), name);
        const std::string uid = meta_string(*current, "uid");
        const std::string version = meta_string(*current, "resourceVersion");
        if (!options.precondition_uid.empty() && options.precondition_uid != uid) {
          return conflict(type.resource_name(), name,
                          fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: {}",
                                      options.precondition_uid, uid));
        }
        if (!options.precondition_resource_version.empty() && options.precondition_resource_version != version) {
          return conflict(type.resource_name(), name,
                          fmt::format("Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in "
                                      "object meta: {}",
                                      options.precondition_resource_version, version));
        }
        json object = *current;
        json& metadata = object["metadata"];
        if (is_core(type, "namespaces")) {
          // The namespace lingers as Terminating until what it holds is gone.
          if (metadata.contains("deletionTimestamp")) return Change::keep();
          metadata["deletionTimestamp"] = now_text();
          metadata["deletionGracePeriodSeconds"] = 0;
          object["status"]["phase"] = "Terminating";
          return Change::put(std::move(object));
        }
        const json spec = object.value("spec", json::object());
        if (is_core(type, "pods") && behaviour_.graceful_pod_deletion && !spec.value("nodeName", "").empty() &&
            !pod_is_terminal(object)) {
          const int64_t grace =
              options.grace_period_seconds.value_or(spec.value("terminationGracePeriodSeconds", int64_t{30}));
          if (grace > 0) {
            if (metadata.contains("deletionTimestamp") &&
                metadata.value("deletionGracePeriodSeconds", int64_t{0}) <= grace) {
              return Change::keep();
            }
            metadata["deletionTimestamp"] = wire::format_time(wire::WallClock::now() + std::chrono::seconds(grace));
            metadata["deletionGracePeriodSeconds"] = grace;
            return Change::put(std::move(object));
          }
        }
        if (metadata.contains("finalizers") && !metadata["finalizers"].empty()) {
          if (metadata.contains("deletionTimestamp") && metadata.value("deletionGracePeriodSeconds", int64_t{0}) == 0) {
            return Change::keep();
          }
          if (!metadata.contains("deletionTimestamp")) metadata["deletionTimestamp"] = now_text();
          metadata["deletionGracePeriodSeconds"] = 0;
          return Change::put(std::move(object));
        }
        removed = true;
        return Change::remove(std::move(object));
      },
      options.dry_run);
  if (!stored) return stored.error();
  if (!options.dry_run) {
    after_write(type, *stored, removed);
    if (is_core(type, "namespaces")) {
      remove_namespace_contents(name);
      finish_namespace_if_empty(name);
      if (!store_.get(type.storage_key(), "", name)) removed = true;
    } else if (removed && type.namespaced) {
      finish_namespace_if_empty(namespace_name);
    }
  }
  return DeleteOutcome{as_served(type, *stored), removed};
}

ApiResult<std::vector<ObjectPtr>> ResourceApi::remove_collection(const ResourceType& type,
                                                                 const std::string& namespace_name,
                                                                 const ListOptions& selection,
                                                                 const DeleteOptions& options) {
  ApiResult<ListPage> page = list(type, namespace_name, selection);
  if (!page) return page.error();
  std::vector<ObjectPtr> deleted;
  for (const ObjectPtr& object : page->items) {
    ApiResult<DeleteOutcome> outcome =
        remove(type, meta_string(*object, "namespace"), meta_string(*object, "name"), options);
    if (outcome)
      deleted.push_back(outcome->object);
    else if (outcome.error().code != 404 && outcome.error().code != 403)
      return outcome.error();
  }
  return deleted;
}

void ResourceApi::after_write(const ResourceType& type, const ObjectPtr& object, bool removed) {
  if (!is_crd(type) || !object) return;
  const std::string name = meta_string(*object, "name");
  if (removed) {
    registry_.unregister_custom(name);
    return;
  }
  ApiResult<std::vector<ResourceType>> types = custom_resource_types(*object);
  if (types) registry_.register_custom(name, std::move(*types));
}

void ResourceApi::remove_namespace_contents(const std::string& namespace_name) {
  std::set<std::string> seen;
  for (const ResourceType& type : registry_.all()) {
    if (!type.namespaced || !seen.insert(type.storage_key()).second) continue;
    ApiResult<ObjectList> objects = store_.list(type.storage_key(), namespace_name);
    if (!objects) continue;
    for (const ObjectPtr& object : objects->items) {
      (void)remove(type, namespace_name, meta_string(*object, "name"), DeleteOptions{});
    }
  }
}

void ResourceApi::finish_namespace_if_empty(const std::string& namespace_name) {
  ObjectPtr owner = store_.get("namespaces", "", namespace_name);
  if (!owner || !(*owner)["metadata"].contains("deletionTimestamp")) return;
  std::set<std::string> seen;
  for (const ResourceType& type : registry_.all()) {
    if (!type.namespaced || !seen.insert(type.storage_key()).second) continue;
    ApiResult<ObjectList> objects = store_.list(type.storage_key(), namespace_name);
    if (objects && !objects->items.empty()) return;
  }
  (void)store_.mutate("namespaces", "", namespace_name, [](const ObjectPtr& current, uint64_t) -> ApiResult<Change> {
    if (!current || !(*current)["metadata"].contains("deletionTimestamp")) return Change::keep();
    json final_state = *current;
    final_state["status"]["phase"] = "Terminating";
    return Change::remove(std::move(final_state));
  });
}

void ResourceApi::remove_custom_resources(const std::string& crd_name) {
  for (const ResourceType& type : registry_.all()) {
    if (type.crd_name != crd_name) continue;
    ApiResult<ObjectList> objects = store_.list(type.storage_key(), "");
    if (!objects) continue;
    for (const ObjectPtr& object : objects->items) {
      (void)store_.mutate(type.storage_key(), meta_string(*object, "namespace"), meta_string(*object, "name"),
                          [](const ObjectPtr&, uint64_t) -> ApiResult<Change> { return Change::remove(); });
    }
    break;  // every version shares one storage
  }
}

std::optional<int64_t> ResourceApi::priority_class_value(const std::string& name) const {
  const std::string key = "priorityclasses.scheduling.k8s.io";
  if (name.empty()) {
    ApiResult<ObjectList> classes = store_.list(key, "");
    if (!classes) return std::nullopt;
    for (const ObjectPtr& priority_class : classes->items) {
      if (priority_class->value("globalDefault", false)) return priority_class->value("value", int64_t{0});
    }
    return std::nullopt;
  }
  ObjectPtr priority_class = store_.get(key, "", name);
  if (!priority_class) return std::nullopt;
  return priority_class->value("value", int64_t{0});
}

void ResourceApi::install_defaults(const std::vector<std::string>& namespaces) {
  const std::optional<ResourceType> namespace_type = registry_.find("", "v1", "namespaces");
  for (const std::string& name : namespaces) {
    (void)create(*namespace_type, "", json{{"metadata", {{"name", name}}}});
  }
  const std::optional<ResourceType> priority_type = registry_.find("scheduling.k8s.io", "v1", "priorityclasses");
  for (const auto& [name, value] :
       {std::pair{"system-cluster-critical", 2000000000}, std::pair{"system-node-critical", 2000001000}}) {
    (void)create(
        *priority_type, "",
        json{{"metadata", {{"name", name}}},
             {"value", value},
             {"description", "Used for system critical pods that must not be moved from their current node."}});
  }
}

}  // namespace tessera::apiserver
