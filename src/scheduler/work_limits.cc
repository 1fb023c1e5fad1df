#include "scheduler/work_limits.h"

#include <fmt/format.h>

#include <cmath>

namespace tessera {

namespace {

// Times this close are the same instant: cycles at start + k * interval accumulate rounding.
constexpr double kLimitSlack = 1e-6;

template <typename T>
std::optional<T> rule_on_path(const QueueTree& tree, QueueIndex leaf, WorkloadKind kind,
                              std::optional<T> WorkRules::*field) {
  for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree.parent(queue)) {
    if (const auto& value = tree.spec(queue).work_rules[static_cast<size_t>(kind)].*field) return *value;
  }
  return std::nullopt;
}

// The queue's limit (0: none) with the workload's own request applied: shorter wins.
double shorter_limit(double queue_limit, const std::optional<double>& asked, std::string_view what,
                     std::vector<std::string>& clamped) {
  if (!asked || !(*asked > 0)) return queue_limit;
  if (queue_limit > 0 && *asked > queue_limit) {
    clamped.push_back(fmt::format("asked for {} of {}; its queue allows {}, so {} applies", what,
                                  readable_seconds(*asked), readable_seconds(queue_limit),
                                  readable_seconds(queue_limit)));
    return queue_limit;
  }
  return *asked;
}

struct RuleStanding {
  LimitRule rule;
  double used;
  double limit;
  double left() const { return limit - used; }
};

// The limit closest to expiry; the maximum runtime first on a tie. nullopt: no limit applies.
std::optional<RuleStanding> closest_limit(const WorkLimits& limits, const LimitClock& clock) {
  std::optional<RuleStanding> closest;
  if (limits.max_runtime_seconds > 0)
    closest = RuleStanding{LimitRule::kMaxRuntime, clock.run_seconds, limits.max_runtime_seconds};
  if (limits.idle_limit_seconds > 0) {
    const RuleStanding idle{LimitRule::kIdle, clock.idle_seconds, limits.idle_limit_seconds};
    if (!closest || idle.left() < closest->left()) closest = idle;
  }
  return closest;
}

std::string rule_phrase(const LimitVerdict& verdict, const WorkLimits& limits) {
  if (verdict.rule == LimitRule::kIdle) {
    return fmt::format("idle for {} (limit {}, GPU utilisation under {}%)", readable_seconds(verdict.used_seconds),
                       readable_seconds(verdict.limit_seconds), limits.idle_threshold_pct);
  }
  return fmt::format("ran for {} (limit {})", readable_seconds(verdict.used_seconds),
                     readable_seconds(verdict.limit_seconds));
}

}  // namespace

ExpiryAction default_expiry_action(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kInteractive:
      return ExpiryAction::kStop;
    case WorkloadKind::kInference:
      return ExpiryAction::kPreemptible;
    case WorkloadKind::kTrain:
      break;
  }
  return ExpiryAction::kRequeue;
}

WorkLimits resolve_limits(const QueueTree& tree, QueueIndex leaf, const WorkloadSpec& workload) {
  const WorkloadKind kind = workload.kind;
  auto number = [&](std::optional<double> WorkRules::*field, double fallback) {
    return rule_on_path(tree, leaf, kind, field).value_or(fallback);
  };
  WorkLimits limits;
  limits.max_runtime_seconds = shorter_limit(number(&WorkRules::max_runtime_seconds, 0), workload.max_runtime_seconds,
                                             "a maximum runtime", limits.clamped);
  limits.idle_limit_seconds = shorter_limit(number(&WorkRules::idle_limit_seconds, 0), workload.idle_limit_seconds,
                                            "an idle-GPU limit", limits.clamped);
  limits.on_expiry = rule_on_path(tree, leaf, kind, &WorkRules::on_expiry).value_or(default_expiry_action(kind));
  limits.notice_seconds = number(&WorkRules::notice_seconds, kDefaultNoticeSeconds);
  limits.requeue_delay_seconds = number(&WorkRules::requeue_delay_seconds, kDefaultRequeueDelaySeconds);
  limits.warmup_grace_seconds = number(&WorkRules::warmup_grace_seconds, 0);
  limits.idle_threshold_pct = number(&WorkRules::idle_threshold_pct, kDefaultIdleThresholdPct);
  limits.idle_window_seconds = number(&WorkRules::idle_window_seconds, kDefaultIdleWindowSeconds);
  return limits;
}

LimitClock accrue_run(LimitClock clock, double seconds) {
  clock.run_seconds += seconds;
  clock.total_run_seconds += seconds;
  clock.current_run_seconds += seconds;
  return clock;
}

