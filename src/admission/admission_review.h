// admission.k8s.io/v1 AdmissionReview: the request the API server sends a mutating webhook and
// the response it expects (the same kind, with response.uid echoing request.uid and the patch as
// base64 JSONPatch).
#pragma once

#include <nlohmann/json.hpp>

#include "admission/gpu_memory_injection.h"
#include "core/result.h"

namespace tessera::admission {

// The review to send back for `review`. A pod that needs no change is allowed with no patch; so is
// anything but a Pod CREATE (the webhook configuration asks for those only, but the answer must not
// depend on it). An error, naming the field, for a body that is no v1 AdmissionReview.
Result<nlohmann::json> review_gpu_memory(const nlohmann::json& review, const GpuMemoryLayout& layout);

}  // namespace tessera::admission
