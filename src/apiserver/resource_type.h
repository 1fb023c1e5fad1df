// What the server knows about one resource at one served version: names, scope, subresources and
// how to print it. Built-in resources are declared in resource_registry.cc; custom resources come
// from CustomResourceDefinitions.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/api_error.h"

namespace tessera::apiserver {

struct PrinterColumn {
  std::string name;
  std::string type;  // string, integer, number, boolean, date
  std::string format;
  std::string description;
  std::string json_path;  // ".spec.queue", ".status.conditions[?(@.type=="Scheduled")].reason"
  int priority = 0;       // 0: always shown; higher: with -o wide
};

// A subresource as discovery lists it ("pods/binding" creates a Binding).
struct Subresource {
  std::string name;  // "status", "binding", "eviction"
  std::string kind;
  std::string group;    // when the kind is in another group (eviction: policy)
  std::string version;  // idem
  std::vector<std::string> verbs;
};

struct ResourceType {
  std::string group;  // "" for the core group
  std::string version;
  std::string plural;
  std::string singular;
  std::string kind;
  std::string list_kind;
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<std::string> verbs;
  std::vector<Subresource> subresources;
  // Field selectors it supports besides metadata.name and metadata.namespace.
  std::vector<std::string> field_labels;
  // A CRD's additionalPrinterColumns; built-ins print through table_printer.cc.
  std::vector<PrinterColumn> printer_columns;
  std::string crd_name;  // the CustomResourceDefinition that defines it; empty for a built-in
  // A custom resource's openAPIV3Schema (null: none); see custom_resource_schema.h.
  std::shared_ptr<const nlohmann::json> schema;

  bool custom() const { return !crd_name.empty(); }
  // "v1" or "apps/v1".
  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  ResourceName resource_name() const { return ResourceName{plural, group}; }
  // Where its objects are kept: one place for every served version of a resource.
  std::string storage_key() const { return resource_name().qualified(); }
  bool has_subresource(const std::string& name) const {
    for (const Subresource& subresource : subresources) {
      if (subresource.name == name) return true;
    }
    return false;
  }
  bool has_status() const { return has_subresource("status"); }
};

}  // namespace tessera::apiserver
