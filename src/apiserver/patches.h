// The three PATCH formats the server applies: JSON merge patch (RFC 7386), JSON patch (RFC 6902)
// and Kubernetes strategic merge patch.
//
// Strategic merge patch is approximated: the real server reads each list's merge strategy from
// the Go struct tags of the field at its exact path; here a field's strategy is known by its name
// alone (containers, initContainers, volumes and env merge by name, volumeMounts by mountPath,
// ports by containerPort (or port), conditions by type, ownerReferences by uid, finalizers as a
// set), which holds for the objects this server stores. The directives `$patch: replace|delete`
// (in maps and list items), `$setElementOrder/FIELD`, `$deleteFromPrimitiveList/FIELD` and
// `$retainKeys` are honoured; other lists are replaced as in a merge patch.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "apiserver/api_error.h"

namespace tessera::apiserver {

enum class PatchType { kMerge, kJson, kStrategicMerge };

// From a Content-Type header; nullopt for a type the server does not apply.
std::optional<PatchType> patch_type_for(std::string_view content_type);
// The Content-Types accepted, for the 415 message.
inline constexpr std::string_view kPatchContentTypes =
    "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json";

// Applies `body` to `original`. 400 BadRequest when the body does not parse; 422 Invalid when a
// JSON patch operation cannot be applied (a failed test, a missing path).
ApiResult<nlohmann::json> apply_patch(const nlohmann::json& original, PatchType type, std::string_view body);

// The strategic merge of an already parsed patch.
nlohmann::json strategic_merge(const nlohmann::json& original, const nlohmann::json& patch);

}  // namespace tessera::apiserver
