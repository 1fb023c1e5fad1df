// `tessera describe WORKLOAD`: the whole story of one workload from what the cluster holds — its
// PodGroup's spec and status (the Scheduled condition says why it waits), its pods and where
// they run, the GPU quota figures of its queue and the queues above it, and the recent events of
// the PodGroup, the object that owns it (a Job...) and its pods. Pure functions of the objects.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace tessera::cli {

// The story as data (what -o json and -o yaml print): podGroup (the object), owner, pods, queues
// (its queue first, then each parent) and events (oldest first, the last `max_events`).
nlohmann::json workload_story(const nlohmann::json& pod_group, const nlohmann::json& pods,
                              const std::map<std::string, std::string>& pod_group_of_pod,
                              const nlohmann::json& queues, const nlohmann::json& events, size_t max_events = 20);

// The story as text, as `kubectl describe` lays it out; `now` in Unix seconds for the ages.
std::string describe_text(const nlohmann::json& story, double now);

}  // namespace tessera::cli
