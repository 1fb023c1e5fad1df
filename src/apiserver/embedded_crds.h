// Tessera's CustomResourceDefinitions (deploy/crds/queues.yaml and podgroups.yaml), built into
// the binary, as the JSON objects the dev cluster creates at start.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace tessera::apiserver {

// The manifests as written.
std::vector<std::string_view> embedded_crd_manifests();
Result<std::vector<nlohmann::json>> embedded_crds();

}  // namespace tessera::apiserver
