#include "core/rounding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tessera {
namespace {

// Bit for bit what std::round gives: the halves away from zero, the sign of a zero, the values
// next to the halves, and those too large for the cast, infinite or not a number.
TEST(Rounding, EqualsStdRoundBitForBit) {
  std::vector<double> values = {0.0,
                                -0.0,
                                0.5,
                                -0.5,
                                1.5,
                                -1.5,
                                2.5,
                                -2.5,
                                0.49999999999999994,
                                -0.49999999999999994,
                                0.3,
                                -0.3,
                                1e15 + 0.5,
                                -1e15 - 0.5,
                                4503599627370495.5,
                                4503599627370496.0,
                                -4503599627370497.0,
                                1e300,
                                -1e300,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::denorm_min()};
  for (double value : {0.5, 1.5, 2.5, 1e6 + 0.5}) {
    values.push_back(std::nextafter(value, 0.0));
    values.push_back(std::nextafter(value, 1e300));
    values.push_back(-std::nextafter(value, 0.0));
    values.push_back(-std::nextafter(value, 1e300));
  }
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> scores(-1e7, 1e7);
  for (int i = 0; i < 100000; ++i) values.push_back(scores(random) / 100);
  for (int i = 0; i < 1000; ++i) values.push_back(static_cast<double>(static_cast<int64_t>(scores(random))) + 0.5);
  for (double value : values) {
    const double expected = std::round(value);
    const double got = rounded(value);
    EXPECT_EQ(got, expected) << value;
    EXPECT_EQ(std::signbit(got), std::signbit(expected)) << value;
  }
  EXPECT_TRUE(std::isnan(rounded(std::numeric_limits<double>::quiet_NaN())));
}

}  // namespace
}  // namespace tessera
