#include "scheduler/limit_ledger.h"

#include <algorithm>
#include <unordered_set>

namespace tessera {

std::vector<LimitOutcome> LimitLedger::review(const WorkloadSet& workloads, const ClusterState& cluster,
                                              const QueueTree& tree, double now, const UtilisationReader& read) {
  std::vector<LimitOutcome> outcomes;
  std::unordered_set<std::string> present;
  for (WorkloadId id : workloads.active()) {
    const Workload& workload = workloads[id];
    const std::string& name = workload.spec.name;
    // Read afresh each time: a queue's rules may change while its work runs.
    WorkLimits limits = resolve_limits(tree, workload.queue, workload.spec);
    auto found = entries_.find(name);
    if (found == entries_.end()) {
      if (!limits.any()) continue;  // work without limits needs no clock
      found = entries_.emplace(name, Entry{}).first;
    }
    present.insert(name);
    Entry& entry = found->second;
    entry.limits = std::move(limits);
    // Stopped, or requeued and still within its delay: what still runs is on its way out (pods
    // end within their termination grace), not a new run.
    if (entry.stopped || (entry.held && now < entry.held_until) || !workloads.is_running(id, cluster)) {
      entry.running = false;
      continue;
    }
    if (entry.running) {
      entry.clock = accrue_run(entry.clock, now - entry.seen_at);
    } else {  // a new run: its warm-up grace and idle time start again; a notice died with the old run
      entry.clock.current_run_seconds = 0;
      entry.clock.idle_seconds = 0;
      entry.clock.last_sample = -1;
      entry.clock.notice_at.reset();
      entry.clock = accrue_run(entry.clock, std::max(0.0, now - workload.started_at));
      entry.running = true;
      entry.held = false;
    }
    entry.seen_at = now;
    const bool watches_idle = entry.limits.idle_limit_seconds > 0;
    entry.clock = accrue_idle(entry.clock, watches_idle ? read(id, entry.limits.idle_window_seconds) : std::nullopt,
                              now, entry.limits);
    const LimitVerdict verdict = judge_limits(entry.limits, entry.clock, now);
    if (verdict.step == LimitStep::kNone) continue;
    entry.clock = after_verdict(entry.clock, verdict, now);
    if (verdict.step == LimitStep::kExpire && verdict.action == ExpiryAction::kRequeue) {
      entry.running = false;
      entry.held = true;
      entry.held_until = now + entry.limits.requeue_delay_seconds;
    }
    if (verdict.step == LimitStep::kExpire && verdict.action == ExpiryAction::kStop) entry.stopped = true;
    outcomes.push_back({id, verdict, describe_verdict(verdict, entry.limits)});
  }
  // A requeued workload may be gone for a while (its controller recreates its pods): its clock
  // and its hold stay until the delay is over.
  std::erase_if(entries_, [&present, now](const auto& entry) {
    return !present.contains(entry.first) && !(entry.second.held && now < entry.second.held_until);
  });
  return outcomes;
}

std::optional<double> LimitLedger::held_until(const std::string& workload) const {
  const auto found = entries_.find(workload);
  if (found == entries_.end() || !found->second.held) return std::nullopt;
  return found->second.held_until;
}

bool LimitLedger::made_preemptible(const std::string& workload) const {
  const auto found = entries_.find(workload);
  return found != entries_.end() && found->second.clock.made_preemptible;
}

const LimitClock* LimitLedger::clock(const std::string& workload) const {
  const auto found = entries_.find(workload);
  return found == entries_.end() ? nullptr : &found->second.clock;
}

const WorkLimits* LimitLedger::limits(const std::string& workload) const {
  const auto found = entries_.find(workload);
  return found == entries_.end() ? nullptr : &found->second.limits;
}

}  // namespace tessera
