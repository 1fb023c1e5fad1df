#include "cli/user/workload_story.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "cli/user/object_reads.h"
#include "cli/user/output.h"
#include "cli/user/queue_view.h"
#include "cli/user/workload_view.h"
#include "core/gpu_request.h"
#include "wire/timestamp.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

// When an event last happened: lastTimestamp, else eventTime (events.k8s.io's), else its creation.
std::string event_time(const json& event) {
  for (const char* pointer : {"/lastTimestamp", "/eventTime", "/firstTimestamp", "/metadata/creationTimestamp"}) {
    if (std::string time = text_at(event, pointer); !time.empty()) return time;
  }
  return "";
}

json pod_line(const json& pod) {
  const json scheduled = condition_of(pod, "PodScheduled");
  const bool waiting = scheduled.is_object() && scheduled.value("status", "") == "False";
  const json annotations = pod.value("/metadata/annotations"_json_pointer, json::object());
  return {{"name", text_at(pod, "/metadata/name")},
          {"uid", text_at(pod, "/metadata/uid")},
          {"phase", text_at(pod, "/status/phase").empty() ? "Pending" : text_at(pod, "/status/phase")},
          {"node", text_at(pod, "/spec/nodeName")},
          {"gpus", gpu_request_text({pod_gpu_request(pod)})},
          {"gpuIndex", annotations.is_object() ? annotations.value("scheduling.tessera.dev/gpu-index", "") : ""},
          {"waiting", waiting ? scheduled.value("message", "") : ""}};
}

// Its queue, then each parent up to the top.
json queue_path(const json& queues, const std::string& leaf) {
  std::map<std::string, QueueFigures> by_name;
  for (const QueueFigures& figures : queue_tree(queues)) by_name.emplace(figures.name, figures);
  std::vector<QueueFigures> path;
  std::set<std::string> seen;
  for (std::string name = leaf; !name.empty() && by_name.contains(name) && seen.insert(name).second;
       name = by_name.at(name).parent) {
    path.push_back(by_name.at(name));
  }
  return queue_json(path)["items"];
}

std::string indented(const std::string& text, size_t spaces) {
  std::istringstream lines(text);
  std::string out, line;
  while (std::getline(lines, line)) out += std::string(spaces, ' ') + line + "\n";
  return out;
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

std::string since(const std::string& time, double now) {
  Result<double> at = wire::parse_time(time);
  return at ? fmt::format("{} ({} ago)", time, age_text(*at, now)) : or_dash(time);
}

}  // namespace

json workload_story(const json& pod_group, const json& pods, const std::map<std::string, std::string>& pod_group_of_pod,
                    const json& queues, const json& events, size_t max_events) {
  const std::string key = object_key(pod_group);
  json story = {{"kind", "WorkloadDescription"}, {"podGroup", pod_group}};
  // As kubectl get -o yaml: the server's bookkeeping of who wrote which field is noise here.
  if (story["podGroup"].contains("metadata")) story["podGroup"]["metadata"].erase("managedFields");
  std::set<std::string> uids = {text_at(pod_group, "/metadata/uid")};
  std::set<std::pair<std::string, std::string>> named = {{"PodGroup", text_at(pod_group, "/metadata/name")}};
  json owners = pod_group.value("/metadata/ownerReferences"_json_pointer, json::array());
  story["owner"] = nullptr;
  if (owners.is_array() && !owners.empty() && owners[0].is_object()) {
    story["owner"] = {{"kind", owners[0].value("kind", "")}, {"name", owners[0].value("name", "")}};
    uids.insert(owners[0].value("uid", ""));
    named.insert({owners[0].value("kind", ""), owners[0].value("name", "")});
  }
  story["pods"] = json::array();
  for (const json& pod : list_items(pods)) {
    auto group = pod_group_of_pod.find(object_key(pod));
    if (group == pod_group_of_pod.end() || group->second != key) continue;
    story["pods"].push_back(pod_line(pod));
    uids.insert(text_at(pod, "/metadata/uid"));
    named.insert({"Pod", text_at(pod, "/metadata/name")});
  }
  story["queues"] = queue_path(queues, text_at(pod_group, "/spec/queue"));
  std::vector<json> related;
  for (const json& event : list_items(events)) {
    const std::string uid = text_at(event, "/involvedObject/uid");
    const bool about = uid.empty() ? named.contains({text_at(event, "/involvedObject/kind"),
                                                     text_at(event, "/involvedObject/name")})
                                   : uids.contains(uid);
    if (!about) continue;
    const json count = event.value("count", json(1));
    related.push_back({{"time", event_time(event)},
                       {"type", text_at(event, "/type")},
                       {"reason", text_at(event, "/reason")},
                       {"object", text_at(event, "/involvedObject/kind") + "/" + text_at(event, "/involvedObject/name")},
                       {"count", count.is_number_integer() ? count.get<int>() : 1},
                       {"message", text_at(event, "/message")}});
  }
  // RFC 3339 times in UTC sort as text.
  std::stable_sort(related.begin(), related.end(),
                   [](const json& a, const json& b) { return a["time"].get<std::string>() < b["time"].get<std::string>(); });
  if (related.size() > max_events) related.erase(related.begin(), related.end() - static_cast<ptrdiff_t>(max_events));
  story["events"] = related;
  return story;
}

