#include "policy/sum_of_squares.h"

#include <algorithm>

namespace tessera {

GapClasses::GapClasses() {
  for (int free = 1; free < kMilliPerGpu; ++free) {
    low_[static_cast<size_t>(free)] = static_cast<int16_t>(free);
    high_[static_cast<size_t>(free)] = static_cast<int16_t>(free + 1);
  }
}

GapClasses::GapClasses(std::span<const int> starts) {
  for (int free = 1; free < kMilliPerGpu; ++free) {
    const auto above = std::upper_bound(starts.begin(), starts.end(), free);
    const bool in_none = above == starts.begin();
    low_[static_cast<size_t>(free)] = static_cast<int16_t>(in_none ? -1 : *(above - 1));
    const int next = above == starts.end() ? kMilliPerGpu : *above;
    high_[static_cast<size_t>(free)] = static_cast<int16_t>(in_none ? -1 : next);
  }
}

int64_t sum_of_squares_change(const GpuSupply& supply, GpuModelId model, int free_milli, int share_milli,
                              const GapClasses& classes) {
  // (N - 1)^2 - N^2 for the class left, (N + 1)^2 - N^2 for the class joined; neither for idle or full.
  const GapClasses::Class left = classes.of(free_milli);
  const GapClasses::Class joined = classes.of(free_milli - share_milli);
  if (left.low == joined.low) return 0;
  int64_t change = 0;
  if (left.low >= 0) change += 1 - 2 * int64_t{supply.partial_between(model, left.low, left.high)};
  if (joined.low >= 0) change += 2 * int64_t{supply.partial_between(model, joined.low, joined.high)} + 1;
  return change;
}

}  // namespace tessera
