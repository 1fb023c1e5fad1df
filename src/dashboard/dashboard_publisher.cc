#include "dashboard/dashboard_publisher.h"

#include "dashboard/state_builder.h"

namespace tessera::dashboard {

DashboardPublisher::DashboardPublisher(QueueHistory history, size_t kept_evictions)
    : history_(std::move(history)),
      kept_evictions_(kept_evictions),
      current_(std::make_shared<const DashboardState>()) {}

void DashboardPublisher::add_evictions(std::vector<EvictionRow> evictions) {
  std::lock_guard lock(writer_mutex_);
  for (EvictionRow& eviction : evictions) evictions_.push_front(std::move(eviction));
  while (evictions_.size() > kept_evictions_) evictions_.pop_back();
}

void DashboardPublisher::publish(CycleRows rows) {
  add_evictions(std::move(rows.evictions));
  auto state = std::make_shared<DashboardState>();
  {
    std::lock_guard lock(writer_mutex_);
    history_.record(rows.queues, rows.now);
    state->cycle = ++cycles_;
    state->evictions.assign(evictions_.begin(), evictions_.end());
  }
  state->cycle_at = rows.now;
  state->overview = overview_of(rows.nodes, rows.queues, rows.pending);
  state->queues = std::move(rows.queues);
  state->nodes = std::move(rows.nodes);
  state->pending = std::move(rows.pending);
  std::shared_ptr<const DashboardState> published = std::move(state);
  std::lock_guard lock(current_mutex_);
  current_.swap(published);
  // The old picture is freed here unless a reader still holds it, then by that reader.
}

std::shared_ptr<const DashboardState> DashboardPublisher::current() const {
  std::lock_guard lock(current_mutex_);
  return current_;
}

}  // namespace tessera::dashboard
