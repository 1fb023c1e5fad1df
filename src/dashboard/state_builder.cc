#include "dashboard/state_builder.h"

#include <algorithm>

#include "core/node_pool.h"
#include "policy/fragmentation.h"
#include "scheduler/pending_reason.h"

namespace tessera::dashboard {

namespace {

constexpr double kMilli = 1000.0;

double gpus_of(const QueueTree& tree, const std::vector<ResourceVector>& amounts, QueueIndex queue) {
  const auto gpu = tree.resources().find(kGpuResource);
  if (!gpu || queue >= amounts.size()) return 0;
  return resource_at(amounts[queue], *gpu);
}

// Each queue's position in the depth-first order the rows are in.
std::vector<int32_t> row_of_queue(const QueueTree& tree) {
  std::vector<int32_t> rows(tree.size(), -1);
  const std::vector<QueueIndex> order = tree.depth_first();
  for (size_t row = 0; row < order.size(); ++row) rows[order[row]] = static_cast<int32_t>(row);
  return rows;
}

void add_holder(DeviceUse& device, int32_t queue, int32_t milli) {
  for (DeviceHolder& holder : device.holders) {
    if (holder.queue == queue) {
      holder.milli += milli;
      return;
    }
  }
  device.holders.push_back({queue, milli});
}

}  // namespace

std::vector<QueueRow> queue_rows(const CycleFacts& facts) {
  const QueueTree& tree = facts.queues;
  const CycleResult& result = facts.result;
  std::vector<int> running(tree.size(), 0), pending(tree.size(), 0);
  for (WorkloadId id : facts.workloads.active()) {
    const QueueIndex leaf = facts.workloads[id].queue;
    const bool is_running = facts.workloads.is_running(id, facts.cluster);
    if (!is_running && !facts.workloads.is_pending(id, facts.cluster)) continue;
    std::vector<int>& counts = is_running ? running : pending;
    for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree.parent(queue)) ++counts[queue];
  }
  const auto gpu = tree.resources().find(kGpuResource);
  std::vector<QueueRow> rows;
  for (QueueIndex queue : tree.depth_first()) {
    const QueueSpec& spec = tree.spec(queue);
    QueueRow row;
    row.name = spec.name;
    row.parent = spec.parent;
    row.depth = tree.depth(queue);
    row.leaf = tree.is_leaf(queue);
    if (gpu) {
      row.deserved = spec.quota_for(*gpu).deserved;
      row.limit = spec.quota_for(*gpu).limit;
    }
    row.fair_share = gpus_of(tree, result.shares.fair_share, queue);
    row.requested = gpus_of(tree, result.shares.demand, queue);
    row.allocated = gpus_of(tree, result.allocated_after, queue);
    row.running = running[queue];
    row.pending = pending[queue];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<NodeRow> node_rows(const CycleFacts& facts) {
  const ClusterState& cluster = facts.cluster;
  const std::vector<int32_t> queue_row = row_of_queue(facts.queues);
  std::vector<NodeRow> rows(static_cast<size_t>(cluster.node_count()));
  for (NodeIndex node = 0; node < cluster.node_count(); ++node) {
    const NodeSpec& spec = cluster.node_spec(node);
    NodeRow& row = rows[static_cast<size_t>(node)];
    row.name = spec.name;
    if (!spec.gpus.empty()) row.model = cluster.spec().models.name(spec.gpus.front().model);
    row.pool = std::string(node_pool(spec.labels));
    row.schedulable = spec.schedulable;
    row.devices.resize(spec.gpus.size());
  }
  for (WorkloadId id : facts.workloads.active()) {
    const int32_t queue = queue_row[facts.workloads[id].queue];
    for (PodId pod : facts.workloads[id].pods) {
      const auto& binding = cluster.binding(pod);
      if (!binding) continue;
      NodeRow& row = rows[static_cast<size_t>(binding->node)];
      for (int16_t device : binding->devices) {
        if (static_cast<size_t>(device) < row.devices.size())
          add_holder(row.devices[static_cast<size_t>(device)], queue, binding->milli_per_device);
      }
    }
  }
  for (NodeIndex node = 0; node < cluster.node_count(); ++node) {
    NodeRow& row = rows[static_cast<size_t>(node)];
    const NodeState& state = cluster.node_state(node);
    // What the engine counts as used but no Tessera workload holds: other schedulers' pods.
    for (size_t device = 0; device < row.devices.size(); ++device) {
      int32_t held = 0;
      for (const DeviceHolder& holder : row.devices[device].holders) held += holder.milli;
      const int32_t foreign = state.gpu_used_milli[device] - held;
      if (foreign > 0) add_holder(row.devices[device], -1, foreign);
    }
    if (!row.devices.empty())
      row.fragmented = expected_fragmentation(cluster.node_spec(node), state, facts.mix) / kMilli;
  }
  return rows;
}

Overview overview_of(const std::vector<NodeRow>& nodes, const std::vector<QueueRow>& queues,
                     const std::vector<WorkloadRow>& pending) {
  Overview overview;
  overview.nodes = static_cast<int>(nodes.size());
  int64_t held = 0;
  for (const NodeRow& node : nodes) {
    overview.gpus += static_cast<double>(node.devices.size());
    overview.fragmented += node.fragmented;
    for (const DeviceUse& device : node.devices) {
      for (const DeviceHolder& holder : device.holders) held += holder.milli;
    }
  }
  overview.allocated = static_cast<double>(held) / kMilli;
  for (const QueueRow& queue : queues) {
    if (queue.depth == 0) overview.running += queue.running;
  }
  overview.pending = static_cast<int>(pending.size());
  for (const WorkloadRow& row : pending) ++overview.pending_by_reason[row.reason];
  return overview;
}

double workload_gpus(const CycleFacts& facts, WorkloadId id) {
  const auto gpu = facts.queues.resources().find(kGpuResource);
  if (!gpu) return 0;
  double gpus = 0;
  for (PodId pod : facts.workloads[id].gang()) gpus += resource_at(facts.meter.pending(facts.cluster.pod(pod)), *gpu);
  return gpus;
}

std::vector<WorkloadRow> pending_rows(const CycleFacts& facts) {
  std::vector<WorkloadRow> rows;
  rows.reserve(facts.result.pending.size());
  for (const PendingWorkload& pending : facts.result.pending) {
    const Workload& workload = facts.workloads[pending.workload];
    rows.push_back({facts.workload_keys[static_cast<size_t>(pending.workload)], facts.queues.spec(workload.queue).name,
                    workload_gpus(facts, pending.workload), std::string(pending_code_name(pending.reason.code)),
                    describe(pending.reason, facts.queues), std::nullopt, ""});
  }
  return rows;
}

std::vector<EvictionRow> eviction_rows(const CycleFacts& facts,
                                       const std::function<bool(const std::string&)>& carried_out) {
  std::vector<EvictionRow> rows;
  for (const Eviction& eviction : facts.result.evictions) {
    if (!eviction.whole_workload) continue;
    const std::string& key = facts.workload_keys[static_cast<size_t>(eviction.workload)];
    if (!carried_out(key)) continue;
    rows.push_back({facts.now, key, facts.queues.spec(facts.workloads[eviction.workload].queue).name,
                    std::string(action_name(eviction.action)),
                    eviction.beneficiary >= 0 ? facts.workload_keys[static_cast<size_t>(eviction.beneficiary)] : "",
                    static_cast<int>(eviction.pods.size()), static_cast<double>(eviction.gpu_milli) / kMilli});
  }
  return rows;
}

}  // namespace tessera::dashboard
