#include "policy/sum_of_squares.h"

#include <algorithm>

namespace tessera {

namespace {

// The devices of the model whose free share falls in the class of `free_milli` (the classes
// start at `starts`, ascending; a share below the first is in none), and that class, or -1.
std::pair<int, int64_t> gap_class(const GpuSupply& supply, GpuModelId model, int free_milli,
                                  std::span<const int> starts) {
  if (free_milli <= 0 || free_milli >= kMilliPerGpu) return {-1, 0};
  if (starts.empty()) return {free_milli, supply.partial_count(model, free_milli)};
  const auto above = std::upper_bound(starts.begin(), starts.end(), free_milli);
  if (above == starts.begin()) return {-1, 0};
  const int low = *(above - 1);
  const int high = above == starts.end() ? kMilliPerGpu : *above;
  return {low, supply.partial_between(model, low, high)};
}

}  // namespace

int64_t sum_of_squares_change(const GpuSupply& supply, GpuModelId model, int free_milli, int share_milli,
                              std::span<const int> class_starts) {
  // (N - 1)^2 - N^2 for the class left, (N + 1)^2 - N^2 for the class joined; neither for idle or full.
  const auto [left, left_count] = gap_class(supply, model, free_milli, class_starts);
  const auto [joined, joined_count] = gap_class(supply, model, free_milli - share_milli, class_starts);
  if (left == joined) return 0;
  int64_t change = 0;
  if (left >= 0) change += 1 - 2 * left_count;
  if (joined >= 0) change += 2 * joined_count + 1;
  return change;
}

}  // namespace tessera
