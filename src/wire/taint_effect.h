// A taint's effect as Node objects and pod tolerations spell it.
#pragma once

#include <optional>
#include <string_view>

#include "core/taint.h"

namespace tessera::wire {

// The names an error message offers when an effect is not one of them.
inline constexpr std::string_view kTaintEffectNames = "NoSchedule, PreferNoSchedule or NoExecute";

std::string_view taint_effect_name(TaintEffect effect);
// nullopt for anything but the three names, spelled exactly.
std::optional<TaintEffect> parse_taint_effect(std::string_view name);

}  // namespace tessera::wire
