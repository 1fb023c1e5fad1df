// The cluster's GPUs by model: what each model has in all and what of it is free. The engine
// keeps it in step with every binding, so a placement can weigh how much of a model is left
// cluster-wide (which no single node's state shows).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/gpu_model.h"
#include "core/gpu_request.h"

namespace tessera {

struct GpuSupply {
  std::array<int64_t, GpuModelSet::kMaxModels> capacity_milli{};
  std::array<int64_t, GpuModelSet::kMaxModels> free_milli{};
  // The memory of one device of the model (the first seen), to read GPU-memory requests with.
  std::array<int64_t, GpuModelSet::kMaxModels> device_memory_bytes{};
  int64_t free_total_milli = 0;
  // The cluster's allocatable CPU, to tell whether GPUs or CPU run out first.
  int64_t cpu_capacity_milli = 0;
  // How many devices of each model have each partial share free (0 < free < 1000 milli; idle and
  // full devices are not counted): the gaps fractional pods can fill, at
  // [model * kMilliPerGpu + free milli]. Sized for the cluster's models; empty: none counted.
  std::vector<int32_t> partial_devices;

  int32_t partial_count(GpuModelId model, int free_milli) const {
    const size_t slot = static_cast<size_t>(model) * kMilliPerGpu + static_cast<size_t>(free_milli);
    return free_milli > 0 && free_milli < kMilliPerGpu && slot < partial_devices.size() ? partial_devices[slot] : 0;
  }
  // Counts a device of the model whose used share went from `was` to `now` milli.
  void move_partial(GpuModelId model, int was_used_milli, int now_used_milli) {
    auto count = [&](int used, int32_t change) {
      const int free_milli = kMilliPerGpu - used;
      if (free_milli <= 0 || free_milli >= kMilliPerGpu) return;
      const size_t slot = static_cast<size_t>(model) * kMilliPerGpu + static_cast<size_t>(free_milli);
      if (slot >= partial_devices.size()) partial_devices.resize((static_cast<size_t>(model) + 1) * kMilliPerGpu, 0);
      partial_devices[slot] += change;
    };
    count(was_used_milli, -1);
    count(now_used_milli, 1);
  }
};

}  // namespace tessera
