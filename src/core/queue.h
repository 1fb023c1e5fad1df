// Queues and the resources they are measured in (docs/design.md §2, §3).
//
// Resources are a dense vector indexed by resource id, not a map: fair share and DRF run over
// every queue and every resource each cycle, and that loop should be arithmetic on arrays. The
// names ("gpu", "cpu", "memory", "gpu/H100"...) are looked up once, when specs are read.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/work_rules.h"

namespace tessera {

using ResourceId = size_t;
using QueueIndex = size_t;

// One quantity per resource id: GPUs (may be fractional), CPU in millicores, memory in bytes.
// Double throughout: fair shares are fractions of capacity whatever the unit. A vector shorter
// than the resource count reads as zero for the missing entries.
using ResourceVector = std::vector<double>;

inline constexpr std::string_view kGpuResource = "gpu";
inline constexpr std::string_view kCpuResource = "cpu";
inline constexpr std::string_view kMemoryResource = "memory";

// The per-model GPU resource, counted apart from (and in addition to) "gpu".
inline std::string gpu_model_resource(std::string_view model) {
  std::string name(kGpuResource);
  name += '/';
  name += model;
  return name;
}

// Resource names interned to dense ids, in the order first added.
class ResourceNames {
 public:
  ResourceNames() = default;
  ResourceNames(std::initializer_list<std::string_view> names) {
    for (std::string_view name : names) add(name);
  }
  static ResourceNames standard() { return {kGpuResource, kCpuResource, kMemoryResource}; }

  std::optional<ResourceId> find(std::string_view name) const {
    for (ResourceId id = 0; id < names_.size(); ++id) {
      if (names_[id] == name) return id;
    }
    return std::nullopt;
  }
  ResourceId add(std::string_view name) {
    if (auto id = find(name)) return *id;
    names_.emplace_back(name);
    return names_.size() - 1;
  }
  const std::string& name(ResourceId id) const { return names_.at(id); }
  size_t size() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

// A queue's terms for one resource.
struct QueueQuota {
  double deserved = 0;           // guaranteed when demanded
  double over_quota_weight = 1;  // its share of what is left over; 0: never more than deserved
  std::optional<double> limit;   // hard cap including borrowing; absent: unlimited

  double limit_or_infinity() const { return limit.value_or(std::numeric_limits<double>::infinity()); }
  friend bool operator==(const QueueQuota&, const QueueQuota&) = default;
};

struct QueueSpec {
  std::string name;
  std::string parent;  // empty: a top-level queue, whose parent is the cluster
  int priority = 0;    // among siblings, a higher priority's over-quota demand is met first
  // Indexed by resource id; resources past the end get the default QueueQuota (nothing
  // deserved, weight 1, unlimited).
  std::vector<QueueQuota> quota;
  // Seconds a workload of this queue runs before it may be preempted (by a higher-priority
  // workload of its own queue) or reclaimed (by another queue). Absent: the parent's value;
  // absent all the way up: 0.
  std::optional<double> preempt_min_runtime_seconds = std::nullopt;
  std::optional<double> reclaim_min_runtime_seconds = std::nullopt;
  // Time limits and idle-GPU limits per workload kind (docs/design.md §6); each unset field is
  // the parent's.
  WorkRulesByKind work_rules = {};

  QueueQuota quota_for(ResourceId resource) const { return resource < quota.size() ? quota[resource] : QueueQuota{}; }
};

// What one leaf queue holds and wants this cycle, per resource. Only leaves hold workloads;
// an inner queue's entry is ignored (its figures are the sums of its leaves').
struct QueueLoad {
  ResourceVector demand;        // requested by its running plus pending workloads
  ResourceVector allocated;     // held by its running workloads now
  ResourceVector recent_usage;  // decayed historical allocation (decay_usage); empty: none
};

// Entry `resource` of a vector, zero past its end.
inline double resource_at(std::span<const double> vector, ResourceId resource) {
  return resource < vector.size() ? vector[resource] : 0.0;
}

}  // namespace tessera
