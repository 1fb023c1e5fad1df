#include "adapter/dashboard_rows.h"

#include <string_view>
#include <unordered_map>

#include "dashboard/state_builder.h"

namespace tessera::adapter {

std::vector<dashboard::EvictionRow> dashboard_evictions(const Snapshot& snapshot, const CycleResult& result,
                                                        const std::set<std::string>& evicted, double now) {
  const WorkloadMix no_mix;
  const dashboard::CycleFacts facts{*snapshot.cluster,
                                    snapshot.workloads,
                                    *snapshot.tree,
                                    *snapshot.meter,
                                    result,
                                    snapshot.workload_keys,
                                    no_mix,
                                    now};
  return dashboard::eviction_rows(facts, [&](const std::string& key) { return evicted.contains(key); });
}

dashboard::CycleRows dashboard_rows(const Snapshot& snapshot, const CycleResult& result, const Decisions& decisions,
                                    const std::set<std::string>& evicted, const WorkloadMix& mix, double now) {
  const dashboard::CycleFacts facts{
      *snapshot.cluster, snapshot.workloads, *snapshot.tree, *snapshot.meter, result, snapshot.workload_keys, mix, now};
  dashboard::CycleRows rows;
  rows.now = now;
  rows.queues = dashboard::queue_rows(facts);
  rows.nodes = dashboard::node_rows(facts);
  std::unordered_map<std::string_view, WorkloadId> ids;
  for (size_t id = 0; id < snapshot.workload_keys.size(); ++id) {
    ids.emplace(snapshot.workload_keys[id], static_cast<WorkloadId>(id));
  }
  rows.pending.reserve(decisions.waiting.size());
  for (const WaitingWorkload& waiting : decisions.waiting) {
    dashboard::WorkloadRow row{waiting.workload_key, "", 0, waiting.reason, waiting.message, waiting.estimated_start,
                               waiting.estimate};
    if (auto id = ids.find(waiting.workload_key); id != ids.end()) {
      row.queue = snapshot.tree->spec(snapshot.workloads[id->second].queue).name;
      row.gpus = dashboard::workload_gpus(facts, id->second);
    }
    rows.pending.push_back(std::move(row));
  }
  rows.evictions = dashboard_evictions(snapshot, result, evicted, now);
  return rows;
}

}  // namespace tessera::adapter
