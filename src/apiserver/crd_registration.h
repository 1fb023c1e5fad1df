// CustomResourceDefinitions: what a CRD makes the server serve (one resource type per served
// version, with its scope, names, status subresource and printer columns), and the status the
// real server's controllers give a CRD once its names are accepted (Established=True).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/resource_type.h"

namespace tessera::apiserver {

// 422 Invalid, worded as the real server words it, when the CRD is not one it would accept.
ApiResult<std::vector<ResourceType>> custom_resource_types(const nlohmann::json& crd);

// The CRD with names defaulted (singular, listKind) and status conditions NamesAccepted and
// Established True, acceptedNames and storedVersions.
nlohmann::json with_established_status(nlohmann::json crd, const std::string& now);

}  // namespace tessera::apiserver
