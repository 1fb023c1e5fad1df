#include "apiserver/custom_resource_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "apiserver/object_meta.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

bool type_matches(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "integer")
    return value.is_number_integer() ||
           (value.is_number_float() &&
            value.get<double>() == static_cast<double>(static_cast<int64_t>(value.get<double>())));
  if (type == "number") return value.is_number();
  return true;
}

// How the real server quotes a value in a message: strings in quotes, the rest as JSON.
std::string shown(const json& value) {
  return value.is_string() ? fmt::format("\"{}\"", value.get<std::string>()) : value.dump();
}

class SchemaWalker {
 public:
  std::vector<StatusCause> causes;

  // Prunes, defaults and checks `value` (at `path`) against `schema`, in place.
  void walk(json& value, const json& schema, const std::string& path) {
    if (!schema.is_object()) return;
    if (value.is_null() && schema.value("nullable", false)) return;
    const bool int_or_string = schema.value("x-kubernetes-int-or-string", false);
    if (int_or_string) {
      if (!value.is_string() && !value.is_number_integer()) {
        invalid(path, value, fmt::format("{} in body must be of type integer,string: {}", path, shown(value)));
      }
      return;
    }
    const std::string type = schema.value("type", "");
    if (!type.empty() && !type_matches(value, type)) {
      invalid(path, value, fmt::format("{} in body must be of type {}: \"{}\"", path, type, value.type_name()));
      return;
    }
    if (schema.contains("enum") && schema["enum"].is_array()) {
      const json& allowed = schema["enum"];
      if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
        std::string list;
        for (const json& option : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", shown(option));
        causes.push_back({"FieldValueNotSupported",
                          fmt::format("Unsupported value: {}: supported values: {}", shown(value), list), path});
      }
    }
    if (value.is_number()) {
      if (schema.contains("minimum") && value.get<double>() < schema["minimum"].get<double>()) {
        invalid(path, value,
                fmt::format("{} in body should be greater than or equal to {}", path, schema["minimum"].dump()));
      }
      if (schema.contains("maximum") && value.get<double>() > schema["maximum"].get<double>()) {
        invalid(path, value,
                fmt::format("{} in body should be less than or equal to {}", path, schema["maximum"].dump()));
      }
    }
    if (value.is_array() && schema.contains("items")) {
      for (size_t i = 0; i < value.size(); ++i) walk(value[i], schema["items"], fmt::format("{}[{}]", path, i));
    }
    if (value.is_object()) walk_object(value, schema, path);
  }

 private:
  void invalid(const std::string& path, const json& value, const std::string& detail) {
    causes.push_back({"FieldValueInvalid", fmt::format("Invalid value: {}: {}", shown(value), detail), path});
  }

  void walk_object(json& value, const json& schema, const std::string& path) {
    const bool preserve = schema.value("x-kubernetes-preserve-unknown-fields", false);
    const json properties = schema.value("properties", json::object());
    const json additional = schema.contains("additionalProperties") ? schema["additionalProperties"] : json();
    auto child = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
    for (auto it = value.begin(); it != value.end();) {
      if (properties.contains(it.key())) {
        walk(it.value(), properties[it.key()], child(it.key()));
        ++it;
      } else if (additional.is_object()) {
        walk(it.value(), additional, child(it.key()));
        ++it;
      } else if (preserve || additional == true) {
        ++it;
      } else {
        it = value.erase(it);  // pruned, silently, as the real server does
      }
    }
    for (const auto& [key, property] : properties.items()) {
      if (!value.contains(key) && property.is_object() && property.contains("default")) {
        value[key] = property["default"];
        walk(value[key], property, child(key));
      }
    }
    for (const json& required : schema.value("required", json::array())) {
      if (required.is_string() && !value.contains(required.get<std::string>())) {
        causes.push_back({"FieldValueRequired", "Required value", child(required.get<std::string>())});
      }
    }
  }
};

}  // namespace

ApiResult<json> apply_structural_schema(const ResourceType& type, json object) {
  if (!type.schema || !type.schema->is_object()) return object;
  // apiVersion, kind and metadata are the server's; the schema speaks of the rest.
  json root_schema = *type.schema;
  json& properties = root_schema["properties"];
  if (!properties.is_object()) properties = json::object();
  for (const char* key : {"apiVersion", "kind", "metadata"})
    properties[key] = json::object({{"x-kubernetes-preserve-unknown-fields", true}});
  SchemaWalker walker;
  walker.walk(object, root_schema, "");
  if (!walker.causes.empty()) {
    return invalid(type.kind, type.group, meta_string(object, "name"), std::move(walker.causes));
  }
  return object;
}

}  // namespace tessera::apiserver
