#include "cli/user/yaml_text.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace tessera::cli {

namespace {

using nlohmann::json;

// Whether YAML would read this string as something else (a number, a boolean, null) unless quoted.
bool needs_quotes(const std::string& text) {
  if (text.empty()) return true;
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  static constexpr const char* kWords[] = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"};
  for (const char* word : kWords) {
    if (lower == word) return true;
  }
  const char first = text.front();
  if (std::isdigit(static_cast<unsigned char>(first)) || first == '-' || first == '+' || first == '.') {
    char* end = nullptr;
    std::strtod(text.c_str(), &end);
    if (end != nullptr && *end == '\0') return true;
    if (lower == ".inf" || lower == "-.inf" || lower == "+.inf" || lower == ".nan") return true;
    if (lower.rfind("0x", 0) == 0 || lower.rfind("0o", 0) == 0) return true;
  }
  return false;
}

void emit_yaml(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        emit_yaml(out, item);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const json& item : value) emit_yaml(out, item);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      if (needs_quotes(text)) out << YAML::DoubleQuoted;
      out << text;
      break;
    }
    case json::value_t::boolean:
      out << value.get<bool>();
      break;
    case json::value_t::null:
      out << YAML::Null;
      break;
    default:  // numbers: JSON's text is valid YAML
      out << value.dump();
      break;
  }
}

}  // namespace

std::string yaml_text(const json& value) {
  YAML::Emitter out;
  emit_yaml(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace tessera::cli
