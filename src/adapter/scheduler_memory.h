// What the adapter remembers between cycles beyond the API server's objects: bindings it made
// that its caches have not yet seen, room being made (victims evicted for a workload that binds
// once they are gone), reservations, and each queue's remembered use. A restarted scheduler
// starts with none of it and loses nothing it needs: an unseen binding is in the API server, a
// workload whose room plan is lost is pending again and finds the freed room in its next cycle,
// one whose reservation is lost makes a new one, and the remembered use is rebuilt from the work
// that runs (usage_of_running_work: it then misses only work that ended before the restart).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tessera::adapter {

// A placement by node name and physical device indices.
struct PodPlacement {
  std::string node;
  std::vector<int> devices;
  int milli_per_device = 0;  // 1000 for whole GPUs, the portion for a fractional pod, 0 without GPUs
};

struct AssumedBinding {
  PodPlacement placement;
  double bound_at = 0;  // Unix seconds
};

struct RoomPlan {
  std::map<std::string, PodPlacement> bindings;  // pod key -> where it goes once the room is free
  std::set<std::string> victims;                 // pod keys evicted for it
  double created_at = 0;
};

// Nodes held for a waiting workload while they drain (docs/design.md §4 step 2), by name.
struct KeptReservation {
  std::vector<std::string> nodes;
  double since = 0;  // Unix seconds
};

struct SchedulerMemory {
  std::map<std::string, AssumedBinding> assumed;  // pod key -> binding not yet seen in the cache
  std::map<std::string, RoomPlan> plans;          // workload key -> room being made for it
  // Workload key -> until when no eviction is tried for it again, after one was refused (429):
  // a PodDisruptionBudget that forbids it now will likely forbid it in the next cycle too.
  std::map<std::string, double> evictions_refused_until;
  // Workload key -> the nodes reserved for it, handed from one cycle to the next. A restarted
  // scheduler reserves again, for the same workload, once its wait passes the threshold.
  std::map<std::string, KeptReservation> reservations;
  // Time-based fairness (--usage-penalty): queue name -> resource name -> the remembered use
  // (`recent`) and what the queue held after the last cycle (`held`), as of `usage_at` (Unix
  // seconds). Empty until the first cycle with the penalty on, which rebuilds it.
  using QueueAmounts = std::map<std::string, std::map<std::string, double>>;
  QueueAmounts recent_usage;
  QueueAmounts held;
  double usage_at = 0;
  bool usage_known = false;
};

}  // namespace tessera::adapter
