#include "apiserver/selectors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "apiserver/text.h"

namespace tessera::apiserver {

namespace {

// Label keys are [prefix/]name; values are short names. Both may be empty only where allowed.
bool valid_label_part(std::string_view text, bool allow_empty) {
  if (text.empty()) return allow_empty;
  if (text.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(text.front()) || !alnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool valid_label_key(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) return valid_label_part(key, false);
  const std::string_view prefix = key.substr(0, slash);
  if (prefix.empty() || prefix.size() > 253) return false;
  if (!std::all_of(prefix.begin(), prefix.end(), [](char c) {
        return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0 ||
               c == '-' || c == '.';
      })) {
    return false;
  }
  return valid_label_part(key.substr(slash + 1), false);
}

ApiError selector_error(std::string_view requirement, const std::string& why) {
  return bad_request(fmt::format("unable to parse requirement: {}: {}", why, requirement));
}

// Splits on commas outside parentheses.
std::vector<std::string_view> split_requirements(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return parts;
}

ApiResult<LabelRequirement> parse_requirement(std::string_view text) {
  const std::string_view original = text;
  text = trim(text);
  LabelRequirement requirement;
  if (text.empty()) return selector_error(original, "empty requirement");
  if (text.front() == '!') {
    requirement.op = LabelRequirement::Operator::kDoesNotExist;
    requirement.key = std::string(trim(text.substr(1)));
  } else {
    // The key ends at the first operator character or blank.
    size_t key_end = 0;
    while (key_end < text.size() && std::string_view("=!<> ").find(text[key_end]) == std::string_view::npos) {
      ++key_end;
    }
    requirement.key = std::string(text.substr(0, key_end));
    std::string_view rest = trim(text.substr(key_end));
    if (rest.empty()) {
      requirement.op = LabelRequirement::Operator::kExists;
    } else if (rest.starts_with("in ") || rest.starts_with("in(") || rest.starts_with("notin ") ||
               rest.starts_with("notin(")) {
      const bool in = rest.starts_with("in");
      requirement.op = in ? LabelRequirement::Operator::kIn : LabelRequirement::Operator::kNotIn;
      rest = trim(rest.substr(in ? 2 : 5));
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') {
        return selector_error(original, "expected a parenthesised list of values");
      }
      std::string_view values = rest.substr(1, rest.size() - 2);
      size_t start = 0;
      for (size_t i = 0; i <= values.size(); ++i) {
        if (i == values.size() || values[i] == ',') {
          requirement.values.emplace_back(trim(values.substr(start, i - start)));
          start = i + 1;
        }
      }
    } else {
      std::string_view op;
      for (std::string_view candidate : {"==", "!=", "=", ">", "<"}) {
        if (rest.starts_with(candidate)) {
          op = candidate;
          break;
        }
      }
      if (op.empty()) return selector_error(original, "found unknown operator");
      if (op == "!=")
        requirement.op = LabelRequirement::Operator::kNotEquals;
      else if (op == ">")
        requirement.op = LabelRequirement::Operator::kGreaterThan;
      else if (op == "<")
        requirement.op = LabelRequirement::Operator::kLessThan;
      requirement.values.emplace_back(trim(rest.substr(op.size())));
    }
  }
  if (!valid_label_key(requirement.key))
    return selector_error(original, fmt::format("invalid label key \"{}\"", requirement.key));
  for (const std::string& value : requirement.values) {
    const bool numeric = requirement.op == LabelRequirement::Operator::kGreaterThan ||
                         requirement.op == LabelRequirement::Operator::kLessThan;
    int64_t number = 0;
    if (numeric && std::from_chars(value.data(), value.data() + value.size(), number).ec != std::errc()) {
      return selector_error(original, fmt::format("for 'Gt', 'Lt' operators, the value must be an integer"));
    }
    if (!numeric && !valid_label_part(value, true)) {
      return selector_error(original, fmt::format("invalid label value: \"{}\"", value));
    }
  }
  return requirement;
}

const nlohmann::json* label_value(const nlohmann::json& labels, const std::string& key) {
  if (!labels.is_object()) return nullptr;
  auto found = labels.find(key);
  return found == labels.end() || !found->is_string() ? nullptr : &*found;
}

}  // namespace

bool LabelRequirement::matches(const nlohmann::json& labels) const {
  const nlohmann::json* value = label_value(labels, key);
  auto listed = [&] {
    return value && std::find(values.begin(), values.end(), value->get<std::string>()) != values.end();
  };
  switch (op) {
    case Operator::kEquals:
      return listed();
    case Operator::kIn:
      return listed();
    case Operator::kNotEquals:
      return !listed();
    case Operator::kNotIn:
      return !listed();
    case Operator::kExists:
      return value != nullptr;
    case Operator::kDoesNotExist:
      return value == nullptr;
    case Operator::kGreaterThan:
    case Operator::kLessThan: {
      if (!value) return false;
      const std::string& text = value->get_ref<const std::string&>();
      int64_t have = 0;
      if (std::from_chars(text.data(), text.data() + text.size(), have).ec != std::errc()) return false;
      const int64_t bound = std::stoll(values.front());
      return op == Operator::kGreaterThan ? have > bound : have < bound;
    }
  }
  return false;
}

ApiResult<LabelSelector> LabelSelector::parse(std::string_view text) {
  LabelSelector selector;
  if (trim(text).empty()) return selector;
  for (std::string_view part : split_requirements(text)) {
    ApiResult<LabelRequirement> requirement = parse_requirement(part);
    if (!requirement) return requirement.error();
    selector.requirements_.push_back(std::move(*requirement));
  }
  return selector;
}

ApiResult<LabelSelector> LabelSelector::from_object(const nlohmann::json& object) {
  LabelSelector selector;
  if (object.is_null()) return selector;
  if (!object.is_object()) return bad_request("a label selector must be an object");
  if (auto labels = object.find("matchLabels"); labels != object.end() && labels->is_object()) {
    for (const auto& [key, value] : labels->items()) {
      if (!value.is_string()) return bad_request(fmt::format("matchLabels[{}] must be a string", key));
      selector.requirements_.push_back(
          LabelRequirement{key, LabelRequirement::Operator::kEquals, {value.get<std::string>()}});
    }
  }
  if (auto expressions = object.find("matchExpressions"); expressions != object.end() && expressions->is_array()) {
    for (const nlohmann::json& expression : *expressions) {
      LabelRequirement requirement;
      requirement.key = expression.value("key", "");
      const std::string op = expression.value("operator", "");
      if (op == "In")
        requirement.op = LabelRequirement::Operator::kIn;
      else if (op == "NotIn")
        requirement.op = LabelRequirement::Operator::kNotIn;
      else if (op == "Exists")
        requirement.op = LabelRequirement::Operator::kExists;
      else if (op == "DoesNotExist")
        requirement.op = LabelRequirement::Operator::kDoesNotExist;
      else
        return bad_request(fmt::format("\"{}\" is not a valid label selector operator", op));
      if (auto values = expression.find("values"); values != expression.end() && values->is_array()) {
        for (const nlohmann::json& value : *values) {
          if (value.is_string()) requirement.values.push_back(value.get<std::string>());
        }
      }
      selector.requirements_.push_back(std::move(requirement));
    }
  }
  return selector;
}

bool LabelSelector::matches(const nlohmann::json& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const LabelRequirement& requirement) { return requirement.matches(labels); });
}

