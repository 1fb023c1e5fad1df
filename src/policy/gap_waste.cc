#include "policy/gap_waste.h"

#include <bitset>
#include <map>
#include <vector>

namespace tessera {

GapWaste::GapWaste(const WorkloadMix& mix) {
  std::map<int, double> popularity_of_share;
  double fractions = 0;
  for (const PodType& type : mix.types()) {
    // Portions asked as GPU memory depend on the device; the trace's lists ask by portion.
    if (type.gpu.kind != GpuRequest::Kind::kPortion) continue;
    popularity_of_share[type.gpu.portion_milli] += type.popularity;
    fractions += type.popularity;
  }
  if (fractions <= 0) return;
  empty_ = false;
  std::vector<int> common;
  for (const auto& [share, popularity] : popularity_of_share) {
    if (popularity >= kCommonShare * fractions) common.push_back(share);
  }
  // The sums the common portions make (an unbounded subset sum), then for each gap the largest
  // one it holds.
  std::bitset<kMilliPerGpu + 1> reachable;
  reachable.set(0);
  for (int sum = 1; sum <= kMilliPerGpu; ++sum) {
    for (const int share : common) {
      if (share <= sum && reachable.test(static_cast<size_t>(sum - share))) reachable.set(static_cast<size_t>(sum));
    }
  }
  int largest = 0;
  for (int gap = 0; gap <= kMilliPerGpu; ++gap) {
    if (reachable.test(static_cast<size_t>(gap))) largest = gap;
    waste_[static_cast<size_t>(gap)] = static_cast<int16_t>(gap - largest);
  }
}

}  // namespace tessera
