// Typed reads of a Kubernetes object's JSON fields without exceptions: an absent or null field
// reads as empty, a field of the wrong type is an error that names the object and the field
// ("pod team-a/train-0: spec.priority: expected an integer, got string").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/node.h"
#include "core/result.h"

namespace tessera::adapter {

class ObjectFields {
 public:
  // `owner` names the object in messages ("pod team-a/train-0"); `prefix` is the path of
  // `object` inside it ("spec.containers[1]"), empty for the object itself.
  ObjectFields(const nlohmann::json& object, std::string owner, std::string prefix = "");

  // Reads a part of the object (an array element, a nested object) with the same owner.
  ObjectFields child(const nlohmann::json& part, std::string_view path) const;

  // The value at a dotted path ("spec.nodeSelector"); nullptr when it or a parent is absent or
  // null; an error when a parent is not an object.
  Result<const nlohmann::json*> find(std::string_view path) const;

  Result<std::string> string(std::string_view path) const;  // "" when absent
  Result<std::optional<int64_t>> integer(std::string_view path) const;
  Result<std::optional<bool>> boolean(std::string_view path) const;
  // An object of string values: labels, annotations, nodeSelector, resource lists.
  Result<Labels> string_map(std::string_view path) const;
  // Quantities as text: JSON strings ("500m") or numbers (2, 0.5), as the API server accepts
  // both. `quantity_map` reads an object of them (resource lists).
  Result<std::optional<std::string>> quantity_text(std::string_view path) const;
  Result<Labels> quantity_map(std::string_view path) const;
  // An RFC 3339 timestamp as Unix seconds; nullopt when absent.
  Result<std::optional<double>> timestamp(std::string_view path) const;
  // An array; nullptr when absent.
  Result<const nlohmann::json*> array(std::string_view path) const;
  // metadata.namespace and metadata.name, into the two strings.
  Status namespaced_name(std::string& namespace_name, std::string& name) const;

  // The full path of a field for messages ("spec.containers[1].resources").
  std::string field_name(std::string_view path) const;
  Error error(std::string_view path, std::string_view problem) const;
  const std::string& owner() const { return owner_; }

 private:
  Error type_error(std::string_view path, std::string_view expected, const nlohmann::json& value) const;

  const nlohmann::json& object_;
  std::string owner_;
  std::string prefix_;
};

}  // namespace tessera::adapter