ApiResult<FieldSelector> FieldSelector::parse(std::string_view text, const ResourceType& type) {
  FieldSelector selector;
  if (trim(text).empty()) return selector;
  for (std::string_view part : split_requirements(text)) {
    part = trim(part);
    Term term;
    size_t op_at = part.find("!=");
    size_t op_size = 2;
    if (op_at != std::string_view::npos) {
      term.equals = false;
    } else if ((op_at = part.find("==")) == std::string_view::npos) {
      op_at = part.find('=');
      op_size = 1;
    }
    if (op_at == std::string_view::npos) {
      return bad_request(fmt::format("invalid selector: '{}'; can't understand '{}'", text, part));
    }
    const std::string field(trim(part.substr(0, op_at)));
    term.value = std::string(trim(part.substr(op_at + op_size)));
    const bool supported =
        field == "metadata.name" || (field == "metadata.namespace" && type.namespaced) ||
        std::find(type.field_labels.begin(), type.field_labels.end(), field) != type.field_labels.end();
    if (!supported && type.custom()) {
      return bad_request(
          fmt::format("\"{}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"", field));
    }
    if (!supported) return bad_request(fmt::format("field label not supported: {}", field));
    // Events' `source` selects the reporting component, as the real server maps it.
    const std::string path = field == "source" ? "source.component" : field;
    size_t start = 0;
    for (size_t i = 0; i <= path.size(); ++i) {
      if (i == path.size() || path[i] == '.') {
        term.path.push_back(path.substr(start, i - start));
        start = i + 1;
      }
    }
    selector.terms_.push_back(std::move(term));
  }
  return selector;
}

bool FieldSelector::matches(const nlohmann::json& object) const {
  for (const Term& term : terms_) {
    const nlohmann::json* value = &object;
    for (const std::string& step : term.path) {
      if (!value->is_object() || !value->contains(step)) {
        value = nullptr;
        break;
      }
      value = &(*value)[step];
    }
    std::string text;
    if (value && value->is_string())
      text = value->get<std::string>();
    else if (value && value->is_boolean())
      text = value->get<bool>() ? "true" : "false";
    else if (value && value->is_number())
      text = value->dump();
    else if (!value && term.path.size() == 2 && term.path[0] == "spec" && term.path[1] == "unschedulable")
      text = "false";
    if ((text == term.value) != term.equals) return false;
  }
  return true;
}

}  // namespace tessera::apiserver
