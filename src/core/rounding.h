// std::round (half away from zero) without the library call where the value's halves are exact
// in a double (|value| < 2^52): there a cast toward zero and the rest compared with a half give
// it. Policies round a score for every node group they compare, and the call costs more than the
// rest of the rounding.
#pragma once

#include <cmath>
#include <cstdint>

namespace tessera {

inline double rounded(double value) {
  constexpr double kExactIntegers = 4503599627370496.0;                 // 2^52: the halves below it are exact
  if (!(std::abs(value) < kExactIntegers)) return std::round(value);    // large, infinite or NaN
  const auto whole = static_cast<double>(static_cast<int64_t>(value));  // toward zero
  const double rest = value - whole;                                    // exact
  const double away = rest >= 0.5 ? whole + 1 : rest <= -0.5 ? whole - 1 : whole;
  return std::copysign(away, value);  // -0 for a small negative value, as std::round gives it
}

}  // namespace tessera
