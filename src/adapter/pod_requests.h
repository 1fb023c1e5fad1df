// A pod's effective request of one resource, as kube-scheduler computes it
// (k8s.io/component-helpers/resource.PodRequests): the larger of the sum over its containers
// (sidecars included) and each init container's request (with the sidecars started before it),
// plus spec.overhead.
#pragma once

#include <cstdint>
#include <string_view>

#include "adapter/object_fields.h"
#include "core/result.h"

namespace tessera::adapter {

// Where a container's amount comes from. CPU and memory: requests, else limits (the API server
// defaults a missing request to the limit, and objects made without it, in tests or by hand,
// must read the same). Extended resources such as nvidia.com/gpu: limits, else requests (the
// API server requires the two to be equal when both are set).
enum class AmountSource : uint8_t { kRequestsThenLimits, kLimitsThenRequests };

// Reads one quantity; an error message says what was expected.
using QuantityParser = Result<int64_t> (*)(std::string_view);

// `fields` reads the Pod. Errors name the container and the quantity.
Result<int64_t> pod_effective_request(const ObjectFields& fields, std::string_view resource, AmountSource source,
                                      QuantityParser parse);

}  // namespace tessera::adapter
