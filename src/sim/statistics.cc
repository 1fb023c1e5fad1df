#include "sim/statistics.h"

#include <algorithm>
#include <cmath>

namespace tessera {

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

double stddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double sum = 0;
  for (double v : values) sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

Quantiles quantiles(std::vector<double> values) {
  Quantiles q;
  if (values.empty()) return q;
  std::sort(values.begin(), values.end());
  auto at = [&values](double fraction) {
    size_t index = static_cast<size_t>(std::ceil(fraction * static_cast<double>(values.size()))) - 1;
    return values[std::min(index, values.size() - 1)];
  };
  q.p50 = at(0.5);
  q.p90 = at(0.9);
  q.p99 = at(0.99);
  q.max = values.back();
  q.mean = mean(values);
  return q;
}

}  // namespace tessera
