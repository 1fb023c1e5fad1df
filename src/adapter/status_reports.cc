#include "adapter/status_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "adapter/object_translation.h"
#include "wire/quantity.h"
#include "wire/timestamp.h"

namespace tessera::adapter {

using nlohmann::json;

std::string format_resource(std::string_view resource, double amount) {
  if (resource == "cpu") return wire::format_quantity_milli(static_cast<int64_t>(std::llround(amount)));
  if (resource == "memory") return wire::format_bytes(static_cast<int64_t>(std::llround(amount)));
  // GPUs (whole or per model) as a plain decimal, to the engine's thousandths.
  return fmt::format("{}", static_cast<double>(std::llround(amount * 1000)) / 1000);
}

namespace {

// The condition with its lastTransitionTime: kept from the object's condition of the same type
// while the status is the same, else `now`.
json with_transition_time(json condition, const json& current, double now) {
  condition["lastTransitionTime"] =
      condition_transition_time(current, condition.value("type", ""), condition.value("status", ""), now);
  return condition;
}

// A pending workload's start estimate: its expected time and cause, or why it has none. The time
// the object has is kept while the new one is within a minute or a tenth of the wait of it, so
// that an estimate that only drifts does not rewrite every PodGroup every cycle.
json start_estimate(const WaitingWorkload& waiting, const json& current, double now) {
  if (waiting.estimate.empty()) return nullptr;
  json estimate = {{"message", waiting.estimate}};
  if (!waiting.estimated_start) return estimate;
  estimate["time"] = wire::format_time(*waiting.estimated_start);
  const json old = current.is_object() ? current.value("/status/startEstimate"_json_pointer, json()) : json();
  if (old.is_object() && old.value("message", "") == waiting.estimate && old.contains("time") &&
      old["time"].is_string()) {
    const auto old_time = wire::parse_time(old["time"].get<std::string>());
    const double tolerance = std::max(60.0, 0.1 * (*waiting.estimated_start - now));
    if (old_time && std::abs(*old_time - *waiting.estimated_start) < tolerance) estimate["time"] = old["time"];
  }
  return estimate;
}

// Within a tenth of the old figure (exact for the first ten places), the old one is kept: every
// start would otherwise shift, and so rewrite, the place of everything behind it in a long queue.
bool within_a_tenth(const json& old, const char* field, std::int64_t now_value) {
  if (!old.contains(field) || !old[field].is_number_integer()) return false;
  const std::int64_t was = old[field].get<std::int64_t>();
  return was > 10 && std::abs(was - now_value) < was / 10;
}

json queue_position_json(const WaitingWorkload& waiting, const json& current) {
  if (!waiting.queue_place) return nullptr;
  json place = {{"queue", waiting.queue_place->queue},
                {"position", waiting.queue_place->position},
                {"pending", waiting.queue_place->pending}};
  const json old = current.is_object() ? current.value("/status/queuePosition"_json_pointer, json()) : json();
  if (!old.is_object() || old.value("queue", "") != waiting.queue_place->queue) return place;
  const std::int64_t position = waiting.queue_place->position;
  const std::int64_t pending = waiting.queue_place->pending;
  const bool same_position =
      old.value("position", std::int64_t{-1}) == position || within_a_tenth(old, "position", position);
  const bool same_pending =
      old.value("pending", std::int64_t{-1}) == pending || within_a_tenth(old, "pending", pending);
  return same_position && same_pending ? old : place;
}

json room_attempts_json(const WaitingWorkload& waiting) {
  if (waiting.room_attempts.empty()) return nullptr;
  json attempts = json::array();
  for (const RoomAttempt& attempt : waiting.room_attempts) {
    attempts.push_back({{"action", attempt.action}, {"outcome", attempt.outcome}});
  }
  return attempts;
}

}  // namespace

std::string condition_transition_time(const json& object, std::string_view type, std::string_view status, double now) {
  const json conditions = object.is_object() ? object.value("/status/conditions"_json_pointer, json()) : json();
  for (const json& old : conditions.is_array() ? conditions : json::array()) {
    if (old.is_object() && old.value("type", "") == type && old.value("status", "") == status &&
        old.contains("lastTransitionTime") && old["lastTransitionTime"].is_string()) {
      return old["lastTransitionTime"].get<std::string>();
    }
  }
  return wire::format_time(now);
}

json pod_group_status(const json& current, const Snapshot& snapshot, const PodGroupProgress& progress, double now) {
  const std::string key = current.value("/metadata/namespace"_json_pointer, std::string()) + "/" +
                          current.value("/metadata/name"_json_pointer, std::string());
  const int min_member = current.value("/spec/minMember"_json_pointer, 1);
  int scheduled = 0, running = 0, pending = 0, succeeded = 0, failed = 0;
  if (auto members = snapshot.pod_group_pods.find(key); members != snapshot.pod_group_pods.end()) {
    for (const std::string& pod : members->second) {
      const PodPhase phase = snapshot.pod_phases.at(pod);
      succeeded += phase == PodPhase::kSucceeded ? 1 : 0;
      failed += phase == PodPhase::kFailed ? 1 : 0;
      running += phase == PodPhase::kRunning ? 1 : 0;
      if (phase == PodPhase::kSucceeded || phase == PodPhase::kFailed) continue;
      if (progress.bound.contains(pod)) {
        ++scheduled;
      } else {
        ++pending;
      }
    }
  }
  std::string phase = "Pending";
  if (succeeded > 0 && scheduled == 0 && pending == 0 && failed == 0) {
    phase = "Succeeded";
  } else if (failed > 0 && scheduled == 0 && pending == 0) {
    phase = "Failed";
  } else if (scheduled + succeeded >= min_member && scheduled > 0) {
    phase = "Running";
  }
  json condition = {{"type", "Scheduled"}};
  auto waiting = progress.waiting.find(key);
  if (phase == "Running" || phase == "Succeeded" || phase == "Failed") {
    condition["status"] = "True";
    condition["reason"] = "Scheduled";
    condition["message"] = fmt::format("{} of {} pods bound", scheduled + succeeded + failed, min_member);
  } else if (waiting != progress.waiting.end()) {
    condition["status"] = "False";
    condition["reason"] = waiting->second->reason;
    condition["message"] = waiting->second->message;
  } else {
    condition["status"] = "False";
    condition["reason"] = "Waiting";
    condition["message"] = "waiting for the next scheduling cycle";
  }
  condition = with_transition_time(std::move(condition), current, now);
  json conditions = json::array({condition});
  if (auto limit = progress.limits.find(key); limit != progress.limits.end()) {
    conditions.push_back(with_transition_time({{"type", "WorkLimit"},
                                               {"status", limit->second.in_force ? "True" : "False"},
                                               {"reason", limit->second.reason},
                                               {"message", limit->second.message}},
                                              current, now));
  }
  // What only a waiting workload has; null clears it once it runs.
  const WaitingWorkload* waits = phase == "Pending" && waiting != progress.waiting.end() ? waiting->second : nullptr;
  json status = {{"phase", phase},
                 {"scheduled", scheduled},
                 {"running", running},
                 {"pending", pending},
                 {"succeeded", succeeded},
                 {"failed", failed},
                 {"conditions", std::move(conditions)},
                 {"startEstimate", waits ? start_estimate(*waits, current, now) : json(nullptr)},
                 {"queuePosition", waits ? queue_position_json(*waits, current) : json(nullptr)},
                 {"roomAttempts", waits ? room_attempts_json(*waits) : json(nullptr)}};
  const RestartTally* tally = progress.restarts ? progress.restarts->tally(key) : nullptr;
  if (tally) status.update(restart_status(*tally));
  return status;
}

std::map<std::string, json> queue_statuses(const Snapshot& snapshot, const CycleResult& result,
                                           const std::map<std::string, kube::ObjectPtr>& current, double now) {
  const auto accepted = [&](const std::string& name, const char* status, const std::string& reason,
                            const std::string& message) {
    json condition = {{"type", "Accepted"}, {"status", status}, {"reason", reason}, {"message", message}};
    auto object = current.find(name);
    return with_transition_time(std::move(condition), object == current.end() ? json::object() : *object->second, now);
  };
  const QueueTree& tree = *snapshot.tree;
  const ResourceNames& resources = tree.resources();
  std::vector<int> running(tree.size(), 0), pending(tree.size(), 0);
  // What the pods still waiting ask for (a running workload's elastic extras included): the
  // part of `requested` that is not allocated, before a limit caps it.
  std::vector<ResourceVector> waiting(tree.size(), ResourceVector(resources.size(), 0.0));
  for (WorkloadId id : snapshot.workloads.active()) {
    const Workload& workload = snapshot.workloads[id];
    const bool is_running = snapshot.workloads.is_running(id, *snapshot.cluster);
    ResourceVector asked(resources.size(), 0.0);
    for (PodId pod : workload.pods) {
      if (!snapshot.cluster->binding(pod)) snapshot.meter->add_pending(snapshot.cluster->pod(pod), asked);
    }
    for (QueueIndex queue = workload.queue; queue != QueueTree::kNoParent; queue = tree.parent(queue)) {
      (is_running ? running : pending)[queue] += 1;
      for (ResourceId resource = 0; resource < resources.size(); ++resource) waiting[queue][resource] += asked[resource];
    }
  }
  std::map<std::string, json> statuses;
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
    json allocated = json::object(), requested = json::object(), fair = json::object();
    json deserved = json::object(), pending_requested = json::object();
    for (ResourceId resource = 0; resource < resources.size(); ++resource) {
      const std::string& name = resources.name(resource);
      deserved[name] = format_resource(name, tree.quota(queue, resource).deserved);
      pending_requested[name] = format_resource(name, waiting[queue][resource]);
      if (queue < result.allocated_after.size()) {
        allocated[name] = format_resource(name, resource_at(result.allocated_after[queue], resource));
      }
      if (queue < result.shares.demand.size()) {
        requested[name] = format_resource(name, resource_at(result.shares.demand[queue], resource));
        fair[name] = format_resource(name, resource_at(result.shares.fair_share[queue], resource));
      }
    }
    const std::string& name = tree.spec(queue).name;
    std::string reason = "Valid", message = "the queue takes part in scheduling";
    for (const QueueProblem& warning : snapshot.queue_problems) {
      if (!warning.excluded && warning.queue == name) {
        reason = warning.reason;
        message = warning.message;
      }
    }
    statuses[name] = {{"deserved", deserved},
                      {"allocated", allocated},
                      {"requested", requested},
                      {"pendingRequested", pending_requested},
                      {"fairShare", fair},
                      {"runningWorkloads", running[queue]},
                      {"pendingWorkloads", pending[queue]},
                      {"conditions", json::array({accepted(name, "True", reason, message)})}};
  }
  for (const QueueProblem& problem : snapshot.queue_problems) {
    if (!problem.excluded) continue;
    // The figures of a queue left out are removed (null deletes in a merge patch).
    statuses[problem.queue] = {
        {"deserved", nullptr},
        {"allocated", nullptr},
        {"requested", nullptr},
        {"pendingRequested", nullptr},
        {"fairShare", nullptr},
        {"runningWorkloads", nullptr},
        {"pendingWorkloads", nullptr},
        {"conditions", json::array({accepted(problem.queue, "False", problem.reason, problem.message)})}};
  }
  return statuses;
}

bool status_differs(const json& object, const json& status) {
  if (!object.contains("status")) return true;
  json a = object["status"], b = status;
  // A null member deletes the field in a merge patch: absent is what it asks for.
  if (b.is_object()) {
    for (auto it = b.begin(); it != b.end();) it = it->is_null() ? b.erase(it) : std::next(it);
  }
  for (json* side : {&a, &b}) {
    if (side->contains("conditions") && (*side)["conditions"].is_array()) {
      for (json& condition : (*side)["conditions"]) condition.erase("lastTransitionTime");
    }
  }
  return a != b;
}

}  // namespace tessera::adapter
