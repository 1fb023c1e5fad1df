// Label and field selectors as list and watch requests carry them (?labelSelector=...,
// ?fieldSelector=...), and the metav1.LabelSelector objects that PodDisruptionBudgets hold.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/resource_type.h"

namespace tessera::apiserver {

struct LabelRequirement {
  enum class Operator { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist, kGreaterThan, kLessThan };
  std::string key;
  Operator op = Operator::kEquals;
  std::vector<std::string> values;

  bool matches(const nlohmann::json& labels) const;
};

// `app=web,tier!=db,env in (a,b),!legacy`: every requirement must hold. Empty selects everything.
class LabelSelector {
 public:
  static ApiResult<LabelSelector> parse(std::string_view text);
  // A metav1.LabelSelector ({matchLabels, matchExpressions}); null or {} selects everything.
  static ApiResult<LabelSelector> from_object(const nlohmann::json& selector);

  bool matches(const nlohmann::json& labels) const;
  bool empty() const { return requirements_.empty(); }

 private:
  std::vector<LabelRequirement> requirements_;
};

// `metadata.name=x,status.phase!=Running`: only =, == and != on the fields the resource supports.
class FieldSelector {
 public:
  static ApiResult<FieldSelector> parse(std::string_view text, const ResourceType& type);
  bool matches(const nlohmann::json& object) const;
  bool empty() const { return terms_.empty(); }

 private:
  struct Term {
    std::vector<std::string> path;
    bool equals = true;
    std::string value;
  };
  std::vector<Term> terms_;
};

}  // namespace tessera::apiserver