std::string describe_text(const json& story, double now) {
  const json& group = story["podGroup"];
  std::string out;
  const auto field = [&](const char* name, const std::string& value) { out += fmt::format("{:<13}{}\n", name, value); };
  field("Name:", text_at(group, "/metadata/name"));
  field("Namespace:", text_at(group, "/metadata/namespace"));
  field("Owner:", story["owner"].is_object()
                      ? story["owner"]["kind"].get<std::string>() + "/" + story["owner"]["name"].get<std::string>()
                      : "-");
  field("Queue:", or_dash(text_at(group, "/spec/queue")));
  field("Type:", text_at(group, "/spec/workloadType").empty() ? "train" : text_at(group, "/spec/workloadType"));
  const json min_member = group.value("/spec/minMember"_json_pointer, json(1));
  field("Min member:", min_member.dump());
  if (const json priority = group.value("/spec/priority"_json_pointer, json()); !priority.is_null()) {
    field("Priority:", priority.dump());
  }
  if (const json preemptible = group.value("/spec/preemptible"_json_pointer, json()); preemptible.is_boolean()) {
    field("Preemptible:", preemptible.get<bool>() ? "true" : "false");
  }
  field("State:", text_at(group, "/status/phase").empty() ? "Pending" : text_at(group, "/status/phase"));
  field("Created:", since(text_at(group, "/metadata/creationTimestamp"), now));
  const json scheduled = condition_of(group, "Scheduled");
  if (scheduled.is_object()) {
    field("Scheduled:", fmt::format("{} ({}) since {}", scheduled.value("status", ""), scheduled.value("reason", ""),
                                    since(scheduled.value("lastTransitionTime", ""), now)));
    field(scheduled.value("status", "") == "False" ? "Why:" : "Message:", scheduled.value("message", ""));
  } else {
    field("Scheduled:", "not reported yet: the scheduler has not seen this workload (is it running?)");
  }
  if (const json estimate = group.value("/status/startEstimate"_json_pointer, json()); estimate.is_object()) {
    const std::string message = estimate.value("message", "");
    const std::string time = estimate.value("time", "");
    const Result<double> at = wire::parse_time(time);
    field("Estimate:", at ? fmt::format("{} (at {}): {}", estimate_wait_text(*at, message, now), time, message)
                          : message);
  }

  if (const json place = group.value("/status/queuePosition"_json_pointer, json()); place.is_object()) {
    field("Position:", fmt::format("{} of {} pending in queue {} (1 is considered first)", place.value("position", 0),
                                   place.value("pending", 0), place.value("queue", "")));
  }
  if (const json attempts = group.value("/status/roomAttempts"_json_pointer, json()); attempts.is_array()) {
    const char* label = "Room:";
    for (const json& attempt : attempts) {
      if (!attempt.is_object()) continue;
      field(label, fmt::format("{} tried: {}", attempt.value("action", ""), attempt.value("outcome", "")));
      label = "";
    }
  }

  const json& pods = story["pods"];
  const auto bound = std::count_if(pods.begin(), pods.end(), [](const json& pod) { return !pod["node"].get<std::string>().empty(); });
  field("Pods:", fmt::format("{} bound of {} needed to start; {} exist", bound, min_member.dump(), pods.size()));
  if (!pods.empty()) {
    Table table{{{"NAME"}, {"PHASE"}, {"NODE"}, {"GPUS"}, {"DEVICES"}, {"WAITING"}}, {}};
    for (const json& pod : pods) {
      table.add_row({pod["name"], pod["phase"], or_dash(pod["node"]), pod["gpus"], or_dash(pod["gpuIndex"]),
                     shorten(or_dash(pod["waiting"]), 70)});
    }
    out += indented(render_table(table, false, ""), 2);
  }

  out += "Quota (GPUs):\n";
  if (story["queues"].empty()) {
    out += "  its queue is not among the cluster's Queues\n";
  } else {
    Table table{{{"QUEUE"}, {"DESERVED"}, {"FAIR-SHARE"}, {"ALLOCATED"}, {"BORROWED"}, {"PENDING"}}, {}};
    const auto figure = [](const json& value) {
      return value.is_number() ? gpu_figure(value.get<double>()) : std::string("-");
    };
    for (const json& queue : story["queues"]) {
      const json& gpu = queue["gpu"];
      table.add_row({queue["name"], figure(gpu["deserved"]), figure(gpu["fairShare"]), figure(gpu["allocated"]),
                     figure(gpu["borrowed"]), figure(gpu["pending"])});
    }
    out += indented(render_table(table, false, ""), 2);
  }

  out += "Events:";
  if (story["events"].empty()) return out + " <none>\n";
  out += "\n";
  Table table{{{"LAST SEEN"}, {"TYPE"}, {"REASON"}, {"OBJECT"}, {"COUNT"}, {"MESSAGE"}}, {}};
  for (const json& event : story["events"]) {
    Result<double> at = wire::parse_time(event["time"].get<std::string>());
    table.add_row({at ? age_text(*at, now) : "-", or_dash(event["type"]), event["reason"], event["object"],
                   std::to_string(event["count"].get<int>()), event["message"]});
  }
  return out + indented(render_table(table, false, ""), 2);
}

}  // namespace tessera::cli
