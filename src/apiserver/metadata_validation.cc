#include "apiserver/metadata_validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "apiserver/object_meta.h"

namespace tessera::apiserver {

namespace {

constexpr size_t kQualifiedNameMaxLength = 63;
constexpr size_t kLabelValueMaxLength = 63;
constexpr const char* kQualifiedNameRule =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
constexpr const char* kLabelValueRule =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

bool alphanumeric(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], scanned.
bool qualified_name_chars(std::string_view text) {
  if (text.empty() || !alphanumeric(text.front()) || !alphanumeric(text.back())) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return alphanumeric(c) || c == '-' || c == '_' || c == '.'; });
}

// validation.IsQualifiedName: every problem of `key`, as messages.
std::vector<std::string> qualified_name_problems(std::string_view key) {
  std::vector<std::string> problems;
  const size_t slash = key.find('/');
  std::string_view name = key;
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      problems.push_back(fmt::format(
          "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
          kQualifiedNameRule));
      return problems;
    }
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty()) {
      problems.push_back("prefix part must be non-empty");
    } else if (std::optional<std::string> problem = dns_subdomain_problem(prefix)) {
      problems.push_back("prefix part " + *problem);
    }
  }
  if (name.empty()) {
    problems.push_back("name part must be non-empty");
  } else if (name.size() > kQualifiedNameMaxLength) {
    problems.push_back(fmt::format("name part must be no more than {} characters", kQualifiedNameMaxLength));
  }
  if (!qualified_name_chars(name)) problems.push_back(fmt::format("name part {}", kQualifiedNameRule));
  return problems;
}

std::vector<std::string> label_value_problems(std::string_view value) {
  std::vector<std::string> problems;
  if (value.size() > kLabelValueMaxLength) {
    problems.push_back(fmt::format("must be no more than {} characters", kLabelValueMaxLength));
  }
  if (!value.empty() && !qualified_name_chars(value)) problems.push_back(kLabelValueRule);
  return problems;
}

StatusCause invalid_value(const char* field, std::string_view value, const std::string& problem) {
  return {"FieldValueInvalid", fmt::format("Invalid value: \"{}\": {}", value, problem), field};
}

const nlohmann::json& map_field(const nlohmann::json& metadata, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  auto found = metadata.find(key);
  return found != metadata.end() && found->is_object() ? *found : kEmpty;
}

}  // namespace

std::vector<StatusCause> label_and_annotation_problems(const nlohmann::json& metadata) {
  std::vector<StatusCause> causes;
  if (!metadata.is_object()) return causes;
  for (const auto& [key, value] : map_field(metadata, "labels").items()) {
    for (const std::string& problem : qualified_name_problems(key)) {
      causes.push_back(invalid_value("metadata.labels", key, problem));
    }
    if (!value.is_string()) continue;
    const std::string& text = value.get_ref<const std::string&>();
    for (const std::string& problem : label_value_problems(text)) {
      causes.push_back(invalid_value("metadata.labels", text, problem));
    }
  }
  size_t total_size = 0;
  for (const auto& [key, value] : map_field(metadata, "annotations").items()) {
    // Qualified names, except that case does not matter.
    std::string lowered = key;
    std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const std::string& problem : qualified_name_problems(lowered)) {
      causes.push_back(invalid_value("metadata.annotations", key, problem));
    }
    total_size += key.size() + (value.is_string() ? value.get_ref<const std::string&>().size() : 0);
  }
  if (total_size > kTotalAnnotationSizeLimit) {
    causes.push_back({"FieldValueTooLong", fmt::format("Too long: must have at most {} bytes", kTotalAnnotationSizeLimit),
                      "metadata.annotations"});
  }
  return causes;
}

}  // namespace tessera::apiserver
