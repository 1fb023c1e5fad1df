// The Sum-of-Squares rule for online bin packing with discrete item sizes (Csirik, Johnson,
// Kenyon, Orlin, Shor and Weber, "On the Sum-of-Squares algorithm for bin packing", J. ACM 2006),
// read on GPU devices: N(g) is the number of devices of a model with a partial share g free
// (0 < g < 1000 milli; idle and full devices are not counted), and a fraction of s milli goes to
// the device that grows sum_g N(g)^2 least. On a device with g free that is
//   2 (N(g - s) - N(g)) + 2      (g - s > 0)
//   1 - 2 N(g)                   (g = s: an exact fit closes the gap)
//   2 N(1000 - s) + 1            (an idle device opens one)
// The rule keeps the gaps of every size few and alike in number, so each size of fraction that
// comes finds one it fills; its expected waste grows as the square root of the pods placed on
// perfectly packable distributions, where best fit's grows linearly. The counts are cluster-wide
// and change with every placement anywhere (GpuSupply::partial_tree, kept by the engine).
//
// The trace's portions are not few sizes on a coarse grid: counted by exact milli, most gap sizes
// hold a device or two and the squares say little. Counted by class — the gaps that hold the same
// largest portion of the mix are alike to every pod that comes — they measure what the rule is
// about, and gaps below the smallest portion, which no pod can fill, leave the count as full
// devices do.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/gpu_supply.h"

namespace tessera {

// Gap classes: a class from each start to the next (the last to an idle device's 1000), gaps
// below the first start in none. Without starts every exact share is its own class. Looked up
// in a table, as the rule asks for every node group a fraction is scored on.
class GapClasses {
 public:
  GapClasses();  // by exact share
  explicit GapClasses(std::span<const int> starts);

  // The class of a device with `free_milli` free, as [low, high) milli, or low < 0 for none
  // (idle and full devices too).
  struct Class {
    int low = -1;
    int high = -1;
  };
  Class of(int free_milli) const {
    if (free_milli <= 0 || free_milli >= kMilliPerGpu) return {};
    const size_t at = static_cast<size_t>(free_milli);
    return {low_[at], high_[at]};
  }

 private:
  std::array<int16_t, kMilliPerGpu> low_{};
  std::array<int16_t, kMilliPerGpu> high_{};
};

// The change in sum_g N(g)^2 over the model's devices when `share_milli` goes on a device of it
// with `free_milli` free (share_milli <= free_milli <= 1000), gaps counted by `classes`.
int64_t sum_of_squares_change(const GpuSupply& supply, GpuModelId model, int free_milli, int share_milli,
                              const GapClasses& classes = GapClasses());

}  // namespace tessera
