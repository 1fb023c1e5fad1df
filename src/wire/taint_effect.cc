#include "wire/taint_effect.h"

namespace tessera::wire {

std::string_view taint_effect_name(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "NoSchedule";
}

std::optional<TaintEffect> parse_taint_effect(std::string_view name) {
  for (TaintEffect effect : {TaintEffect::kNoSchedule, TaintEffect::kPreferNoSchedule, TaintEffect::kNoExecute}) {
    if (name == taint_effect_name(effect)) return effect;
  }
  return std::nullopt;
}

}  // namespace tessera::wire
