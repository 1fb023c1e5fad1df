// What a device's free share is worth to the fractions still to come: the part of it that the
// mix's common portions cannot fill exactly, whatever combination of them arrives.
//   waste(g) = g - (the largest sum of common portions, each used any number of times, <= g)
// A portion is common when it makes up at least kCommonShare of the mix's fractional pods. The
// rare ones are left out on purpose: on the trace's lists a 190-milli gap beside an 810 could be
// filled by a 160, but 810s are a third of the fractions and 160s a fortieth, so almost every
// such gap stays empty; counting the 160 would call it fillable and let the gaps pile up.
//
// The tessera policy charges a fraction the change it makes to the waste of the device it takes
// (tessera_policy.h): a pod that leaves a gap the common portions fill (470 on an idle device,
// 530 left for the next 470) costs little, one that leaves a gap only rare portions fit (320 on
// that 530, 210 left) costs the gap. It is the cluster-wide sum of squares' complement: that
// term keeps the gaps of each class few, this one keeps them of sizes that can still close.
#pragma once

#include <array>
#include <cstdint>

#include "core/gpu_request.h"
#include "policy/workload_mix.h"

namespace tessera {

class GapWaste {
 public:
  // Chosen on the shared-GPU tuning lists of scripts/packing-generalisation.sh, whose portions
  // fall into six at 4% or more and the rest at 2.8% or less: 0.03 keeps the six. At 0.02 (the
  // 590s, 160s and 550s counted too) the policy read less than without the term on all of them;
  // at 0.045 (the 230s or 460s left out where they fall under it) 0.3 points less than at 0.03 on
  // gpushare40 and gpushare80. docs/policies.md has the figures.
  static constexpr double kCommonShare = 0.03;

  explicit GapWaste(const WorkloadMix& mix);

  // Whether the mix has fractions at all: without them every waste is 0.
  bool empty() const { return empty_; }
  // waste(g) for a free share of g milli (0..1000).
  int waste(int free_milli) const { return waste_[static_cast<size_t>(free_milli)]; }
  // The change in the device's waste when `share_milli` goes on it with `free_milli` free.
  int change(int free_milli, int share_milli) const { return waste(free_milli - share_milli) - waste(free_milli); }

 private:
  std::array<int16_t, kMilliPerGpu + 1> waste_{};
  bool empty_ = true;
};

}  // namespace tessera
