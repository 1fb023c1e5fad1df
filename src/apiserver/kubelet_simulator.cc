#include "apiserver/kubelet_simulator.h"

#include <fmt/format.h>

#include <cmath>

#include "wire/duration.h"
#include "wire/timestamp.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

const json& field(const json& object, const char* first, const char* second) {
  static const json kNull;
  if (!object.contains(first) || !object[first].is_object() || !object[first].contains(second)) return kNull;
  return object[first][second];
}

std::string text(const json& value) { return value.is_string() ? value.get<std::string>() : ""; }

json condition(const char* type, bool status, const std::string& now, const char* reason = nullptr) {
  json entry = {
      {"type", type}, {"status", status ? "True" : "False"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", now}};
  if (reason != nullptr) entry["reason"] = reason;
  return entry;
}

// Keeps the transition time of a condition whose status does not change.
json merge_conditions(const json& before, json after) {
  if (!before.is_array()) return after;
  for (json& condition : after) {
    for (const json& old : before) {
      if (old.value("type", "") == condition.value("type", "") &&
          old.value("status", "") == condition.value("status", "")) {
        condition["lastTransitionTime"] = old.value("lastTransitionTime", condition["lastTransitionTime"]);
      }
    }
  }
  return after;
}

std::string container_id(const std::string& uid, const std::string& name) {
  return fmt::format("containerd://{:016x}{:016x}", std::hash<std::string>{}(uid + name),
                     std::hash<std::string>{}(name + uid));
}

json container_statuses(const json& pod, const char* list, const std::string& now, bool running, bool finished) {
  json statuses = json::array();
  const json& containers = field(pod, "spec", list);
  if (!containers.is_array()) return statuses;
  const std::string uid = pod["metadata"].value("uid", "");
  const std::string started = text(field(pod, "status", "startTime"));
  for (const json& container : containers) {
    const std::string name = container.value("name", "");
    const std::string image = container.value("image", "");
    json state;
    if (finished) {
      state = {{"terminated",
                {{"exitCode", 0},
                 {"reason", "Completed"},
                 {"startedAt", started.empty() ? now : started},
                 {"finishedAt", now},
                 {"containerID", container_id(uid, name)}}}};
    } else {
      state = {{"running", {{"startedAt", now}}}};
    }
    statuses.push_back({{"name", name},
                        {"image", image},
                        {"imageID", fmt::format("{}@sha256:{:016x}", image, std::hash<std::string>{}(image))},
                        {"containerID", container_id(uid, name)},
                        {"ready", running && !finished},
                        {"started", running && !finished},
                        {"restartCount", 0},
                        {"state", state},
                        {"lastState", json::object()}});
  }
  return statuses;
}

}  // namespace

KubeletSimulator::KubeletSimulator(ResourceApi& api, KubeletOptions options)
    : api_(api), options_(options), pods_(*api.registry().find("", "v1", "pods")) {}

KubeletSimulator::~KubeletSimulator() { stop(); }

void KubeletSimulator::start() {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this] { run(); });
}

void KubeletSimulator::stop() {
  if (!running_.exchange(false)) return;
  api_.store().wake_waiters();
  if (thread_.joinable()) thread_.join();
}

void KubeletSimulator::relist() {
  ApiResult<ObjectList> pods = api_.store().list(pods_.storage_key(), "");
  position_ = pods->revision;
  for (const ObjectPtr& pod : pods->items) observe_safely(*pod);
}

void KubeletSimulator::run() {
  relist();
  while (running_) {
    auto wait = std::chrono::milliseconds(200);
    if (!timers_.empty()) {
      const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(timers_.begin()->first - Clock::now());
      wait = std::clamp(until, std::chrono::milliseconds(0), wait);
    }
    EventBatch batch = api_.store().events_after(position_, wait);
    if (batch.expired) {
      relist();
    } else {
      for (const StoredEvent& event : batch.events) {
        if (event.resource != pods_.storage_key()) continue;
        if (event.type == EventType::kDeleted) {
          const std::string uid = meta_string(*event.object, "uid");
          for (Action action : {Action::kStart, Action::kComplete, Action::kRemove}) scheduled_.erase({uid, action});
        } else {
          observe_safely(*event.object);
        }
      }
      position_ = std::max(position_, batch.revision);
    }
    while (running_ && !timers_.empty() && timers_.begin()->first <= Clock::now()) {
      const Task task = timers_.begin()->second;
      timers_.erase(timers_.begin());
      try {
        perform(task);
      } catch (const nlohmann::json::exception&) {
        // A pod whose fields have unexpected types: a real kubelet would not run it either.
      }
    }
  }
}

void KubeletSimulator::observe_safely(const json& pod) {
  try {
    observe(pod);
  } catch (const nlohmann::json::exception&) {
    // Ignored, as in perform(): the kubelet leaves such a pod alone.
  }
}

void KubeletSimulator::schedule(Clock::time_point when, Action action, const json& pod) {
  const std::string uid = meta_string(pod, "uid");
  if (!scheduled_.insert({uid, action}).second) return;
  timers_.emplace(when, Task{action, meta_string(pod, "namespace"), meta_string(pod, "name"), uid});
}

