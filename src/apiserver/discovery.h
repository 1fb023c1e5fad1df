// API discovery, as clients walk it before anything else: /version, /api, /apis, /apis/GROUP,
// /api/v1 and /apis/GROUP/VERSION; and the OpenAPI v2 document kubectl fetches for client-side
// validation (/openapi/v2).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apiserver/resource_registry.h"

namespace tessera::apiserver {

// The Kubernetes release whose API this server follows.
inline constexpr const char* kServerGitVersion = "v1.27.0-tessera";

nlohmann::json version_info();
nlohmann::json core_api_versions(const std::string& server_address);  // /api
nlohmann::json api_group_list(const ResourceRegistry& registry);      // /apis
std::optional<nlohmann::json> api_group(const ResourceRegistry& registry, const std::string& group);
// /api/v1 or /apis/GROUP/VERSION; nullopt when nothing is served there.
std::optional<nlohmann::json> api_resource_list(const ResourceRegistry& registry, const std::string& group,
                                                const std::string& version);

// The OpenAPI v2 document: `swagger` and `info` only. With no definitions, kubectl finds no schema
// for any kind and skips client-side validation and falls back to its compiled-in patch
// strategies, which is what it does against servers that publish no schema.
std::string openapi_v2_protobuf();
nlohmann::json openapi_v2_json();

}  // namespace tessera::apiserver
