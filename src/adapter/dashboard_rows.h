// The dashboard's rows for one cycle of `tessera scheduler` (dashboard/state_builder.h), with what
// only the adapter knows: the start estimates and the workloads the engine never saw (held), and
// which evictions the API server carried out.
#pragma once

#include <set>
#include <string>

#include "adapter/cycle_decisions.h"
#include "adapter/world_snapshot.h"
#include "dashboard/dashboard_publisher.h"

namespace tessera::adapter {

// `evicted`: the keys of the workloads whose pods the API server evicted this cycle.
dashboard::CycleRows dashboard_rows(const Snapshot& snapshot, const CycleResult& result, const Decisions& decisions,
                                    const std::set<std::string>& evicted, double now);

}  // namespace tessera::adapter
