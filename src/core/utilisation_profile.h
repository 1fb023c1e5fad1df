// How busy a workload keeps its GPUs over its run, for the simulator and the simulated nodes'
// GPU metrics (docs/design.md §6): busy throughout, idle after some minutes (a notebook left
// open), bursty (a notebook run now and then), or warming up on the CPU first (data loading).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera {

enum class UtilisationShape : uint8_t { kBusy, kIdleAfter, kBursty, kWarmup };

inline std::string_view utilisation_shape_name(UtilisationShape shape) {
  switch (shape) {
    case UtilisationShape::kBusy:
      return "busy";
    case UtilisationShape::kIdleAfter:
      return "idle_after";
    case UtilisationShape::kBursty:
      return "bursty";
    case UtilisationShape::kWarmup:
      return "warmup";
  }
  return "unknown";
}

inline std::optional<UtilisationShape> parse_utilisation_shape(std::string_view text) {
  for (UtilisationShape shape :
       {UtilisationShape::kBusy, UtilisationShape::kIdleAfter, UtilisationShape::kBursty, UtilisationShape::kWarmup}) {
    if (utilisation_shape_name(shape) == text) return shape;
  }
  return std::nullopt;
}

// GPU utilisation (percent) as a function of run time (seconds since the run started); idle is 0%.
struct UtilisationProfile {
  UtilisationShape shape = UtilisationShape::kBusy;
  double busy_pct = 90;
  // idle_after: busy this long, then idle. warmup: on the CPU (GPU idle) this long, then busy.
  double after_seconds = 0;
  // bursty: busy for burst_seconds at the start of every period_seconds, idle the rest.
  double burst_seconds = 0;
  double period_seconds = 0;

  // Seconds of the first `run_seconds` spent busy.
  double busy_seconds(double run_seconds) const {
    const double t = std::max(0.0, run_seconds);
    switch (shape) {
      case UtilisationShape::kBusy:
        return t;
      case UtilisationShape::kIdleAfter:
        return std::min(t, after_seconds);
      case UtilisationShape::kWarmup:
        return std::max(0.0, t - after_seconds);
      case UtilisationShape::kBursty: {
        if (!(period_seconds > 0)) return t;
        const double periods = std::floor(t / period_seconds);
        return periods * burst_seconds + std::min(t - periods * period_seconds, burst_seconds);
      }
    }
    return t;
  }

  // The mean utilisation over the `window` seconds of run time up to `run_seconds` (the part of it
  // since the start, if the run is younger); with no window (or at the start), the utilisation at
  // that instant.
  double mean_pct(double run_seconds, double window) const {
    const double to = std::max(0.0, run_seconds);
    const double from = std::max(0.0, to - std::max(0.0, window));
    if (to - from < 1e-9) return busy_seconds(to + 1e-3) - busy_seconds(to) > 0 ? busy_pct : 0;
    return busy_pct * (busy_seconds(to) - busy_seconds(from)) / (to - from);
  }
};

}  // namespace tessera
