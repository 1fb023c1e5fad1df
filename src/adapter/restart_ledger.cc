#include "adapter/restart_ledger.h"

#include <algorithm>
#include <cmath>

#include "wire/timestamp.h"

namespace tessera::adapter {

using nlohmann::json;

double last_checkpoint(const json& pod_group) {
  const json annotations = pod_group.value("/metadata/annotations"_json_pointer, json::object());
  if (!annotations.is_object()) return 0;
  auto it = annotations.find(std::string(kCheckpointAnnotation));
  if (it == annotations.end() || !it->is_string()) return 0;
  auto parsed = wire::parse_time(it->get<std::string>());
  return parsed ? *parsed : 0;
}

bool RestartLedger::read_back(const std::string& key, const json& pod_group) {
  auto [it, inserted] = tallies_.try_emplace(key);
  if (!inserted) return false;
  RestartTally& tally = it->second;
  const json status = pod_group.value("status", json::object());
  if (!status.is_object()) return true;
  if (auto restarts = status.find("restarts"); restarts != status.end() && restarts->is_number_integer()) {
    tally.restarts = std::max(0, restarts->get<int>());
  }
  if (auto lost = status.find("lostGpuHours"); lost != status.end() && lost->is_number()) {
    tally.lost_gpu_hours = std::max(0.0, lost->get<double>());
  }
  tally.last_restart_reason = status.value("lastRestartReason", "");
  const json interruption = status.value("interruption", json());
  if (interruption.is_object() && interruption.value("reason", json()).is_string()) {
    tally.interrupted_by = interruption["reason"].get<std::string>();
    auto at = wire::parse_time(interruption.value("time", ""));
    tally.interrupted_at = at ? *at : 0;
    auto run = wire::parse_time(interruption.value("runStarted", ""));
    tally.run_started_at = run ? *run : 0;
  }
  return true;
}

bool RestartLedger::pods_failed(const std::string& key, const std::vector<std::string>& failed, bool first_sight) {
  RestartTally& tally = tallies_[key];
  bool new_failure = false;
  for (const std::string& pod : failed) new_failure = tally.failed_pods.insert(pod).second || new_failure;
  // Pods deleted since (their controller cleaned up) need not be remembered.
  std::erase_if(tally.failed_pods,
                [&](const std::string& pod) { return std::ranges::find(failed, pod) == failed.end(); });
  return new_failure && !first_sight;
}

double RestartLedger::interrupted(const Interruption& interruption) {
  RestartTally& tally = tallies_[interruption.pod_group];
  if (tally.interrupted_by) return 0;
  const double lost = interruption.gpus * std::max(0.0, interruption.at - interruption.run_from) / 3600.0;
  tally.lost_gpu_hours += lost;
  tally.interrupted_by = interruption.reason;
  tally.interrupted_at = interruption.at;
  tally.run_started_at = interruption.started_at;
  tally.run_pods = interruption.run_pods;
  return lost;
}

std::optional<std::string> RestartLedger::started(const std::string& key, double started_at,
                                                  const std::set<std::string>& pods) {
  auto it = tallies_.find(key);
  if (it == tallies_.end() || !it->second.interrupted_by) return std::nullopt;
  RestartTally& tally = it->second;
  const bool new_run =
      tally.run_pods.empty()
          ? started_at > tally.run_started_at
          : std::ranges::any_of(pods, [&](const std::string& uid) { return !tally.run_pods.contains(uid); });
  if (!new_run) return std::nullopt;
  std::string reason = *tally.interrupted_by;
  tally.interrupted_by.reset();
  tally.run_pods.clear();
  tally.restarts += 1;
  tally.last_restart_reason = reason;
  return reason;
}

const RestartTally* RestartLedger::tally(const std::string& key) const {
  auto it = tallies_.find(key);
  return it == tallies_.end() ? nullptr : &it->second;
}

void RestartLedger::keep_only(const std::set<std::string>& keys) {
  std::erase_if(tallies_, [&](const auto& entry) { return !keys.contains(entry.first); });
}

json restart_status(const RestartTally& tally) {
  json status = json::object();
  if (tally.restarts == 0 && tally.lost_gpu_hours == 0 && !tally.interrupted_by) return status;
  status["restarts"] = tally.restarts;
  // To 1/10,000 of a GPU-hour (0.36 GPU-seconds).
  status["lostGpuHours"] = std::round(tally.lost_gpu_hours * 1e4) / 1e4;
  if (!tally.last_restart_reason.empty()) status["lastRestartReason"] = tally.last_restart_reason;
  status["interruption"] = tally.interrupted_by ? json{{"reason", *tally.interrupted_by},
                                                       {"time", wire::format_time(tally.interrupted_at)},
                                                       {"runStarted", wire::format_time(tally.run_started_at)}}
                                                : json();
  return status;
}

}  // namespace tessera::adapter
