// Placement policies by name, as `--policy` and scenario files name them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "policy/placement_policy.h"
#include "policy/workload_mix.h"

namespace tessera {

// Every policy name, the default first.
const std::vector<std::string>& policy_names();
inline constexpr std::string_view kDefaultPolicy = "tessera";

// A fresh policy instance (policies keep per-run caches, so each run gets its own). `mix` is the
// workload the fragmentation-aware policies measure against; the others ignore it.
Result<PlacementPolicyPtr> make_policy(std::string_view name, const WorkloadMix& mix);

}  // namespace tessera
