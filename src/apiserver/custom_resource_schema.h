// The structural schema of a custom resource (a CRD version's openAPIV3Schema) applied as the
// real server applies it on every write: unknown fields pruned (unless
// x-kubernetes-preserve-unknown-fields), defaults filled, and values checked for type, enum,
// minimum/maximum and required fields (422 Invalid, worded like the real server). Formats,
// patterns, CEL rules and the other keywords are not checked.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/api_error.h"
#include "apiserver/resource_type.h"

namespace tessera::apiserver {

// `object` pruned and defaulted, or 422 Invalid. A type without a schema passes unchanged.
ApiResult<nlohmann::json> apply_structural_schema(const ResourceType& type, nlohmann::json object);

}  // namespace tessera::apiserver
