#include "adapter/limit_enforcer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace tessera::adapter {

namespace {

std::string_view rule_label(LimitRule rule) { return rule == LimitRule::kIdle ? "idle" : "max-runtime"; }

// The event reason and type for a verdict.
std::pair<std::string, std::string> event_of(const LimitVerdict& verdict) {
  switch (verdict.step) {
    case LimitStep::kNotice:
      return {"Warning", "LimitNotice"};
    case LimitStep::kWithdraw:
      return {"Normal", "LimitNoticeWithdrawn"};
    case LimitStep::kNone:
    case LimitStep::kExpire:
      break;
  }
  switch (verdict.action) {
    case ExpiryAction::kStop:
      return {"Warning", "LimitStopped"};
    case ExpiryAction::kRequeue:
      return {"Warning", "LimitRequeued"};
    case ExpiryAction::kPreemptible:
      break;
  }
  return {"Normal", "LimitPreemptible"};
}

int64_t window_key(double seconds) { return std::max<int64_t>(1, std::llround(seconds)); }

}  // namespace

LimitEnforcer::LimitEnforcer(TelemetryOptions options) : options_(std::move(options)) {
  if (!options_.prometheus_url.empty()) prometheus_.emplace(options_.prometheus_url, options_.timeout_seconds);
}

std::string LimitEnforcer::describe() const {
  if (!prometheus_) {
    return "idle detection: off (no --prometheus-url): idle-GPU limits do not act; maximum runtimes do";
  }
  return fmt::format("idle detection: on, GPU utilisation from Prometheus at {} ({})", prometheus_->url(),
                     options_.query);
}

void LimitEnforcer::read_utilisation(const Snapshot& snapshot, double now, Metrics& metrics,
                                     const std::function<void(std::string)>& log) {
  if (!prometheus_ || (read_at_ >= 0 && now - read_at_ < options_.read_interval_seconds)) return;
  std::set<int64_t> windows;
  for (WorkloadId id : snapshot.workloads.active()) {
    const Workload& workload = snapshot.workloads[id];
    const WorkLimits limits = resolve_limits(*snapshot.tree, workload.queue, workload.spec);
    if (limits.idle_limit_seconds > 0) windows.insert(window_key(limits.idle_window_seconds));
  }
  if (windows.empty()) return;
  read_at_ = now;
  std::map<int64_t, std::map<std::string, double>> fresh;
  std::string error;
  for (int64_t window : windows) {
    auto read = prometheus_->utilisation(utilisation_query(options_.query, static_cast<double>(window)));
    if (!read) {
      error = read.error().message;
      break;
    }
    fresh[window] = std::move(*read);
  }
  if (error.empty()) {
    if (!telemetry_up_) log(fmt::format("GPU utilisation: read from Prometheus at {}", prometheus_->url()));
    utilisation_ = std::move(fresh);
    telemetry_up_ = true;
    last_error_.clear();
  } else {
    if (telemetry_up_ || error != last_error_) {
      log(fmt::format("GPU utilisation unavailable ({}): idle time does not accrue until it is back", error));
    }
    utilisation_.clear();
    telemetry_up_ = false;
    last_error_ = error;
    metrics.add_counter("tessera_gpu_telemetry_errors_total", {});
  }
  metrics.set_gauge("tessera_gpu_telemetry_up", telemetry_up_ ? 1 : 0);
}

