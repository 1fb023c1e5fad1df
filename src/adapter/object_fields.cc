#include "adapter/object_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "adapter/object_translation.h"
#include "wire/timestamp.h"

namespace tessera::adapter {

namespace {

std::string_view json_type_name(const nlohmann::json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();  // "string", "object", "array", "boolean", "null"
}

// A quantity's text: a string as written, a number in its shortest exact form ("2", "0.5").
std::optional<std::string> quantity_text_of(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_unsigned()) return fmt::format("{}", value.get<uint64_t>());
  if (value.is_number_integer()) return fmt::format("{}", value.get<int64_t>());
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  return std::nullopt;
}

}  // namespace

ObjectFields::ObjectFields(const nlohmann::json& object, std::string owner, std::string prefix)
    : object_(object), owner_(std::move(owner)), prefix_(std::move(prefix)) {}

ObjectFields ObjectFields::child(const nlohmann::json& part, std::string_view path) const {
  return ObjectFields(part, owner_, field_name(path));
}

std::string ObjectFields::field_name(std::string_view path) const {
  if (prefix_.empty()) return std::string(path);
  if (path.empty()) return prefix_;
  if (path.starts_with('[')) return fmt::format("{}{}", prefix_, path);
  return fmt::format("{}.{}", prefix_, path);
}

Error ObjectFields::error(std::string_view path, std::string_view problem) const {
  const std::string field = field_name(path);
  if (field.empty()) return Error{fmt::format("{}: {}", owner_, problem)};
  return Error{fmt::format("{}: {}: {}", owner_, field_name(path), problem)};
}

Error ObjectFields::type_error(std::string_view path, std::string_view expected, const nlohmann::json& value) const {
  return error(path, fmt::format("expected {}, got {}", expected, json_type_name(value)));
}

Result<const nlohmann::json*> ObjectFields::find(std::string_view path) const {
  const nlohmann::json* current = &object_;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = std::min(path.find('.', start), path.size());
    const std::string_view key = path.substr(start, dot - start);
    if (!current->is_object()) return type_error(path.substr(0, start == 0 ? 0 : start - 1), "an object", *current);
    auto it = current->find(key);
    if (it == current->end() || it->is_null()) return nullptr;
    current = &*it;
    start = dot + 1;
  }
  return current;
}

Result<std::string> ObjectFields::string(std::string_view path) const {
  auto value = find(path);
  if (!value) return value.error();
  if (*value == nullptr) return std::string();
  if (!(*value)->is_string()) return type_error(path, "a string", **value);
  return (*value)->get<std::string>();
}

Result<std::optional<int64_t>> ObjectFields::integer(std::string_view path) const {
  auto value = find(path);
  if (!value) return value.error();
  if (*value == nullptr) return std::optional<int64_t>();
  const nlohmann::json& number = **value;
  if (number.is_number_unsigned()) {
    if (number.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return error(path, "integer out of range");
    }
    return std::optional<int64_t>(static_cast<int64_t>(number.get<uint64_t>()));
  }
  if (!number.is_number_integer()) return type_error(path, "an integer", number);
  return std::optional<int64_t>(number.get<int64_t>());
}

Result<std::optional<bool>> ObjectFields::boolean(std::string_view path) const {
  auto value = find(path);
  if (!value) return value.error();
  if (*value == nullptr) return std::optional<bool>();
  if (!(*value)->is_boolean()) return type_error(path, "true or false", **value);
  return std::optional<bool>((*value)->get<bool>());
}

Result<Labels> ObjectFields::string_map(std::string_view path) const {
  auto value = find(path);
  if (!value) return value.error();
  Labels map;
  if (*value == nullptr) return map;
  if (!(*value)->is_object()) return type_error(path, "an object of strings", **value);
  for (const auto& [key, entry] : (*value)->items()) {
    if (!entry.is_string()) return type_error(fmt::format("{}[{}]", path, key), "a string", entry);
    map.emplace(key, entry.get<std::string>());
  }
  return map;
}

Result<std::optional<std::string>> ObjectFields::quantity_text(std::string_view path) const {
  auto value = find(path);
  if (!value) return value.error();
  if (*value == nullptr) return std::optional<std::string>();
  std::optional<std::string> text = quantity_text_of(**value);
  if (!text) return type_error(path, "a quantity (a string or a number)", **value);
  return text;
}

Result<Labels> ObjectFields::quantity_map(std::string_view path) const {
  auto value = find(path);
  if (!value) return value.error();
  Labels map;
  if (*value == nullptr) return map;
  if (!(*value)->is_object()) return type_error(path, "an object of quantities", **value);
  for (const auto& [key, entry] : (*value)->items()) {
    std::optional<std::string> text = quantity_text_of(entry);
    if (!text) return type_error(fmt::format("{}[{}]", path, key), "a quantity (a string or a number)", entry);
    map.emplace(key, std::move(*text));
  }
  return map;
}

Result<std::optional<double>> ObjectFields::timestamp(std::string_view path) const {
  auto text = string(path);
  if (!text) return text.error();
  if (text->empty()) return std::optional<double>();
  auto seconds = wire::parse_time(*text);
  if (!seconds) return error(path, seconds.error().message);
  return std::optional<double>(*seconds);
}

Result<const nlohmann::json*> ObjectFields::array(std::string_view path) const {
  auto value = find(path);
  if (!value) return value.error();
  if (*value != nullptr && !(*value)->is_array()) return type_error(path, "a list", **value);
  return *value;
}

Status ObjectFields::namespaced_name(std::string& namespace_name, std::string& name) const {
  auto read_namespace = string("metadata.namespace");
  if (!read_namespace) return read_namespace.error();
  auto read_name = string("metadata.name");
  if (!read_name) return read_name.error();
  namespace_name = std::move(*read_namespace);
  name = std::move(*read_name);
  return Ok{};
}

}  // namespace tessera::adapter
