// The one-device patterns the offline ceiling packs fractional pods in (sim/slack_patterns.h).
#include "sim/slack_patterns.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace tessera {
namespace {

std::vector<int> sizes_of(const SlackPattern& pattern, const std::vector<int>& shares) {
  std::vector<int> sizes;
  for (const size_t member : pattern.members) sizes.push_back(shares[member]);
  std::sort(sizes.rbegin(), sizes.rend());
  return sizes;
}

// Largest first, device after device, strands 100 on each of two devices (0.5+0.4 and
// 0.3+0.3+0.3, the 0.2 left out); the patterns fill both.
TEST(SlackPatterns, FillEachDeviceWithTheLargestShareLeft) {
  const std::vector<int> shares = {300, 500, 200, 400, 300, 300};
  const auto patterns = minimum_slack_patterns(shares);
  ASSERT_EQ(patterns.size(), 2U);
  EXPECT_EQ(sizes_of(patterns[0], shares), (std::vector<int>{500, 300, 200}));
  EXPECT_EQ(patterns[0].total_milli, 1000);
  EXPECT_EQ(sizes_of(patterns[1], shares), (std::vector<int>{400, 300, 300}));
  EXPECT_EQ(patterns[1].total_milli, 1000);
}

// The most a device can hold with `largest` in it, drawn from `rest` (exhaustive).
int fullest_by_search(int largest, const std::vector<int>& rest) {
  int best = largest;
  for (uint32_t subset = 0; subset < (1U << rest.size()); ++subset) {
    int total = largest;
    for (size_t i = 0; i < rest.size(); ++i) total += (subset >> i & 1U) != 0 ? rest[i] : 0;
    if (total <= 1000) best = std::max(best, total);
  }
  return best;
}

// On random lists every share lands in one pattern, no pattern overfills a device, each pattern
// holds the largest share left when it was made, and it is as full as any choice of the shares
// left could make it.
TEST(SlackPatterns, EachPatternIsTheFullestWithTheLargestShareLeft) {
  std::mt19937 random(7);
  for (int round = 0; round < 300; ++round) {
    std::vector<int> shares(1 + random() % 12);
    for (int& share : shares) share = 10 * static_cast<int>(1 + random() % 100);
    const auto patterns = minimum_slack_patterns(shares);
    std::vector<int> seen(shares.size(), 0);
    std::vector<int> left = shares;
    for (const SlackPattern& pattern : patterns) {
      ASSERT_FALSE(pattern.members.empty());
      int total = 0;
      for (const size_t member : pattern.members) {
        ++seen[member];
        total += shares[member];
      }
      EXPECT_EQ(total, pattern.total_milli);
      EXPECT_LE(total, 1000);
      std::sort(left.rbegin(), left.rend());
      const int largest = left.front();
      EXPECT_EQ(sizes_of(pattern, shares).front(), largest);
      EXPECT_EQ(total, fullest_by_search(largest, std::vector<int>(left.begin() + 1, left.end())));
      for (const int size : sizes_of(pattern, shares)) left.erase(std::find(left.begin(), left.end(), size));
    }
    EXPECT_TRUE(left.empty());
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int count) { return count == 1; }));
  }
}

}  // namespace
}  // namespace tessera
