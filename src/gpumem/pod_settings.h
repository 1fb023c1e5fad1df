// What a GPU process learns about its pod from its environment (set by the pod spec and by the
// `gpu-env` lines Tessera writes at binding; docs/gpu-memory.md §Environment):
//   TESSERA_POD_UID                 the pod's UID (downward API), the key of its ledger entries
//   TESSERA_GPU_MEMORY_LIMIT        bytes; with it the process can create its entry itself when
//   TESSERA_GPU_MEMORY_REQUEST      the agent has not yet (the agent's numbers win once it writes)
//   TESSERA_GPU_MEMORY_RESOLVER     wait | priority | swap
//   TESSERA_POD_PRIORITY, TESSERA_POD_NAME
//   NVIDIA_VISIBLE_DEVICES          maps the process's device ordinals to the node's indices
//   TESSERA_GPUMEM_LEDGER           the ledger file (default /var/run/tessera-gpumem/ledger)
//   TESSERA_GPU_DEVICE_MEMORY       a device's capacity when no agent set one (default: the driver's)
//   TESSERA_GPUMEM_WAIT_TIMEOUT_MS  how long an allocation may wait on collision (default 30000)
//   TESSERA_GPU_MEMORY_SWAP_SLICE_MS  a swap pod's time slice while others wait (default 10000)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpumem/ledger_layout.h"

namespace tessera::gpumem {

inline constexpr const char* kDefaultLedgerPath = "/var/run/tessera-gpumem/ledger";

struct PodSettings {
  std::string ledger_path = kDefaultLedgerPath;
  std::string uid;
  std::string name;
  std::optional<std::uint64_t> limit;  // absent: only the agent's entry (if any) governs the pod
  std::uint64_t request = 0;
  Resolver resolver = Resolver::kWait;
  std::int32_t priority = 0;
  std::vector<int> visible_devices;  // node index per ordinal; empty: the ordinal is the index
  std::uint64_t device_memory = 0;   // 0: ask the driver
  std::int64_t wait_timeout_ns = std::int64_t{30} * 1000000000;
  std::int64_t swap_slice_ns = -1;    // negative: not set (the entry keeps its own, or the default)
  std::vector<std::string> problems;  // values that could not be read, each naming the variable
};

using EnvironmentLookup = std::function<const char*(const char*)>;

PodSettings read_pod_settings(const EnvironmentLookup& lookup);

// The node device index of a process's device ordinal.
int node_device(const PodSettings& settings, int ordinal);

}  // namespace tessera::gpumem
