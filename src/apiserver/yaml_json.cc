#include "apiserver/yaml_json.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::apiserver {

namespace {

enum class NumberShape { kNone, kInteger, kFloat };

size_t skip_digits(std::string_view text, size_t at) {
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
  return at;
}

// Integers are [-+]?[0-9]+, floats [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?. A scan rather
// than std::regex, whose matcher recurses once per character: a long number in a request body
// would overflow the stack.
NumberShape number_shape(std::string_view text) {
  size_t at = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  const size_t integer_end = skip_digits(text, at);
  const bool integer_digits = integer_end > at;
  if (integer_digits && integer_end == text.size()) return NumberShape::kInteger;
  at = integer_end;
  bool fraction_digits = false;
  if (at < text.size() && text[at] == '.') {
    const size_t fraction_end = skip_digits(text, at + 1);
    fraction_digits = fraction_end > at + 1;
    at = fraction_end;
  }
  if (!integer_digits && !fraction_digits) return NumberShape::kNone;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    size_t exponent = at + 1;
    if (exponent < text.size() && (text[exponent] == '-' || text[exponent] == '+')) ++exponent;
    at = skip_digits(text, exponent);
    if (at == exponent) return NumberShape::kNone;
  }
  return at == text.size() ? NumberShape::kFloat : NumberShape::kNone;
}

// A number the scalar holds, or nullopt. As the real server's YAML decoder does, a number too
// large for 64 bits (or for a double) stays a string.
std::optional<nlohmann::json> number(const std::string& text) {
  const NumberShape shape = number_shape(text);
  if (shape == NumberShape::kNone) return std::nullopt;
  const char* begin = text.data() + (text.front() == '+' ? 1 : 0);
  const char* end = text.data() + text.size();
  if (shape == NumberShape::kInteger) {
    int64_t value = 0;
    if (std::from_chars(begin, end, value).ec == std::errc()) return value;
    uint64_t unsigned_value = 0;
    if (std::from_chars(begin, end, unsigned_value).ec == std::errc()) return unsigned_value;
  }
  double value = 0;
  auto [stop, error] = std::from_chars(begin, end, value);
  if (error == std::errc() && stop == end && std::isfinite(value)) return value;
  return std::nullopt;
}

nlohmann::json scalar(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (std::optional<nlohmann::json> value = number(text)) return *value;
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
