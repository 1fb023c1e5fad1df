#include "kube/backoff.h"

#include <algorithm>

namespace tessera::kube {

Backoff::Backoff(double initial_seconds, double max_seconds)
    : initial_(std::max(initial_seconds, 0.001)),
      max_(std::max(max_seconds, initial_)),
      current_(initial_),
      random_(std::random_device{}()) {}

double Backoff::next_delay_seconds() {
  const double delay = std::uniform_real_distribution<double>(current_ / 2, current_)(random_);
  current_ = std::min(current_ * 2, max_);
  return delay;
}

void Backoff::reset() { current_ = initial_; }

}  // namespace tessera::kube
