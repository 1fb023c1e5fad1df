// A Queue's spec.rules (deploy/crds/queues.yaml) read into the engine's WorkRules, and the
// per-workload limits pods ask for through annotations (docs/kubernetes.md).
#include <fmt/format.h>

#include <cmath>

#include "adapter/annotations.h"
#include "adapter/object_fields.h"
#include "adapter/object_translation.h"
#include "wire/duration.h"

namespace tessera::adapter {

namespace {

constexpr std::string_view kRuleFields[] = {"maxRuntime",   "idleLimit",   "onExpiry",      "notice",
                                            "requeueDelay", "warmupGrace", "idleThreshold", "idleWindow"};

// A duration field of a rule ("1h30m"); nullopt when absent. `positive`: 0 is refused too.
Result<std::optional<double>> rule_duration(const ObjectFields& fields, std::string_view path, bool positive = false) {
  auto text = fields.string(path);
  if (!text) return text.error();
  if (text->empty()) return std::optional<double>();
  auto seconds = wire::parse_duration_seconds(*text);
  if (!seconds) return fields.error(path, seconds.error().message);
  if (*seconds < 0 || (positive && *seconds == 0)) {
    return fields.error(path, fmt::format("'{}' is {} (expected a duration {})", *text,
                                          *seconds < 0 ? "negative" : "zero", positive ? "> 0" : ">= 0"));
  }
  return std::optional<double>(*seconds);
}

Result<WorkRules> rule_from(const ObjectFields& fields, const nlohmann::json& rule) {
  if (!rule.is_object()) return fields.error("", fmt::format("expected an object, got {}", rule.type_name()));
  for (const auto& [key, value] : rule.items()) {
    if (std::find(std::begin(kRuleFields), std::end(kRuleFields), key) == std::end(kRuleFields)) {
      return fields.error(key,
                          "unknown field: expected maxRuntime, idleLimit, onExpiry, notice, requeueDelay, "
                          "warmupGrace, idleThreshold or idleWindow");
    }
  }
  WorkRules rules;
  struct DurationField {
    std::string_view path;
    std::optional<double> WorkRules::*field;
    bool positive;
  };
  for (const DurationField& duration : {DurationField{"maxRuntime", &WorkRules::max_runtime_seconds, false},
                                        DurationField{"idleLimit", &WorkRules::idle_limit_seconds, false},
                                        DurationField{"notice", &WorkRules::notice_seconds, false},
                                        DurationField{"requeueDelay", &WorkRules::requeue_delay_seconds, false},
                                        DurationField{"warmupGrace", &WorkRules::warmup_grace_seconds, false},
                                        DurationField{"idleWindow", &WorkRules::idle_window_seconds, true}}) {
    auto seconds = rule_duration(fields, duration.path, duration.positive);
    if (!seconds) return seconds.error();
    rules.*duration.field = *seconds;
  }
  auto action = fields.string("onExpiry");
  if (!action) return action.error();
  if (!action->empty()) {
    rules.on_expiry = parse_expiry_action(*action);
    if (!rules.on_expiry) {
      return fields.error("onExpiry",
                          fmt::format("'{}' is not an action: expected stop, requeue or preemptible", *action));
    }
  }
  auto threshold = fields.find("idleThreshold");
  if (!threshold) return threshold.error();
  if (*threshold != nullptr) {
    if (!(*threshold)->is_number()) {
      return fields.error("idleThreshold", fmt::format("expected a number, got {}", (*threshold)->type_name()));
    }
    const double percent = (*threshold)->get<double>();
    if (!(percent >= 0 && percent <= 100)) {
      return fields.error("idleThreshold", fmt::format("{} is not a percentage from 0 to 100", percent));
    }
    rules.idle_threshold_pct = percent;
  }
  return rules;
}

// An annotation holding a duration > 0 ("2h"); nullopt when absent.
Result<std::optional<double>> annotated_limit(const ObjectFields& fields, const Labels& annotations,
                                              std::string_view annotation) {
  const auto found = annotations.find(std::string(annotation));
  if (found == annotations.end()) return std::optional<double>();
  auto seconds = wire::parse_duration_seconds(found->second);
  const std::string field = fmt::format("metadata.annotations[{}]", annotation);
  if (!seconds) return fields.error(field, seconds.error().message);
  if (!(*seconds > 0)) return fields.error(field, fmt::format("'{}' is not a duration > 0", found->second));
  return std::optional<double>(*seconds);
}

}  // namespace

Result<WorkRulesByKind> work_rules_from(const ObjectFields& fields) {
  WorkRulesByKind rules;
  auto by_kind = fields.find("spec.rules");
  if (!by_kind) return by_kind.error();
  if (*by_kind == nullptr) return rules;
  if (!(*by_kind)->is_object()) {
    return fields.error("spec.rules", fmt::format("expected an object, got {}", (*by_kind)->type_name()));
  }
  for (const auto& [kind, rule] : (*by_kind)->items()) {
    size_t index = kWorkloadKindCount;
    for (size_t k = 0; k < kWorkloadKindCount; ++k) {
      if (workload_kind_name(static_cast<WorkloadKind>(k)) == kind) index = k;
    }
    if (index == kWorkloadKindCount) {
      return fields.error(fmt::format("spec.rules.{}", kind),
                          "unknown workload kind: expected train, interactive or inference");
    }
    auto read = rule_from(fields.child(rule, fmt::format("spec.rules.{}", kind)), rule);
    if (!read) return read.error();
    rules[index] = *read;
  }
  return rules;
}

Result<AskedLimits> asked_limits(const ObjectFields& fields, const Labels& annotations) {
  AskedLimits asked;
  auto runtime = annotated_limit(fields, annotations, kMaxRuntimeAnnotation);
  if (!runtime) return runtime.error();
  asked.max_runtime_seconds = *runtime;
  auto idle = annotated_limit(fields, annotations, kIdleLimitAnnotation);
  if (!idle) return idle.error();
  asked.idle_limit_seconds = *idle;
  return asked;
}

}  // namespace tessera::adapter
