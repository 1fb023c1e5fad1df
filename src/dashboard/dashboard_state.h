// What the dashboard shows (docs/dashboard.md), as values: one immutable DashboardState per
// cycle, built on the cycle thread and read by any number of HTTP threads. Names, not engine ids,
// so that nothing here refers back into the cycle's snapshot once it is gone.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::dashboard {

// One sample of a queue's GPUs, one per cycle at most every QueueHistory's interval.
struct QueueSample {
  double at = 0;  // Unix seconds
  double allocated = 0;
  double fair_share = 0;
};

struct QueueRow {
  std::string name;
  std::string parent;  // empty: a top-level queue
  int depth = 0;       // 0 for a top-level queue
  bool leaf = true;
  // GPUs: deserved quota, the cycle's fair share, held at the cycle's end, the limit (none:
  // unlimited), and what its running plus pending work asks for.
  double deserved = 0;
  double fair_share = 0;
  double allocated = 0;
  std::optional<double> limit;
  double requested = 0;
  int running = 0;  // workloads (leaves only; inner queues sum their leaves)
  int pending = 0;
  std::vector<QueueSample> history;  // oldest first
};

// One GPU device: the milli-GPU each queue's pods hold on it. Queue -1 stands for pods Tessera
// does not schedule (another scheduler's), whose use the node shows but no queue owns.
struct DeviceHolder {
  int32_t queue = -1;  // index into DashboardState::queues
  int32_t milli = 0;
};
struct DeviceUse {
  std::vector<DeviceHolder> holders;
};

struct NodeRow {
  std::string name;
  std::string model;  // GPU model label; empty for a node without GPUs
  std::string pool;
  bool schedulable = true;
  double fragmented = 0;  // free GPUs the pending mix cannot use (FGD), in GPUs
  std::vector<DeviceUse> devices;
};

struct WorkloadRow {
  std::string key;  // "namespace/name"
  std::string queue;
  double gpus = 0;
  std::string reason;                     // a code: QueueLimit, Unschedulable, ...
  std::string message;                    // the sentence
  std::optional<double> estimated_start;  // Unix seconds
  std::string estimate;                   // its cause, or why there is none
};

struct EvictionRow {
  double at = 0;
  std::string workload;
  std::string queue;
  std::string action;  // reclaim, preempt, consolidate
  std::string made_room_for;
  int pods = 0;
  double gpus = 0;
};

struct Overview {
  int nodes = 0;
  double gpus = 0;
  double allocated = 0;
  double fragmented = 0;  // sum over nodes of NodeRow::fragmented
  int running = 0;
  int pending = 0;
  std::map<std::string, int> pending_by_reason;
};

struct DashboardState {
  double cycle_at = 0;  // Unix seconds of the cycle it shows; 0: no cycle has run yet
  int64_t cycle = 0;    // pictures published since the scheduler started (at most one a cycle)
  Overview overview;
  std::vector<QueueRow> queues;  // each after its parent, depth first
  std::vector<NodeRow> nodes;
  std::vector<WorkloadRow> pending;    // in the order the cycle would try them
  std::vector<EvictionRow> evictions;  // newest first
};

}  // namespace tessera::dashboard
