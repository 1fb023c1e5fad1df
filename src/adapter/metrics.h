// The scheduler's Prometheus metrics, written in the text exposition format (version 0.0.4).
// Counters only grow; gauges are replaced each cycle. Thread-safe: the cycle thread records,
// the HTTP thread renders.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::adapter {

class Metrics {
 public:
  // Histogram buckets for cycle durations, in seconds.
  static constexpr std::array<double, 12> kDurationBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                              0.1,   0.25,   0.5,   1,    2.5,   5};

  void observe_cycle(double seconds, const std::map<std::string, double>& action_seconds);
  void add_counter(const std::string& name, const std::map<std::string, std::string>& labels, double value = 1);
  // Replaces every sample of a gauge family at once (queue allocation, pending by reason).
  void set_gauge_family(const std::string& name,
                        std::vector<std::pair<std::map<std::string, std::string>, double>> samples);
  void set_gauge(const std::string& name, double value);

  std::string render() const;

 private:
  using LabelSet = std::map<std::string, std::string>;
  mutable std::mutex mutex_;
  std::map<std::string, std::map<LabelSet, double>> counters_;
  std::map<std::string, std::map<LabelSet, double>> gauges_;
  std::array<uint64_t, kDurationBuckets.size()> cycle_buckets_{};
  uint64_t cycle_count_ = 0;
  double cycle_sum_ = 0;
  std::map<std::string, double> last_action_seconds_;
};

// Help text for each metric the scheduler exports (rendered as # HELP lines).
std::string_view metric_help(std::string_view name);

}  // namespace tessera::adapter
