// What a GPU-memory pod needs to be governed on its node (docs/gpu-memory.md §Deploying): the
// interposer preloaded into each container, the variables it reads (the pod's own values through
// the downward API, so that the annotations Tessera writes at binding reach the container), and
// the two host folders the node agent fills. A binding cannot change a pod's spec, so a mutating
// admission webhook adds them when the pod is created.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tessera::admission {

// Where the node agent (deploy/gpu-agent.yaml) puts the interposer and the ledger on the host.
struct GpuMemoryLayout {
  std::string library_dir = "/var/lib/tessera-gpumem/lib";
  std::string library_name = "libtessera-gpumem.so";
  std::string ledger_dir = "/var/run/tessera-gpumem";
  std::string ledger_name = "ledger";
};

// The volumes' names, as the docs' example for pods written by hand has them.
inline constexpr const char* kLibraryVolume = "tessera-gpumem-lib";
inline constexpr const char* kLedgerVolume = "tessera-gpumem-ledger";

// A pod is injected when it names schedulerName: tessera and asks for GPU memory
// (scheduling.tessera.dev/gpu-memory).
bool wants_gpu_memory(const nlohmann::json& pod);

struct Injection {
  nlohmann::json patch = nlohmann::json::array();  // RFC 6902 operations; empty: nothing to change
  std::vector<std::string> warnings;               // what was left as the pod had it, and why
};

// The patch that injects `pod` (a Pod object as JSON). Empty for a pod that does not want GPU
// memory. In each container and init container a variable the pod already sets, a volume it already mounts or a path
// it already mounts something at is kept as it is (the pod's own choice wins), except LD_PRELOAD
// given as a value, which gets the interposer in front of the pod's libraries; so a pod already
// injected gets an empty patch, and one that gained a container since (another webhook, on
// reinvocation) gets the injection in that container only.
Injection gpu_memory_injection(const nlohmann::json& pod, const GpuMemoryLayout& layout);

}  // namespace tessera::admission
