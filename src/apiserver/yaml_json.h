// YAML to JSON, for the CRD manifests built into the binary and for request bodies sent as
// application/yaml. Plain scalars are typed as YAML 1.2's core schema types them (null, booleans,
// integers, floats); quoted ones stay strings.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace tessera::apiserver {

Result<nlohmann::json> yaml_to_json(std::string_view text);
// Every document of a multi-document stream (---), empty ones left out.
Result<std::vector<nlohmann::json>> yaml_documents_to_json(std::string_view text);

}  // namespace tessera::apiserver
