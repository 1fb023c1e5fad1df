#include "adapter/metrics.h"

#include <fmt/format.h>

namespace tessera::adapter {

namespace {

std::string escape_label(const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  return escaped;
}

std::string render_labels(const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return "";
  std::string text = "{";
  for (const auto& [key, value] : labels) {
    if (text.size() > 1) text += ',';
    text += fmt::format("{}=\"{}\"", key, escape_label(value));
  }
  return text + "}";
}

std::string render_value(double value) { return fmt::format("{}", value); }

}  // namespace

std::string_view metric_help(std::string_view name) {
  if (name == "tessera_cycle_duration_seconds") return "Duration of a scheduling cycle, snapshot to decisions.";
  if (name == "tessera_cycle_action_seconds") return "Duration of each action in the last cycle.";
  if (name == "tessera_pods_scheduled_total") return "Pods bound to a node.";
  if (name == "tessera_bind_errors_total") return "Bindings the API server refused or that failed.";
  if (name == "tessera_evictions_total") return "Pods evicted through the Eviction API, by action.";
  if (name == "tessera_eviction_refusals_total") return "Evictions refused (429, a PodDisruptionBudget).";
  if (name == "tessera_pending_workloads") return "Workloads waiting at the end of the last cycle, by reason.";
  if (name == "tessera_gpu_memory_bytes") {
    return "GPU memory of each node pool: capacity, bound pods' requests and limits, and the cap the pool's "
           "overcommit puts on limits.";
  }
  if (name == "tessera_gpu_memory_limit_pending_workloads") {
    return "Workloads waiting because nodes had room for a pod's GPU memory request but not for its limit.";
  }
  if (name == "tessera_reserved_nodes") return "Nodes reserved for waiting workloads after the last cycle.";
  if (name == "tessera_estimate_seconds") return "Wall-clock time the last cycle's start-time estimates took.";
  if (name == "tessera_estimated_workloads") return "Waiting workloads the last cycle gave a start estimate.";
  if (name == "tessera_unestimated_workloads") {
    return "Waiting workloads the last cycle's estimates did not reach (no expected end, or a bound hit).";
  }
  if (name == "tessera_queue_allocated") return "Resources a queue holds (gpu in GPUs, cpu in cores, memory in bytes).";
  if (name == "tessera_queue_fair_share") return "A queue's fair share from the last cycle.";
  if (name == "tessera_queue_deserved") return "A queue's deserved quota.";
  if (name == "tessera_queue_requested") return "What a queue's workloads request, running and pending.";
  if (name == "tessera_leader") return "1 while this replica holds the leader lease.";
  if (name == "tessera_cache_synced") return "1 when every informer has listed and watches.";
  if (name == "tessera_informer_relists_total") return "Relists after 410 Gone, by resource.";
  if (name == "tessera_cycles_total") return "Scheduling cycles run.";
  if (name == "tessera_api_errors_total") {
    return "Writes that failed for another reason than an answer about the object, by operation.";
  }
  if (name == "tessera_events_written_total") return "Event writes: objects created, updated (count grows), failed.";
  if (name == "tessera_api_connection_retries_total") {
    return "Requests sent again on a new connection after the server had closed a kept-alive one.";
  }
  if (name == "tessera_workload_idle_seconds") {
    return "Seconds every GPU of a running workload with an idle-GPU limit has stayed idle, by workload.";
  }
  if (name == "tessera_workloads_ended_total") return "Workloads stopped by a limit, by rule (idle, max-runtime).";
  if (name == "tessera_workloads_requeued_total") return "Workloads requeued by a limit, by rule (idle, max-runtime).";
  if (name == "tessera_workloads_made_preemptible_total") return "Workloads a limit made preemptible, by rule.";
  if (name == "tessera_gpu_telemetry_up") return "1 while the last read of GPU utilisation from Prometheus succeeded.";
  if (name == "tessera_gpu_telemetry_errors_total") return "Reads of GPU utilisation from Prometheus that failed.";
  return "Tessera scheduler metric.";
}

void Metrics::observe_cycle(double seconds, const std::map<std::string, double>& action_seconds) {
  std::lock_guard lock(mutex_);
  ++cycle_count_;
  cycle_sum_ += seconds;
  for (size_t i = 0; i < kDurationBuckets.size(); ++i) {
    if (seconds <= kDurationBuckets[i]) ++cycle_buckets_[i];
  }
  last_action_seconds_ = action_seconds;
}

void Metrics::add_counter(const std::string& name, const std::map<std::string, std::string>& labels, double value) {
  std::lock_guard lock(mutex_);
  counters_[name][labels] += value;
}

void Metrics::set_gauge_family(const std::string& name,
                               std::vector<std::pair<std::map<std::string, std::string>, double>> samples) {
  std::lock_guard lock(mutex_);
  auto& family = gauges_[name];
  family.clear();
  for (auto& [labels, value] : samples) family[std::move(labels)] = value;
}

void Metrics::set_gauge(const std::string& name, double value) {
  std::lock_guard lock(mutex_);
  auto& family = gauges_[name];
  family.clear();
  family[{}] = value;
}

std::string Metrics::render() const {
  std::lock_guard lock(mutex_);
  std::string text;
  auto header = [&](std::string_view name, std::string_view type) {
    text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, metric_help(name), name, type);
  };
  header("tessera_cycle_duration_seconds", "histogram");
  for (size_t i = 0; i < kDurationBuckets.size(); ++i) {
    text +=
        fmt::format("tessera_cycle_duration_seconds_bucket{{le=\"{}\"}} {}\n", kDurationBuckets[i], cycle_buckets_[i]);
  }
  text += fmt::format("tessera_cycle_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", cycle_count_);
  text += fmt::format("tessera_cycle_duration_seconds_sum {}\n", render_value(cycle_sum_));
  text += fmt::format("tessera_cycle_duration_seconds_count {}\n", cycle_count_);
  header("tessera_cycle_action_seconds", "gauge");
  for (const auto& [action, seconds] : last_action_seconds_) {
    text +=
        fmt::format("tessera_cycle_action_seconds{{action=\"{}\"}} {}\n", escape_label(action), render_value(seconds));
  }
  for (const auto& [name, samples] : counters_) {
    header(name, "counter");
    for (const auto& [labels, value] : samples)
      text += fmt::format("{}{} {}\n", name, render_labels(labels), render_value(value));
  }
  for (const auto& [name, samples] : gauges_) {
    header(name, "gauge");
    for (const auto& [labels, value] : samples)
      text += fmt::format("{}{} {}\n", name, render_labels(labels), render_value(value));
  }
  return text;
}

}  // namespace tessera::adapter