void KubeletSimulator::observe(const json& pod) {
  const std::string node = text(field(pod, "spec", "nodeName"));
  if (node.empty()) return;
  const json& metadata = pod["metadata"];
  const std::string phase = text(field(pod, "status", "phase"));
  if (metadata.contains("deletionTimestamp")) {
    // Stop the containers, then let the API server forget the pod. A zero grace period means
    // the pod waits on finalizers, which are not the kubelet's business.
    const int64_t grace = metadata.value("deletionGracePeriodSeconds", int64_t{0});
    if (grace > 0) {
      schedule(Clock::now() + std::min(options_.termination_delay, std::chrono::milliseconds(grace * 1000)),
               Action::kRemove, pod);
    }
    return;
  }
  if (phase == "Pending") {
    if (node_ip(node)) schedule(Clock::now() + options_.pod_start_delay, Action::kStart, pod);
    return;
  }
  if (phase == "Running") {
    const std::string duration_text =
        metadata.contains("annotations") ? metadata["annotations"].value(kDurationAnnotation, "") : "";
    Result<double> seconds = wire::parse_duration_seconds(duration_text);
    if (!seconds || *seconds < 0) return;
    const std::chrono::milliseconds duration{std::llround(*seconds * 1000)};
    // The run time counts from the pod's start, as its status records it.
    Clock::time_point finish = Clock::now() + duration;
    if (Result<wire::WallClock::time_point> started = wire::parse_time_point(text(field(pod, "status", "startTime")))) {
      finish = Clock::now() + std::chrono::duration_cast<Clock::duration>(*started + duration - wire::WallClock::now());
    }
    schedule(finish, Action::kComplete, pod);
  }
}

std::optional<std::string> KubeletSimulator::node_ip(const std::string& node) {
  ObjectPtr object = api_.store().get("nodes", "", node);
  if (!object) return std::nullopt;
  const json& addresses = field(*object, "status", "addresses");
  if (addresses.is_array()) {
    for (const json& address : addresses) {
      if (address.value("type", "") == "InternalIP") return address.value("address", "");
    }
  }
  return std::string();
}

std::string KubeletSimulator::next_pod_ip(const std::string& node) {
  ObjectPtr object = api_.store().get("nodes", "", node);
  std::string cidr = object ? text(field(*object, "spec", "podCIDR")) : "";
  if (cidr.size() < 5 || !cidr.ends_with(".0/24")) cidr = "10.255.0.0/24";
  const uint32_t host = pod_ip_counters_[node]++ % 253 + 2;
  return fmt::format("{}.{}", cidr.substr(0, cidr.size() - 5), host);
}

void KubeletSimulator::perform(const Task& task) {
  const std::string now = wire::format_time(wire::WallClock::now());
  // The pod may have changed since the task was planned: each edit checks it still applies.
  auto same_pod = [&](const json& pod) {
    return meta_string(pod, "uid") == task.uid && !pod["metadata"].contains("deletionTimestamp");
  };
  switch (task.action) {
    case Action::kStart: {
      const std::string node_name = [&] {
        ObjectPtr pod = api_.store().get(pods_.storage_key(), task.namespace_name, task.name);
        return pod ? text(field(*pod, "spec", "nodeName")) : std::string();
      }();
      const std::string host_ip = node_ip(node_name).value_or("");
      const std::string pod_ip = next_pod_ip(node_name);
      (void)api_.update_with(
          pods_, task.namespace_name, task.name,
          [&](const json& current) -> ApiResult<json> {
            if (!same_pod(current) || text(field(current, "status", "phase")) != "Pending") return current;
            json pod = current;
            json& status = pod["status"];
            status["phase"] = "Running";
            status["startTime"] = now;
            status["hostIP"] = host_ip;
            status["hostIPs"] = json::array({{{"ip", host_ip}}});
            status["podIP"] = pod_ip;
            status["podIPs"] = json::array({{{"ip", pod_ip}}});
            status["conditions"] = merge_conditions(
                status.value("conditions", json::array()),
                json::array({condition("Initialized", true, now), condition("Ready", true, now),
                             condition("ContainersReady", true, now), condition("PodScheduled", true, now)}));
            status["containerStatuses"] = container_statuses(pod, "containers", now, true, false);
            if (field(pod, "spec", "initContainers").is_array()) {
              status["initContainerStatuses"] = container_statuses(pod, "initContainers", now, true, true);
            }
            return pod;
          },
          true);
      break;
    }
    case Action::kComplete:
      (void)api_.update_with(
          pods_, task.namespace_name, task.name,
          [&](const json& current) -> ApiResult<json> {
            if (!same_pod(current) || text(field(current, "status", "phase")) != "Running") return current;
            json pod = current;
            json& status = pod["status"];
            status["phase"] = "Succeeded";
            status["conditions"] =
                merge_conditions(status.value("conditions", json::array()),
                                 json::array({condition("Initialized", true, now, "PodCompleted"),
                                              condition("Ready", false, now, "PodCompleted"),
                                              condition("ContainersReady", false, now, "PodCompleted"),
                                              condition("PodScheduled", true, now)}));
            status["containerStatuses"] = container_statuses(pod, "containers", now, true, true);
            return pod;
          },
          true);
      break;
    case Action::kRemove: {
      DeleteOptions options;
      options.grace_period_seconds = 0;
      options.precondition_uid = task.uid;
      (void)api_.remove(pods_, task.namespace_name, task.name, options);
      break;
    }
  }
}

}  // namespace tessera::apiserver
