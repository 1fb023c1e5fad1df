#include "apiserver/json_path.h"

#include <cctype>
#include <string>

namespace tessera::apiserver {

namespace {

using nlohmann::json;

struct Filter {
  std::vector<std::string> field;  // the path after @
  bool equals = true;
  json value;
};

// One step: a field name, an index, every item, or a filter over the items.
struct Step {
  enum class Kind { kField, kIndex, kAll, kFilter } kind = Kind::kField;
  std::string field = {};
  int64_t index = 0;
  Filter filter = {};
};

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '/';
}

std::optional<json> parse_literal(std::string_view text) {
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front()) {
    return json(std::string(text.substr(1, text.size() - 2)));
  }
  json number = json::parse(text, nullptr, false);
  if (number.is_discarded() || !(number.is_number() || number.is_boolean())) return std::nullopt;
  return number;
}

std::optional<Filter> parse_filter(std::string_view text) {
  // text: @.a.b=="x"
  Filter filter;
  size_t op = text.find("==");
  if (op == std::string_view::npos) {
    op = text.find("!=");
    filter.equals = false;
  }
  if (op == std::string_view::npos || !text.starts_with("@")) return std::nullopt;
  std::string_view left = text.substr(1, op - 1);
  while (!left.empty() && left.back() == ' ') left.remove_suffix(1);
  std::string_view right = text.substr(op + 2);
  while (!right.empty() && right.front() == ' ') right.remove_prefix(1);
  while (!left.empty()) {
    if (left.front() != '.') return std::nullopt;
    left.remove_prefix(1);
    size_t end = 0;
    while (end < left.size() && is_name_char(left[end])) ++end;
    if (end == 0) return std::nullopt;
    filter.field.emplace_back(left.substr(0, end));
    left.remove_prefix(end);
  }
  std::optional<json> value = parse_literal(right);
  if (!value) return std::nullopt;
  filter.value = std::move(*value);
  return filter;
}

std::optional<std::vector<Step>> parse_path(std::string_view path) {
  while (!path.empty() && path.front() == ' ') path.remove_prefix(1);
  while (!path.empty() && path.back() == ' ') path.remove_suffix(1);
  if (path.size() >= 2 && path.front() == '{' && path.back() == '}') path = path.substr(1, path.size() - 2);
  if (path.starts_with("$")) path.remove_prefix(1);
  std::vector<Step> steps;
  size_t position = 0;
  while (position < path.size()) {
    if (path[position] == '.') {
      ++position;
      size_t end = position;
      while (end < path.size() && is_name_char(path[end])) ++end;
      if (end == position) return std::nullopt;
      steps.push_back(Step{Step::Kind::kField, std::string(path.substr(position, end - position))});
      position = end;
    } else if (path[position] == '[') {
      // A filter may hold ']' inside quotes; find the closing ']' outside them.
      size_t end = position + 1;
      char quote = 0;
      while (end < path.size() && (quote != 0 || path[end] != ']')) {
        if (quote == 0 && (path[end] == '"' || path[end] == '\''))
          quote = path[end];
        else if (quote != 0 && path[end] == quote)
          quote = 0;
        ++end;
      }
      if (end >= path.size()) return std::nullopt;
      std::string_view inside = path.substr(position + 1, end - position - 1);
      position = end + 1;
      if (inside == "*") {
        steps.push_back(Step{Step::Kind::kAll});
      } else if (inside.starts_with("?(") && inside.ends_with(")")) {
        std::optional<Filter> filter = parse_filter(inside.substr(2, inside.size() - 3));
        if (!filter) return std::nullopt;
        Step step{Step::Kind::kFilter};
        step.filter = std::move(*filter);
        steps.push_back(std::move(step));
      } else if (inside.size() >= 2 && (inside.front() == '\'' || inside.front() == '"') &&
                 inside.back() == inside.front()) {
        steps.push_back(Step{Step::Kind::kField, std::string(inside.substr(1, inside.size() - 2))});
      } else {
        json index = json::parse(inside, nullptr, false);
        if (!index.is_number_integer()) return std::nullopt;
        Step step{Step::Kind::kIndex};
        step.index = index.get<int64_t>();
        steps.push_back(std::move(step));
      }
    } else {
      return std::nullopt;
    }
  }
  return steps;
}

const json* follow(const json& value, const std::vector<std::string>& fields) {
  const json* current = &value;
  for (const std::string& field : fields) {
    if (!current->is_object()) return nullptr;
    auto found = current->find(field);
    if (found == current->end()) return nullptr;
    current = &*found;
  }
  return current;
}

}  // namespace

std::optional<std::vector<json>> evaluate_json_path(const json& root, std::string_view path) {
  std::optional<std::vector<Step>> steps = parse_path(path);
  if (!steps) return std::nullopt;
  std::vector<const json*> current = {&root};
  for (const Step& step : *steps) {
    std::vector<const json*> next;
    for (const json* value : current) {
      switch (step.kind) {
        case Step::Kind::kField:
          if (value->is_object()) {
            auto found = value->find(step.field);
            if (found != value->end()) next.push_back(&*found);
          }
          break;
        case Step::Kind::kIndex:
          if (value->is_array()) {
            const int64_t size = static_cast<int64_t>(value->size());
            const int64_t index = step.index < 0 ? size + step.index : step.index;
            if (index >= 0 && index < size) next.push_back(&(*value)[static_cast<size_t>(index)]);
          }
          break;
        case Step::Kind::kAll:
          if (value->is_array() || value->is_object()) {
            for (const json& item : *value) next.push_back(&item);
          }
          break;
        case Step::Kind::kFilter:
          if (value->is_array()) {
            for (const json& item : *value) {
              const json* field = follow(item, step.filter.field);
              const bool same = field != nullptr && *field == step.filter.value;
              if (field != nullptr && same == step.filter.equals) next.push_back(&item);
            }
          }
          break;
      }
    }
    current = std::move(next);
  }
  std::vector<json> values;
  values.reserve(current.size());
  for (const json* value : current) values.push_back(*value);
  return values;
}

}  // namespace tessera::apiserver
