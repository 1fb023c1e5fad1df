// The ledger entries a pod bound to this node asks for, read from what Tessera wrote on it at
// binding (adapter/annotations.h): one entry per device of its gpu-index annotation, with the
// request and limit bytes of gpu-memory-request-bytes and gpu-memory-limit-bytes, the resolver
// the user chose (gpu-memory-resolver, default wait) and spec.priority.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpumem/ledger.h"

namespace tessera::gpumem {

struct PodEntries {
  std::vector<EntrySpec> entries;  // none: a pod without GPU memory, finished, or unreadable
  std::string problem;             // why a pod that has GPU memory annotations gets no entry
};

PodEntries entries_for_pod(const nlohmann::json& pod);

}  // namespace tessera::gpumem
