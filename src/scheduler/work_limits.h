// Time limits and idle-GPU limits on running work (docs/design.md §6, docs/scheduling-cycle.md
// "Limits"): the rules in force for a workload, the idle time it accrues from GPU utilisation, and
// the verdict of one cycle — nothing, a notice, the notice withdrawn, or expiry with its action.
// Pure functions: the caller keeps each workload's LimitClock from cycle to cycle
// and carries out the verdicts (ends, requeues, or marks preemptible).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/work_rules.h"
#include "core/workload.h"
#include "policy/fair_share.h"

namespace tessera {

// The rules in force for one workload, every field resolved.
struct WorkLimits {
  double max_runtime_seconds = 0;  // 0: none
  double idle_limit_seconds = 0;   // 0: none
  ExpiryAction on_expiry = ExpiryAction::kRequeue;
  double notice_seconds = 0;
  double requeue_delay_seconds = 0;
  double warmup_grace_seconds = 0;
  double idle_threshold_pct = 0;
  double idle_window_seconds = 0;
  // What the workload asked for that was longer than its queue allows, one sentence each
  // ("asked for a maximum runtime of 48 h; its queue allows 24 h, so 24 h applies").
  std::vector<std::string> clamped;

  bool any() const { return max_runtime_seconds > 0 || idle_limit_seconds > 0; }
};

// Defaults where no queue on the path sets a field.
inline constexpr double kDefaultNoticeSeconds = 300;
inline constexpr double kDefaultRequeueDelaySeconds = 60;
inline constexpr double kDefaultIdleThresholdPct = 5;
inline constexpr double kDefaultIdleWindowSeconds = 300;
ExpiryAction default_expiry_action(WorkloadKind kind);  // stop, requeue, preemptible

// Each field from the nearest queue on the path from `leaf` up that sets it for the workload's
// kind, else the default; then the workload's own shorter limits (a longer one is clamped, and
// `clamped` says so; a limit the queue does not set is taken as asked).
WorkLimits resolve_limits(const QueueTree& tree, QueueIndex leaf, const WorkloadSpec& workload);

// What one workload has used, kept by the caller across cycles.
struct LimitClock {
  // Run time counted against the maximum runtime: since the workload first started or was last
  // requeued by its limit, across evictions by reclaim and preemption.
  double run_seconds = 0;
  double total_run_seconds = 0;    // all its run time, across requeues (reported)
  double current_run_seconds = 0;  // since its current run started (the warm-up grace counts this)
  // Seconds every GPU it holds has stayed idle, without a break; 0 after any activity.
  double idle_seconds = 0;
  double last_sample = -1;          // when utilisation was last read; < 0: not yet in this run
  bool telemetry = false;           // whether the last read gave a utilisation (false: accrual paused)
  std::optional<double> notice_at;  // a notice in force since then
  bool made_preemptible = false;    // its limit expired with the preemptible action
  int requeues = 0;
};

// Idle accrual for one utilisation read at `now`. `utilisation`: the highest utilisation (percent)
// among the workload's GPUs, each averaged over the idle window; nullopt when none is known
// (telemetry down or missing), which pauses accrual without resetting it. During the warm-up
// grace nothing accrues; at or above the threshold the idle time resets.
LimitClock accrue_idle(LimitClock clock, std::optional<double> utilisation, double now, const WorkLimits& limits);

// Adds `seconds` of run time to every run-time count.
LimitClock accrue_run(LimitClock clock, double seconds);

enum class LimitRule : uint8_t { kMaxRuntime, kIdle };
enum class LimitStep : uint8_t {
  kNone,      // nothing to do
  kNotice,    // a limit expires within the notice period: tell the workload now
  kWithdraw,  // the notice in force no longer holds (its GPUs were used again)
  kExpire,    // a limit expired and the notice has run: carry out `action`
};

struct LimitVerdict {
  LimitStep step = LimitStep::kNone;
  LimitRule rule = LimitRule::kMaxRuntime;
  ExpiryAction action = ExpiryAction::kStop;
  double used_seconds = 0;       // run or idle time against the rule
  double limit_seconds = 0;      // the rule's limit
  double time_left_seconds = 0;  // kNotice: until it is carried out, if nothing changes
};

// The verdict for a running workload at `now`. The limit closest to expiry decides. A workload
// is always told first: a notice comes once the time left is within the notice period, and expiry
// waits for both the limit and a full notice period since the notice (so a lowered limit or a
// late read cannot end work without warning). An idle notice whose idle time has reset is
// withdrawn. A workload already made preemptible gets no further verdict.
LimitVerdict judge_limits(const WorkLimits& limits, const LimitClock& clock, double now);

// The clock after the caller carried out `verdict` at `now`.
LimitClock after_verdict(LimitClock clock, const LimitVerdict& verdict, double now);

// The sentence for events and conditions: "idle for 62 min (limit 60 min, GPU utilisation under
// 5%): stopped", "ran for 2 h (limit 2 h): requeued, back in its queue after 1 min", "...: stops
// in 5 min unless its GPUs are used".
std::string describe_verdict(const LimitVerdict& verdict, const WorkLimits& limits);

// "45 s", "62 min" (below two hours), "2 h", "2 h 5 min": whole units, for the sentences above.
std::string readable_seconds(double seconds);

}  // namespace tessera
