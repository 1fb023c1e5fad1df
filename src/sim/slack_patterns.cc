#include "sim/slack_patterns.h"

#include <algorithm>
#include <functional>
#include <map>

#include "core/gpu_request.h"

namespace tessera {

namespace {

// The most of `room` that some of the shares (size -> how many) fill: the sizes used, one
// entry per pod. A bounded subset sum; each capacity keeps the first way it was reached, and a
// size's k-th pass reaches only from capacities reached before it, so no size is used more
// often than it is available.
std::vector<int> fullest_fill(const std::map<int, size_t, std::greater<>>& available, int room) {
  std::vector<int> previous(static_cast<size_t>(room) + 1, -1);  // -1: not reached
  std::vector<int> size_used(static_cast<size_t>(room) + 1, 0);
  previous[0] = 0;
  for (const auto& [size, count] : available) {
    if (size > room) continue;
    const size_t passes = std::min(count, static_cast<size_t>(room / size));
    for (size_t pass = 0; pass < passes; ++pass) {
      bool reached_new = false;
      for (int c = room; c >= size; --c) {
        if (previous[static_cast<size_t>(c)] >= 0 || previous[static_cast<size_t>(c - size)] < 0) continue;
        previous[static_cast<size_t>(c)] = c - size;
        size_used[static_cast<size_t>(c)] = size;
        reached_new = true;
      }
      if (!reached_new) break;
    }
  }
  int best = room;
  while (previous[static_cast<size_t>(best)] < 0) --best;
  std::vector<int> sizes;
  for (int c = best; c > 0; c = previous[static_cast<size_t>(c)]) sizes.push_back(size_used[static_cast<size_t>(c)]);
  return sizes;
}

}  // namespace

std::vector<SlackPattern> minimum_slack_patterns(std::span<const int> shares_milli) {
  // size -> the indices of that size not yet in a pattern (taken from the back).
  std::map<int, std::vector<size_t>, std::greater<>> unassigned;
  for (size_t i = shares_milli.size(); i-- > 0;) unassigned[shares_milli[i]].push_back(i);
  std::vector<SlackPattern> patterns;
  while (!unassigned.empty()) {
    SlackPattern pattern;
    auto take = [&](int size) {
      auto it = unassigned.find(size);
      pattern.members.push_back(it->second.back());
      pattern.total_milli += size;
      it->second.pop_back();
      if (it->second.empty()) unassigned.erase(it);
    };
    take(unassigned.begin()->first);
    std::map<int, size_t, std::greater<>> available;
    for (const auto& [size, indices] : unassigned) available.emplace(size, indices.size());
    for (const int size : fullest_fill(available, kMilliPerGpu - pattern.total_milli)) take(size);
    patterns.push_back(std::move(pattern));
  }
  return patterns;
}

}  // namespace tessera
