#include "dashboard/queue_history.h"

#include <set>

namespace tessera::dashboard {

QueueHistory::QueueHistory(size_t capacity, double interval_seconds)
    : capacity_(capacity == 0 ? 1 : capacity), interval_seconds_(interval_seconds) {}

void QueueHistory::record(std::vector<QueueRow>& rows, double now) {
  const bool due = last_sample_at_ < 0 || now - last_sample_at_ >= interval_seconds_;
  std::set<std::string> present;
  for (QueueRow& row : rows) {
    present.insert(row.name);
    std::deque<QueueSample>& samples = samples_[row.name];
    if (due) {
      samples.push_back({now, row.allocated, row.fair_share});
      while (samples.size() > capacity_) samples.pop_front();
    }
    row.history.assign(samples.begin(), samples.end());
  }
  if (due) last_sample_at_ = now;
  std::erase_if(samples_, [&](const auto& entry) { return !present.contains(entry.first); });
}

}  // namespace tessera::dashboard
