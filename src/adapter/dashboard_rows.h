// The dashboard's rows for one cycle of `tessera scheduler` (dashboard/state_builder.h), with what
// only the adapter knows: the start estimates and the workloads the engine never saw (held), and
// which evictions the API server carried out.
#pragma once

#include <set>
#include <string>

#include "adapter/cycle_decisions.h"
#include "adapter/world_snapshot.h"
#include "dashboard/dashboard_publisher.h"
#include "policy/workload_mix.h"

namespace tessera::adapter {

// `evicted`: the keys of the workloads whose pods the API server evicted this cycle; `mix`: the
// workload mix the cycle's placement policy was made for.
// The whole workloads of `evicted` the cycle evicted, for a cycle that builds no other rows.
std::vector<dashboard::EvictionRow> dashboard_evictions(const Snapshot& snapshot, const CycleResult& result,
                                                        const std::set<std::string>& evicted, double now);

dashboard::CycleRows dashboard_rows(const Snapshot& snapshot, const CycleResult& result, const Decisions& decisions,
                                    const std::set<std::string>& evicted, const WorkloadMix& mix, double now);

}  // namespace tessera::adapter
