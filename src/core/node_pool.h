// Node pools: a node belongs to the pool its label `scheduling.tessera.dev/node-pool` names (the
// pool "default" without it), in a scenario and on Kubernetes alike. A pool says how far the
// GPU-memory limits of the pods sharing one of its devices may add up beyond the device's memory.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/node.h"
#include "core/result.h"

namespace tessera {

inline constexpr std::string_view kNodePoolLabel = "scheduling.tessera.dev/node-pool";
inline constexpr std::string_view kDefaultNodePool = "default";
// Ratios from 1.0 (limits never overcommit a device) to 8.0, in milli.
inline constexpr int kMinGpuMemoryOvercommitMilli = 1000;
inline constexpr int kMaxGpuMemoryOvercommitMilli = 8000;

inline std::string_view node_pool(const Labels& labels) {
  auto it = labels.find(std::string(kNodePoolLabel));
  return it == labels.end() || it->second.empty() ? kDefaultNodePool : std::string_view(it->second);
}

// The overcommit ratio of each pool, in milli; pools not named get the default pool's ratio,
// and that is 1.0 unless named.
struct GpuMemoryOvercommit {
  std::map<std::string, int, std::less<>> milli_by_pool;

  int for_pool(std::string_view pool) const {
    if (auto it = milli_by_pool.find(pool); it != milli_by_pool.end()) return it->second;
    auto fallback = milli_by_pool.find(kDefaultNodePool);
    return fallback != milli_by_pool.end() ? fallback->second : kMinGpuMemoryOvercommitMilli;
  }
  void apply_to(std::vector<NodeSpec>& nodes) const {
    if (milli_by_pool.empty()) return;
    for (NodeSpec& node : nodes) node.gpu_memory_overcommit_milli = for_pool(node_pool(node.labels));
  }
  bool empty() const { return milli_by_pool.empty(); }
};

// A ratio as milli, or an error saying what is allowed: 1.5 → 1500.
inline Result<int> gpu_memory_overcommit_milli(double ratio) {
  if (!(ratio >= kMinGpuMemoryOvercommitMilli / 1000.0 && ratio <= kMaxGpuMemoryOvercommitMilli / 1000.0)) {
    return Error{fmt::format("GPU memory overcommit {} is not between {} and {} (1 lets no limit overcommit a device)",
                             ratio, kMinGpuMemoryOvercommitMilli / 1000.0, kMaxGpuMemoryOvercommitMilli / 1000.0)};
  }
  return static_cast<int>(std::lround(ratio * 1000));
}

// "1.5" (every pool) or "inference=1.5,default=1.2": the flag of `tessera scheduler`.
inline Result<GpuMemoryOvercommit> parse_gpu_memory_overcommit(std::string_view text) {
  GpuMemoryOvercommit overcommit;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const size_t equals = item.find('=');
    const std::string pool(equals == std::string_view::npos ? kDefaultNodePool : item.substr(0, equals));
    const std::string number(equals == std::string_view::npos ? item : item.substr(equals + 1));
    char* parsed_to = nullptr;
    const double ratio = std::strtod(number.c_str(), &parsed_to);
    if (pool.empty() || number.empty() || parsed_to != number.c_str() + number.size()) {
      return Error{
          fmt::format("'{}' is not RATIO or POOL=RATIO (expected such as 1.5 or inference=1.5,batch=1.2)", item)};
    }
    auto milli = gpu_memory_overcommit_milli(ratio);
    if (!milli) return Error{fmt::format("pool '{}': {}", pool, milli.error().message)};
    if (!overcommit.milli_by_pool.emplace(pool, *milli).second) {
      return Error{fmt::format("pool '{}' is given twice", pool)};
    }
    start = end + 1;
  }
  return overcommit;
}

}  // namespace tessera
