// Wall-clock seconds on the monotonic clock, for the figures the bench commands print.
#pragma once

#include <chrono>

namespace tessera {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace tessera
