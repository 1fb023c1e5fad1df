// The ledger as Prometheus metrics (text format 0.0.4): per device its capacity, use, committed
// sum and peak; per pod and device its use, request, limit, peak, and counts of grants, waits,
// waits that ran out, refusals past the limit and evictions by the priority resolver.
#pragma once

#include <cstdint>
#include <string>

#include "gpumem/ledger.h"

namespace tessera::gpumem {

struct AgentCounters {
  std::uint64_t reclaimed_bytes = 0;  // taken back from processes that ended without freeing
  std::uint64_t syncs = 0;
  std::uint64_t pod_problems = 0;  // pods whose annotations could not be read, at the last sync
};

std::string ledger_metrics(Ledger& ledger, const AgentCounters& counters);

}  // namespace tessera::gpumem
