// Summary statistics of a sample, for reports and benchmarks.
#pragma once

#include <vector>

#include "sim/sim_results.h"

namespace tessera {

double mean(const std::vector<double>& values);    // 0 for no values
double stddev(const std::vector<double>& values);  // sample standard deviation; 0 below two values
double median(std::vector<double> values);         // 0 for no values
// Nearest-rank p50/p90/p99, max and mean; all 0 for no values.
Quantiles quantiles(std::vector<double> values);

}  // namespace tessera
