// The real server's checks of metadata.labels and metadata.annotations, with its messages: keys
// are qualified names (an optional DNS subdomain prefix and '/', then at most 63 alphanumerics,
// '-', '_' or '.', starting and ending with an alphanumeric), label values at most 63 of the
// same (or empty), and all annotations together, keys and values, at most 256 KiB.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "apiserver/api_error.h"

namespace tessera::apiserver {

inline constexpr size_t kTotalAnnotationSizeLimit = 256 * 1024;

// One cause per problem (field "metadata.labels" or "metadata.annotations"); empty when there
// is none. `metadata` has the shape of an ObjectMeta already (see metadata_shape_problem).
std::vector<StatusCause> label_and_annotation_problems(const nlohmann::json& metadata);

}  // namespace tessera::apiserver
