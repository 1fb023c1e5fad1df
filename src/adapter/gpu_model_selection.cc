#include "adapter/gpu_model_selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "adapter/annotations.h"

namespace tessera::adapter {

namespace {

using ModelNames = std::vector<std::string>;

constexpr std::string_view kRequiredTerms =
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";

Result<ModelNames> string_list(const ObjectFields& fields, std::string_view path) {
  auto list = fields.array(path);
  if (!list) return list.error();
  ModelNames names;
  for (size_t i = 0; *list != nullptr && i < (*list)->size(); ++i) {
    const nlohmann::json& item = (**list)[i];
    if (!item.is_string()) return fields.error(fmt::format("{}[{}]", path, i), "expected a string");
    names.push_back(item.get<std::string>());
  }
  return names;
}

ModelNames intersection(const ModelNames& a, const ModelNames& b) {
  ModelNames both;
  for (const std::string& name : a) {
    if (std::find(b.begin(), b.end(), name) != b.end()) both.push_back(name);
  }
  return both;
}

// The models the single required term allows, nullopt when affinity does not restrict them.
Result<std::optional<ModelNames>> affinity_models(const ObjectFields& pod) {
  auto terms = pod.array(kRequiredTerms);
  if (!terms) return terms.error();
  std::optional<ModelNames> allowed;
  // Terms are alternatives: with more than one, a model could be allowed through another term.
  if (*terms == nullptr || (*terms)->size() != 1) return allowed;
  const ObjectFields term = pod.child((**terms)[0], fmt::format("{}[0]", kRequiredTerms));
  auto expressions = term.array("matchExpressions");
  if (!expressions) return expressions.error();
  for (size_t i = 0; *expressions != nullptr && i < (*expressions)->size(); ++i) {
    const ObjectFields expression = term.child((**expressions)[i], fmt::format("matchExpressions[{}]", i));
    auto key = expression.string("key");
    if (!key) return key.error();
    auto op = expression.string("operator");
    if (!op) return op.error();
    if (*key != kGpuProductLabel || *op != "In") continue;
    auto values = string_list(expression, "values");
    if (!values) return values.error();
    // Expressions of one term must all hold.
    allowed = allowed ? intersection(*allowed, *values) : *values;
  }
  return allowed;
}

}  // namespace

Result<GpuModelSet> allowed_gpu_models(const ObjectFields& pod, const Labels& node_selector,
                                       const GpuModelCatalog& models) {
  auto from_affinity = affinity_models(pod);
  if (!from_affinity) return from_affinity.error();
  std::optional<ModelNames> allowed = std::move(*from_affinity);
  if (auto selected = node_selector.find(std::string(kGpuProductLabel)); selected != node_selector.end()) {
    const ModelNames selector_model{selected->second};
    allowed = allowed ? intersection(*allowed, selector_model) : selector_model;
  }
  if (!allowed) return GpuModelSet::any();

  GpuModelSet set;
  for (const std::string& name : *allowed) {
    if (std::optional<GpuModelId> id = models.find(name)) set.add(*id);
  }
  if (set.is_any()) set.add(kNoKnownGpuModel);
  return set;
}

}  // namespace tessera::adapter
