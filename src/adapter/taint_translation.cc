#include "adapter/taint_translation.h"

#include <fmt/format.h>

#include "wire/taint_effect.h"

namespace tessera::adapter {

namespace {

Result<TaintEffect> taint_effect(const ObjectFields& fields, std::string_view effect) {
  if (std::optional<TaintEffect> known = wire::parse_taint_effect(effect)) return *known;
  return fields.error("effect",
                      fmt::format("'{}' is not a taint effect: expected {}", effect, wire::kTaintEffectNames));
}

Result<Toleration::Operator> toleration_operator(const ObjectFields& fields, std::string_view op) {
  if (op.empty() || op == "Equal") return Toleration::Operator::kEqual;
  if (op == "Exists") return Toleration::Operator::kExists;
  return fields.error("operator", fmt::format("'{}' is not a toleration operator: expected Equal or Exists", op));
}

Result<Taint> taint_from(const ObjectFields& entry) {
  auto key = entry.string("key");
  if (!key) return key.error();
  auto value = entry.string("value");
  if (!value) return value.error();
  auto effect_name = entry.string("effect");
  if (!effect_name) return effect_name.error();
  auto effect = taint_effect(entry, *effect_name);
  if (!effect) return effect.error();
  return Taint{.key = std::move(*key), .value = std::move(*value), .effect = *effect};
}

Result<Toleration> toleration_from(const ObjectFields& entry) {
  auto key = entry.string("key");
  if (!key) return key.error();
  auto op_name = entry.string("operator");
  if (!op_name) return op_name.error();
  auto op = toleration_operator(entry, *op_name);
  if (!op) return op.error();
  auto value = entry.string("value");
  if (!value) return value.error();
  if (*op == Toleration::Operator::kExists && !value->empty()) {
    return entry.error("value", "must be empty with operator Exists");
  }
  if (key->empty() && *op != Toleration::Operator::kExists) {
    return entry.error("operator", "must be Exists when the key is empty");
  }
  auto effect_name = entry.string("effect");
  if (!effect_name) return effect_name.error();
  Toleration toleration{.key = std::move(*key), .op = *op, .value = std::move(*value), .effect = std::nullopt};
  if (!effect_name->empty()) {
    auto effect = taint_effect(entry, *effect_name);
    if (!effect) return effect.error();
    toleration.effect = *effect;
  }
  return toleration;
}

// Reads each element of the list at `path` with `read`.
template <typename T>
Result<std::vector<T>> list_at(const ObjectFields& fields, std::string_view path,
                               Result<T> (*read)(const ObjectFields&)) {
  auto list = fields.array(path);
  if (!list) return list.error();
  std::vector<T> items;
  if (*list == nullptr) return items;
  for (size_t i = 0; i < (*list)->size(); ++i) {
    auto item = read(fields.child((**list)[i], fmt::format("{}[{}]", path, i)));
    if (!item) return item.error();
    items.push_back(std::move(*item));
  }
  return items;
}

}  // namespace

Result<std::vector<Taint>> taints_at(const ObjectFields& fields, std::string_view path) {
  return list_at<Taint>(fields, path, taint_from);
}

Result<std::vector<Toleration>> tolerations_at(const ObjectFields& fields, std::string_view path) {
  return list_at<Toleration>(fields, path, toleration_from);
}

}  // namespace tessera::adapter
