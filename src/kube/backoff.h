// Exponential backoff with jitter between failed attempts: initial, doubling, capped at max,
// each delay drawn from [delay/2, delay] so that many clients failing together spread out.
#pragma once

#include <random>

namespace tessera::kube {

class Backoff {
 public:
  Backoff(double initial_seconds, double max_seconds);

  double next_delay_seconds();  // and doubles the next one
  void reset();                 // after a success

 private:
  double initial_;
  double max_;
  double current_;
  std::mt19937_64 random_;
};

}  // namespace tessera::kube
