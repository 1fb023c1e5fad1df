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

#include <cstdint>
#include <span>

#include "core/gpu_supply.h"

namespace tessera {

// The change in sum_g N(g)^2 over the model's devices when `share_milli` goes on a device of it
// with `free_milli` free (share_milli <= free_milli <= 1000). With `class_starts` (ascending),
// gaps are counted by class instead: a class from each start to the next, gaps below the first
// in none.
int64_t sum_of_squares_change(const GpuSupply& supply, GpuModelId model, int free_milli, int share_milli,
                              std::span<const int> class_starts = {});

}  // namespace tessera
