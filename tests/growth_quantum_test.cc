// quantised_change: the tessera policy's shortcut for how a score's rounding moves.
#include "policy/growth_quantum.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

namespace tessera {
namespace {

uint64_t bits(double value) { return std::bit_cast<uint64_t>(value); }

// The shortcut gives what rounding gives, to the bit (a zero's sign too), for scores and values
// anywhere in a step, at its edges and within a rounding error of them.
TEST(GrowthQuantum, ChangeIsTheRoundingsToTheBit) {
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> raw(-20000, 20000);
  std::uniform_real_distribution<double> near(-1e-9, 1e-9);
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i) values.push_back(raw(random));
  for (double edge = -1050; edge <= 1050; edge += 50) {  // the steps' edges, and just either side
    values.push_back(edge);
    values.push_back(std::nextafter(edge, -1e9));
    values.push_back(std::nextafter(edge, 1e9));
    values.push_back(edge + near(random));
    values.push_back(edge + kGrowthQuantumMilli * 1e-5);
    values.push_back(edge - kGrowthQuantumMilli * 1e-5);
  }
  values.insert(values.end(), {0.0, -0.0, 1e-300, -1e-300, 49.999999, -49.999999, 3e9, -3e9});
  for (double scored : values) {
    const double rounded_score = quantised(scored);
    for (double value :
         {scored, rounded_score, rounded_score + 49.99, rounded_score - 49.99, rounded_score + 50, rounded_score - 50,
          -scored, scored + near(random), rounded_score + 1e-4, rounded_score - 1e-4, std::copysign(0.0, -scored)}) {
      EXPECT_EQ(bits(quantised_change(value, rounded_score)), bits(quantised(value) - rounded_score))
          << "value " << value << " against " << rounded_score;
    }
  }
  // Every pair of values by the edges: a value at or next to an edge against each nearby score.
  for (size_t i = 20000; i < values.size(); ++i) {
    for (size_t j = 20000; j < values.size(); ++j) {
      const double rounded_score = quantised(values[i]);
      EXPECT_EQ(bits(quantised_change(values[j], rounded_score)), bits(quantised(values[j]) - rounded_score))
          << "value " << values[j] << " against " << rounded_score;
    }
  }
}

}  // namespace
}  // namespace tessera
