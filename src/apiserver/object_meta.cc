#include "apiserver/object_meta.h"

#include <fmt/format.h>

#include <cctype>

namespace tessera::apiserver {

namespace {

bool lower_alnum(char c) {
  return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0;
}

constexpr const char* kLabelRule =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr const char* kSubdomainRule =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

}  // namespace

std::optional<std::string> dns_label_problem(std::string_view name) {
  if (name.size() > 63) return "must be no more than 63 characters";
  if (name.empty() || !lower_alnum(name.front()) || !lower_alnum(name.back())) return kLabelRule;
  for (char c : name) {
    if (!lower_alnum(c) && c != '-') return kLabelRule;
  }
  return std::nullopt;
}

std::optional<std::string> dns_subdomain_problem(std::string_view name) {
  if (name.size() > 253) return "must be no more than 253 characters";
  if (name.empty() || !lower_alnum(name.front()) || !lower_alnum(name.back())) return kSubdomainRule;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (lower_alnum(c) || c == '-') continue;
    if (c == '.' && lower_alnum(name[i - 1]) && lower_alnum(name[i + 1])) continue;
    return kSubdomainRule;
  }
  return std::nullopt;
}

std::optional<std::string> path_segment_problem(std::string_view name) {
  if (name.empty()) return "name or generateName is required";
  if (name == "." || name == "..") return fmt::format("may not be '{}'", name);
  for (char c : name) {
    if (c == '/' || c == '%') return fmt::format("may not contain '{}'", c);
  }
  return std::nullopt;
}

namespace {

const char* json_type_name(const nlohmann::json& value) {
  if (value.is_string()) return "string";
  if (value.is_number()) return "number";
  if (value.is_boolean()) return "bool";
  if (value.is_array()) return "array";
  if (value.is_object()) return "object";
  return "null";
}

std::string unmarshal_problem(const nlohmann::json& value, const std::string& field, const char* go_type) {
  return fmt::format("json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.{} of type {}",
                     json_type_name(value), field, go_type);
}

}  // namespace

std::optional<std::string> metadata_shape_problem(const nlohmann::json& metadata) {
  if (!metadata.is_object())
    return fmt::format("json: cannot unmarshal {} into Go value of type v1.ObjectMeta", json_type_name(metadata));
  for (const char* key : {"name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp",
                          "deletionTimestamp", "selfLink"}) {
    if (metadata.contains(key) && !metadata[key].is_string() && !metadata[key].is_null()) {
      return unmarshal_problem(metadata[key], key, "string");
    }
  }
  for (const char* key : {"generation", "deletionGracePeriodSeconds"}) {
    if (metadata.contains(key) && !metadata[key].is_number_integer() && !metadata[key].is_null()) {
      return unmarshal_problem(metadata[key], key, "int64");
    }
  }
  for (const char* key : {"labels", "annotations"}) {
    if (!metadata.contains(key) || metadata[key].is_null()) continue;
    if (!metadata[key].is_object()) return unmarshal_problem(metadata[key], key, "map[string]string");
    for (const auto& [name, value] : metadata[key].items()) {
      if (!value.is_string()) return unmarshal_problem(value, key, "string");
    }
  }
  if (metadata.contains("finalizers") && !metadata["finalizers"].is_null()) {
    if (!metadata["finalizers"].is_array()) return unmarshal_problem(metadata["finalizers"], "finalizers", "[]string");
    for (const nlohmann::json& value : metadata["finalizers"]) {
      if (!value.is_string()) return unmarshal_problem(value, "finalizers", "string");
    }
  }
  for (const char* key : {"ownerReferences", "managedFields"}) {
    if (!metadata.contains(key) || metadata[key].is_null()) continue;
    if (!metadata[key].is_array()) return unmarshal_problem(metadata[key], key, "[]object");
    for (const nlohmann::json& value : metadata[key]) {
      if (!value.is_object()) return unmarshal_problem(value, key, "object");
    }
  }
  return std::nullopt;
}

void drop_null_fields(nlohmann::json& metadata) {
  if (!metadata.is_object()) return;
  for (auto it = metadata.begin(); it != metadata.end();) {
    if (it->is_null()) {
      it = metadata.erase(it);
    } else {
      ++it;
    }
  }
}

IdSource::IdSource() : random_(std::random_device{}()) {}

std::string IdSource::uid() {
  std::lock_guard lock(mutex_);
  const uint64_t high = random_();
  const uint64_t low = random_();
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xFFFF, high & 0x0FFF,
                     ((low >> 48) & 0x3FFF) | 0x8000, low & 0xFFFFFFFFFFFF);
}

std::string IdSource::name_suffix(size_t length) {
  // The real server's alphabet: no vowels (no words) and no look-alike characters.
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::lock_guard lock(mutex_);
  std::string suffix;
  for (size_t i = 0; i < length; ++i) suffix.push_back(kAlphabet[random_() % kAlphabet.size()]);
  return suffix;
}

std::string meta_string(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  auto value = metadata->find(key);
  return value != metadata->end() && value->is_string() ? value->get<std::string>() : "";
}

}  // namespace tessera::apiserver
