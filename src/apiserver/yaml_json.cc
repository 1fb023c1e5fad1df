#include "apiserver/yaml_json.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <regex>
#include <string>

namespace tessera::apiserver {

namespace {

nlohmann::json scalar(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  static const std::regex kInteger("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(text, kInteger)) {
    int64_t value = 0;
    const char* begin = text.data() + (text.front() == '+' ? 1 : 0);
    if (std::from_chars(begin, text.data() + text.size(), value).ec == std::errc()) return value;
  }
  if (std::regex_match(text, kFloat)) {
    try {
      return std::stod(text);
    } catch (const std::exception&) {
    }
  }
  return text;
}

nlohmann::json convert(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar(node);
    case YAML::NodeType::Sequence: {
      nlohmann::json list = nlohmann::json::array();
      for (const YAML::Node& item : node) list.push_back(convert(item));
      return list;
    }
    case YAML::NodeType::Map: {
      nlohmann::json map = nlohmann::json::object();
      for (const auto& entry : node) map[entry.first.as<std::string>()] = convert(entry.second);
      return map;
    }
  }
  return nullptr;
}

}  // namespace

Result<nlohmann::json> yaml_to_json(std::string_view text) {
  try {
    return convert(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& error) {
    return Error{fmt::format("invalid YAML: {}", error.what())};
  }
}

Result<std::vector<nlohmann::json>> yaml_documents_to_json(std::string_view text) {
  try {
    std::vector<nlohmann::json> documents;
    for (const YAML::Node& document : YAML::LoadAll(std::string(text))) {
      if (!document.IsNull()) documents.push_back(convert(document));
    }
    return documents;
  } catch (const YAML::Exception& error) {
    return Error{fmt::format("invalid YAML: {}", error.what())};
  }
}

}  // namespace tessera::apiserver
