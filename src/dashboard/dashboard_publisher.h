// Where the cycle thread hands the dashboard a new picture and HTTP threads read the latest:
// each cycle's DashboardState is built whole, then swapped in under a mutex as a pointer to an
// immutable value, so a reader holds a consistent picture for as long as it renders it, and the
// cycle never waits on a slow reader.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "dashboard/dashboard_state.h"
#include "dashboard/queue_history.h"

namespace tessera::dashboard {

struct CycleRows {
  std::vector<QueueRow> queues;
  std::vector<NodeRow> nodes;
  std::vector<WorkloadRow> pending;
  std::vector<EvictionRow> evictions;  // this cycle's
  double now = 0;
};

class DashboardPublisher {
 public:
  explicit DashboardPublisher(QueueHistory history = QueueHistory(), size_t kept_evictions = 200);

  // Adds the queues' history and the recent evictions, and makes the result current.
  void publish(CycleRows rows);
  // Keeps the evictions of a cycle that published no picture, for the next picture to show.
  void add_evictions(std::vector<EvictionRow> evictions);
  // The latest picture; an empty one (cycle 0) before the first cycle.
  std::shared_ptr<const DashboardState> current() const;

 private:
  std::mutex writer_mutex_;  // publish's own state, in case two threads ever publish
  QueueHistory history_;
  std::deque<EvictionRow> evictions_;  // newest first
  size_t kept_evictions_;
  int64_t cycles_ = 0;

  mutable std::mutex current_mutex_;
  std::shared_ptr<const DashboardState> current_;
};

}  // namespace tessera::dashboard
