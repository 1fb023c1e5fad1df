// The step the tessera policy rounds its scores to (tessera_policy.h), and the rounding.
#pragma once

#include <cmath>

#include "core/rounding.h"

namespace tessera {

// Growths of T within a tenth of a GPU count as equal, and the engine's tie-break (the lowest
// index) decides between them: among nearly equal choices the policy packs in node order, as
// first-fit does, instead of following differences too small to mean anything. FGD's integer
// score does the same (its quantum is about 40 milli-GPU). Chosen on the tuning lists of
// scripts/packing-generalisation.sh, where 40 to 250 milli did alike and 0 lost to first-fit on
// lists with many multi-GPU and model-constrained pods; docs/results.md has the held-out result.
inline constexpr double kGrowthQuantumMilli = 100;

inline double quantised(double score) { return rounded(score / kGrowthQuantumMilli) * kGrowthQuantumMilli; }

// quantised(value) - rounded_score, bit for bit, where rounded_score is quantised of some value:
// zero without the division where `value` lies inside rounded_score's step by a margin far above
// the division's error (a hundred-thousandth of a step, where that error is under a billionth for
// any score under 1e9), as it mostly does: the engine asks this for every node group a search visits.
inline double quantised_change(double value, double rounded_score) {
  constexpr double kHalfStep = kGrowthQuantumMilli / 2;
  constexpr double kMargin = kGrowthQuantumMilli * 1e-5;
  if (std::abs(rounded_score) < 1e9 && value > rounded_score - kHalfStep + kMargin &&
      value < rounded_score + kHalfStep - kMargin) {
    // quantised(value) is rounded_score, but for the sign of a zero: quantised keeps value's.
    return rounded_score == 0 ? std::copysign(0.0, value) - rounded_score : 0.0;
  }
  return quantised(value) - rounded_score;
}

}  // namespace tessera
