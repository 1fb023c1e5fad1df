// Time rules for running work (docs/design.md §6): how long a workload may run and how long its
// GPUs may sit idle, and what happens when either expires. A queue sets them per workload kind;
// each field it leaves unset is its parent's, so an organisation states a rule once at the top
// and a team overrides one field below.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/workload.h"

namespace tessera {

// What happens to a workload when one of its limits expires.
enum class ExpiryAction : uint8_t {
  kStop,         // it ends (interactive work's default)
  kRequeue,      // evicted gracefully, back in its queue after the requeue delay (training's default)
  kPreemptible,  // it keeps running but may now be taken by reclaim and preemption (inference's default)
};

inline std::string_view expiry_action_name(ExpiryAction action) {
  switch (action) {
    case ExpiryAction::kStop:
      return "stop";
    case ExpiryAction::kRequeue:
      return "requeue";
    case ExpiryAction::kPreemptible:
      return "preemptible";
  }
  return "unknown";
}

inline std::optional<ExpiryAction> parse_expiry_action(std::string_view text) {
  if (text == "stop") return ExpiryAction::kStop;
  if (text == "requeue") return ExpiryAction::kRequeue;
  if (text == "preemptible") return ExpiryAction::kPreemptible;
  return std::nullopt;
}

// One queue's rules for one workload kind, in seconds and percent. Unset: inherited.
struct WorkRules {
  std::optional<double> max_runtime_seconds;  // one run's longest run time; 0: none
  std::optional<double> idle_limit_seconds;   // longest stretch with every GPU idle; 0: none
  std::optional<ExpiryAction> on_expiry;
  std::optional<double> notice_seconds;         // told this long before it is ended
  std::optional<double> requeue_delay_seconds;  // a requeued workload waits this long before it may run
  std::optional<double> warmup_grace_seconds;   // idle time is not counted this long after a start
  std::optional<double> idle_threshold_pct;     // a GPU under this utilisation is idle
  std::optional<double> idle_window_seconds;    // utilisation is averaged over this window

  bool empty() const { return *this == WorkRules{}; }
  friend bool operator==(const WorkRules&, const WorkRules&) = default;
};

// A queue's rules, one entry per WorkloadKind.
using WorkRulesByKind = std::array<WorkRules, kWorkloadKindCount>;

}  // namespace tessera