LimitActions LimitEnforcer::review(Snapshot& snapshot, double now, Metrics& metrics,
                                   const std::function<void(std::string)>& log) {
  LimitActions actions;
  if (!snapshot.tree) return actions;
  read_utilisation(snapshot, now, metrics, log);
  const ClusterState& cluster = *snapshot.cluster;
  // The highest utilisation among the workload's bound pods; unknown if any has no series.
  const UtilisationReader read = [&](WorkloadId id, double window) -> std::optional<double> {
    if (!telemetry_up_) return std::nullopt;
    const auto by_pod = utilisation_.find(window_key(window));
    if (by_pod == utilisation_.end()) return std::nullopt;
    std::optional<double> highest;
    for (PodId pod : snapshot.workloads[id].pods) {
      if (!cluster.binding(pod) || cluster.binding(pod)->gpu_milli() == 0) continue;
      const auto found = by_pod->second.find(snapshot.pods[static_cast<size_t>(pod)].key);
      if (found == by_pod->second.end()) return std::nullopt;
      highest = std::max(highest.value_or(0.0), found->second);
    }
    return highest;
  };
  const std::vector<LimitOutcome> outcomes = ledger_.review(snapshot.workloads, cluster, *snapshot.tree, now, read);

  auto notice_for = [&](WorkloadId id, std::string type, std::string reason, std::string message) {
    LimitNotice notice{snapshot.workload_keys[static_cast<size_t>(id)],
                       snapshot.workload_pod_groups[static_cast<size_t>(id)],
                       {},
                       std::move(type),
                       std::move(reason),
                       std::move(message)};
    for (PodId pod : snapshot.workloads[id].pods)
      notice.pod_keys.push_back(snapshot.pods[static_cast<size_t>(pod)].key);
    return notice;
  };
  for (const LimitOutcome& outcome : outcomes) {
    const LimitVerdict& verdict = outcome.verdict;
    auto [type, reason] = event_of(verdict);
    LimitNotice notice = notice_for(outcome.workload, type, reason, outcome.message);
    if (verdict.step == LimitStep::kExpire) {
      const std::map<std::string, std::string> labels{{"reason", std::string(rule_label(verdict.rule))}};
      std::vector<std::string>* pods = nullptr;
      switch (verdict.action) {
        case ExpiryAction::kStop:
          metrics.add_counter("tessera_workloads_ended_total", labels);
          pods = &actions.delete_pods;
          break;
        case ExpiryAction::kRequeue:
          metrics.add_counter("tessera_workloads_requeued_total", labels);
          pods = &actions.evict_pods;
          break;
        case ExpiryAction::kPreemptible:
          metrics.add_counter("tessera_workloads_made_preemptible_total", labels);
          break;
      }
      for (PodId pod : snapshot.workloads[outcome.workload].pods) {
        if (pods != nullptr && cluster.binding(pod)) pods->push_back(snapshot.pods[static_cast<size_t>(pod)].key);
      }
    }
    log(fmt::format("{}: {}", notice.workload_key, notice.message));
    if (!notice.pod_group.empty()) {
      standing_[notice.pod_group] = {verdict.step != LimitStep::kWithdraw, notice.reason, notice.message};
      standing_workload_[notice.pod_group] = snapshot.workloads[outcome.workload].spec.name;
    }
    actions.notices.push_back(std::move(notice));
  }

  // The snapshot as the cycle must see it; and what the workloads asked for that their queue clamped.
  std::vector<std::pair<std::map<std::string, std::string>, double>> idle;
  for (WorkloadId id : snapshot.workloads.active()) {
    Workload& workload = snapshot.workloads[id];
    const std::string& name = workload.spec.name;
    if (const std::optional<double> until = ledger_.held_until(name)) workload.held_until = *until;
    if (ledger_.made_preemptible(name)) workload.spec.preemptible = true;
    const WorkLimits* limits = ledger_.limits(name);
    if (limits == nullptr) continue;
    std::vector<std::string>& said = clamped_said_[name];
    if (limits->clamped != said) {
      for (const std::string& sentence : limits->clamped) {
        actions.notices.push_back(notice_for(id, "Warning", "LimitClamped", sentence));
      }
      said = limits->clamped;
    }
    const LimitClock* clock = ledger_.clock(name);
    if (clock != nullptr && limits->idle_limit_seconds > 0 && snapshot.workloads.is_running(id, cluster)) {
      idle.push_back({{{"workload", snapshot.workload_keys[static_cast<size_t>(id)]}}, clock->idle_seconds});
    }
  }
  std::erase_if(clamped_said_, [&](const auto& entry) { return ledger_.limits(entry.first) == nullptr; });
  std::erase_if(standing_,
                [&](const auto& entry) { return ledger_.clock(standing_workload_[entry.first]) == nullptr; });
  std::erase_if(standing_workload_, [&](const auto& entry) { return !standing_.contains(entry.first); });
  metrics.set_gauge_family("tessera_workload_idle_seconds", std::move(idle));
  return actions;
}

}  // namespace tessera::adapter
