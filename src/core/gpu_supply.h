// The cluster's GPUs by model: what each model has in all and what of it is free. The engine
// keeps it in step with every binding, so a placement can weigh how much of a model is left
// cluster-wide (which no single node's state shows).
#pragma once

#include <array>
#include <cstdint>

#include "core/gpu_model.h"

namespace tessera {

struct GpuSupply {
  std::array<int64_t, GpuModelSet::kMaxModels> capacity_milli{};
  std::array<int64_t, GpuModelSet::kMaxModels> free_milli{};
  // The memory of one device of the model (the first seen), to read GPU-memory requests with.
  std::array<int64_t, GpuModelSet::kMaxModels> device_memory_bytes{};
  int64_t free_total_milli = 0;
};

}  // namespace tessera
