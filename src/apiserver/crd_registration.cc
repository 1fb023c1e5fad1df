#include "apiserver/crd_registration.h"

#include <fmt/format.h>

#include <algorithm>

#include "apiserver/object_meta.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::vector<std::string> strings_of(const json& value) {
  std::vector<std::string> result;
  if (!value.is_array()) return result;
  for (const json& item : value) {
    if (item.is_string()) result.push_back(item.get<std::string>());
  }
  return result;
}

}  // namespace

ApiResult<std::vector<ResourceType>> custom_resource_types(const json& crd) {
  const std::string name = meta_string(crd, "name");
  const json spec = crd.value("spec", json::object());
  const json names = spec.value("names", json::object());
  const std::string group = spec.value("group", "");
  const std::string plural = names.value("plural", "");
  const std::string kind = names.value("kind", "");
  const std::string scope = spec.value("scope", "");
  std::vector<StatusCause> causes;
  auto problem = [&](std::string field, std::string message, const char* reason = "FieldValueInvalid") {
    causes.push_back(StatusCause{reason, std::move(message), std::move(field)});
  };
  if (group.empty())
    problem("spec.group", "Required value", "FieldValueRequired");
  else if (group.find('.') == std::string::npos)
    problem("spec.group", fmt::format("Invalid value: \"{}\": should be a domain with at least one dot", group));
  if (plural.empty()) problem("spec.names.plural", "Required value", "FieldValueRequired");
  if (kind.empty()) problem("spec.names.kind", "Required value", "FieldValueRequired");
  if (scope != "Namespaced" && scope != "Cluster") {
    problem("spec.scope",
            fmt::format("Unsupported value: \"{}\": supported values: \"Cluster\", \"Namespaced\"", scope),
            "FieldValueNotSupported");
  }
  if (!group.empty() && !plural.empty() && name != plural + "." + group) {
    problem("metadata.name", fmt::format("Invalid value: \"{}\": must be spec.names.plural+\".\"+spec.group", name));
  }
  const json versions = spec.value("versions", json::array());
  if (!versions.is_array() || versions.empty())
    problem("spec.versions", "Invalid value: must have exactly one version marked as storage version");
  int storage_versions = 0;
  std::vector<ResourceType> types;
  for (size_t i = 0; versions.is_array() && i < versions.size(); ++i) {
    const json& version = versions[i];
    const std::string at = fmt::format("spec.versions[{}]", i);
    if (version.value("storage", false)) ++storage_versions;
    if (version.value("name", "").empty()) problem(at + ".name", "Required value", "FieldValueRequired");
    if (!version.contains("schema") || !version["schema"].contains("openAPIV3Schema")) {
      problem(at + ".schema.openAPIV3Schema", "Required value: schemas are required", "FieldValueRequired");
    }
    if (!version.value("served", false)) continue;
    ResourceType type;
    type.group = group;
    type.version = version.value("name", "");
    type.plural = plural;
    type.kind = kind;
    type.singular = names.value("singular", lowercase(kind));
    type.list_kind = names.value("listKind", kind + "List");
    type.namespaced = scope == "Namespaced";
    type.short_names = strings_of(names.value("shortNames", json()));
    type.categories = strings_of(names.value("categories", json()));
    type.verbs = {"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"};
    const json subresources = version.value("subresources", json::object());
    if (subresources.is_object() && subresources.contains("status")) {
      type.subresources.push_back(Subresource{"status", kind, "", "", {"get", "patch", "update"}});
    }
    if (version.contains("schema") && version["schema"].contains("openAPIV3Schema")) {
      type.schema = std::make_shared<const json>(version["schema"]["openAPIV3Schema"]);
    }
    const json columns = version.value("additionalPrinterColumns", json::array());
    for (const json& column : columns) {
      type.printer_columns.push_back(PrinterColumn{column.value("name", ""), column.value("type", "string"),
                                                   column.value("format", ""), column.value("description", ""),
                                                   column.value("jsonPath", ""), column.value("priority", 0)});
    }
    types.push_back(std::move(type));
  }
  if (versions.is_array() && !versions.empty() && storage_versions != 1) {
    problem("spec.versions", "Invalid value: must have exactly one version marked as storage version");
  }
  if (!causes.empty()) return invalid("CustomResourceDefinition", "apiextensions.k8s.io", name, std::move(causes));
  return types;
}

json with_established_status(json crd, const std::string& now) {
  json& names = crd["spec"]["names"];
  const std::string kind = names.value("kind", "");
  if (!names.contains("singular")) names["singular"] = lowercase(kind);
  if (!names.contains("listKind")) names["listKind"] = kind + "List";
  json stored = json::array();
  for (const json& version : crd["spec"].value("versions", json::array())) {
    if (version.value("storage", false)) stored.push_back(version.value("name", ""));
  }
  // Keep the versions stored before, as the real server does.
  if (crd.contains("status") && crd["status"].contains("storedVersions")) {
    for (const json& version : crd["status"]["storedVersions"]) {
      if (std::find(stored.begin(), stored.end(), version) == stored.end()) stored.push_back(version);
    }
  }
  crd["status"] = {{"conditions",
                    {{{"type", "NamesAccepted"},
                      {"status", "True"},
                      {"lastTransitionTime", now},
                      {"reason", "NoConflicts"},
                      {"message", "no conflicts found"}},
                     {{"type", "Established"},
                      {"status", "True"},
                      {"lastTransitionTime", now},
                      {"reason", "InitialNamesAccepted"},
                      {"message", "the initial names have been accepted"}}}},
                   {"acceptedNames", names},
                   {"storedVersions", stored}};
  return crd;
}

}  // namespace tessera::apiserver
