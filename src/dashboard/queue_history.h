// A bounded ring of GPU samples per queue, for the dashboard's history charts: one sample per
// cycle at most every `interval_seconds`, the last `capacity` kept (an hour at the defaults). A
// queue that is gone is forgotten; one that is new starts empty. Kept by the cycle thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "dashboard/dashboard_state.h"

namespace tessera::dashboard {

class QueueHistory {
 public:
  explicit QueueHistory(size_t capacity = 360, double interval_seconds = 10);

  // Records the rows' allocation and fair share at `now` (when the interval has passed since
  // the last sample) and copies each queue's samples into its row.
  void record(std::vector<QueueRow>& rows, double now);

 private:
  size_t capacity_;
  double interval_seconds_;
  double last_sample_at_ = -1;
  std::map<std::string, std::deque<QueueSample>> samples_;
};

}  // namespace tessera::dashboard
