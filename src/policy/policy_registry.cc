#include "policy/policy_registry.h"

#include <fmt/format.h>

#include "policy/best_fit_policy.h"
#include "policy/dot_product_policy.h"
#include "policy/fgd_policy.h"
#include "policy/first_fit_policy.h"
#include "policy/gpu_packing_policy.h"
#include "policy/leftover_fit_policy.h"
#include "policy/spread_policy.h"
#include "policy/tessera_policy.h"

namespace tessera {

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = {"tessera",     "fgd",         "best-fit",  "leftover-fit",
                                                 "dot-product", "gpu-packing", "first-fit", "spread"};
  return names;
}

Result<PlacementPolicyPtr> make_policy(std::string_view name, const WorkloadMix& mix) {
  if (name == "tessera") return PlacementPolicyPtr(std::make_unique<TesseraPolicy>(mix));
  if (name == "fgd") return PlacementPolicyPtr(std::make_unique<FgdPolicy>(mix));
  if (name == "best-fit") return PlacementPolicyPtr(std::make_unique<BestFitPolicy>());
  if (name == "leftover-fit") return PlacementPolicyPtr(std::make_unique<LeftoverFitPolicy>());
  if (name == "dot-product") return PlacementPolicyPtr(std::make_unique<DotProductPolicy>());
  if (name == "gpu-packing") return PlacementPolicyPtr(std::make_unique<GpuPackingPolicy>());
  if (name == "first-fit") return PlacementPolicyPtr(std::make_unique<FirstFitPolicy>());
  if (name == "spread") return PlacementPolicyPtr(std::make_unique<SpreadPolicy>());
  return Error{fmt::format("unknown policy '{}' (expected one of: {})", name, fmt::join(policy_names(), ", "))};
}

}  // namespace tessera