LimitClock accrue_idle(LimitClock clock, std::optional<double> utilisation, double now, const WorkLimits& limits) {
  const double since = clock.last_sample;
  clock.last_sample = now;
  clock.telemetry = utilisation.has_value();
  if (!utilisation) return clock;  // paused: neither accrues nor resets
  if (clock.current_run_seconds < limits.warmup_grace_seconds - kLimitSlack ||
      *utilisation >= limits.idle_threshold_pct) {
    clock.idle_seconds = 0;
    return clock;
  }
  // Idle from the later of the last read and the end of the grace: a workload still warming up at
  // the last read was not idle by the rule before the grace ended.
  const double grace_end = now - (clock.current_run_seconds - limits.warmup_grace_seconds);
  if (since >= 0) clock.idle_seconds += std::max(0.0, now - std::max(since, grace_end));
  return clock;
}

LimitVerdict judge_limits(const WorkLimits& limits, const LimitClock& clock, double now) {
  LimitVerdict verdict;
  verdict.action = limits.on_expiry;
  const std::optional<RuleStanding> closest = closest_limit(limits, clock);
  if (clock.made_preemptible || !closest) return verdict;
  verdict.rule = closest->rule;
  verdict.used_seconds = closest->used;
  verdict.limit_seconds = closest->limit;
  const double left = closest->left();
  if (clock.notice_at) {
    const double notice_ends = *clock.notice_at + limits.notice_seconds;
    if (left > limits.notice_seconds + kLimitSlack) {
      verdict.step = LimitStep::kWithdraw;
    } else if (left <= kLimitSlack && now >= notice_ends - kLimitSlack) {
      verdict.step = LimitStep::kExpire;
    } else {
      verdict.time_left_seconds = std::max(std::max(left, 0.0), notice_ends - now);
    }
    return verdict;
  }
  if (left > limits.notice_seconds + kLimitSlack) return verdict;
  if (limits.notice_seconds <= 0 && left <= kLimitSlack) {
    verdict.step = LimitStep::kExpire;
    return verdict;
  }
  verdict.step = LimitStep::kNotice;
  verdict.time_left_seconds = limits.notice_seconds;
  return verdict;
}

LimitClock after_verdict(LimitClock clock, const LimitVerdict& verdict, double now) {
  switch (verdict.step) {
    case LimitStep::kNone:
      break;
    case LimitStep::kNotice:
      clock.notice_at = now;
      break;
    case LimitStep::kWithdraw:
      clock.notice_at.reset();
      break;
    case LimitStep::kExpire:
      clock.notice_at.reset();
      if (verdict.action == ExpiryAction::kPreemptible) clock.made_preemptible = true;
      if (verdict.action == ExpiryAction::kRequeue) {
        clock.run_seconds = 0;
        clock.current_run_seconds = 0;
        clock.idle_seconds = 0;
        clock.last_sample = -1;
        ++clock.requeues;
      }
      break;
  }
  return clock;
}

std::string describe_verdict(const LimitVerdict& verdict, const WorkLimits& limits) {
  const std::string rule = rule_phrase(verdict, limits);
  const std::string left = readable_seconds(verdict.time_left_seconds);
  const std::string unless = verdict.rule == LimitRule::kIdle ? " unless its GPUs are used" : "";
  switch (verdict.step) {
    case LimitStep::kNone:
      return rule;
    case LimitStep::kWithdraw:
      return fmt::format("its GPUs are in use again (utilisation at or above {}%): the idle notice is withdrawn",
                         limits.idle_threshold_pct);
    case LimitStep::kNotice:
      switch (verdict.action) {
        case ExpiryAction::kStop:
          return fmt::format("{}: stops in {}{}", rule, left, unless);
        case ExpiryAction::kRequeue:
          return fmt::format("{}: requeued in {}{}", rule, left, unless);
        case ExpiryAction::kPreemptible:
          return fmt::format("{}: preemptible in {}{}", rule, left, unless);
      }
      break;
    case LimitStep::kExpire:
      switch (verdict.action) {
        case ExpiryAction::kStop:
          return fmt::format("{}: stopped", rule);
        case ExpiryAction::kRequeue:
          return limits.requeue_delay_seconds > 0 ? fmt::format("{}: requeued, back in its queue after {}", rule,
                                                                readable_seconds(limits.requeue_delay_seconds))
                                                  : fmt::format("{}: requeued", rule);
        case ExpiryAction::kPreemptible:
          return fmt::format("{}: now preemptible", rule);
      }
      break;
  }
  return rule;
}

std::string readable_seconds(double seconds) {
  const auto whole = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  if (whole < 60) return fmt::format("{} s", whole);
  // Minutes up to two hours ("62 min" reads better against a limit of "60 min" than "1 h 2 min").
  if (whole < 7200) return fmt::format("{} min", whole / 60);
  const int64_t minutes = (whole % 3600) / 60;
  return minutes > 0 ? fmt::format("{} h {} min", whole / 3600, minutes) : fmt::format("{} h", whole / 3600);
}

}  // namespace tessera
