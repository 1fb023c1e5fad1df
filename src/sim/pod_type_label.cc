#include "sim/pod_type_label.h"

#include <fmt/format.h>

namespace tessera {

std::string pod_type_label(const PodSpec& pod) {
  switch (pod.gpu.kind) {
    case GpuRequest::Kind::kNone:
      return "CPU only";
    case GpuRequest::Kind::kPortion:
    case GpuRequest::Kind::kMemory:
      return "GPU share";
    case GpuRequest::Kind::kWhole:
      return pod.gpu.whole_gpus == 1 ? "1 GPU" : fmt::format("{} GPUs", pod.gpu.whole_gpus);
  }
  return "other";
}

}  // namespace tessera
