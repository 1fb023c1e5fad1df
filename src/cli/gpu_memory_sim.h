// `tessera sim --mode gpu-memory`: inference pods that ask for GPU memory as a request and a limit
// against pods that reserve their peak (sim/gpu_memory_burst.h, docs/gpu-memory-sim.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace tessera {

struct GpuMemorySimFlags {
  std::string requests = "builtin:azure-llm-conv-2023";
  std::string ratios = "1,1.25,1.5,2";
  double max_collision_pct = 1;
  int nodes = 16;
};

void add_gpu_memory_flags(CLI::App& sim, GpuMemorySimFlags& flags);

// Tunes on seeds first_seed.. (seeds of them), reports on the next seeds; prints the tables.
int run_gpu_memory_sim(const GpuMemorySimFlags& flags, int seeds, uint64_t first_seed);

}  // namespace tessera
