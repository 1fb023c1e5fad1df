// How reports group pods: "CPU only", "GPU share", "1 GPU", "2 GPUs", ...
#pragma once

#include <string>

#include "core/pod.h"

namespace tessera {

std::string pod_type_label(const PodSpec& pod);

}  // namespace tessera
